/**
 * Labelled form controls whose values survive a hidden or reloaded panel (kept in the webview's
 * state under their name), and a select whose options follow the host's model lists without
 * losing what the user picked.
 */
import { h } from '../shared/dom';
import type { MediaChannel } from './channel';

let nextId = 0;

export function fieldId(): string {
  return `f-${++nextId}`;
}

/** `<label>` + control in a `.field` wrapper. */
export function field(label: string, control: HTMLElement, hint?: HTMLElement): HTMLElement {
  control.id ||= fieldId();
  return h('div', { className: 'field' }, h('label', { text: label, attrs: { for: control.id } }), control, hint);
}

/** Binds a control to the drafts: restores the saved value now and saves every change. */
export function persist(
  channel: MediaChannel,
  name: string,
  control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement,
  onChange?: () => void,
): void {
  const saved = channel.state.fields[name];
  if (saved !== undefined) {
    if (control instanceof HTMLInputElement && control.type === 'checkbox') control.checked = saved === 'true';
    else control.value = saved;
  }
  const save = () => {
    channel.state.fields[name] =
      control instanceof HTMLInputElement && control.type === 'checkbox' ? String(control.checked) : control.value;
    channel.saveSoon();
    onChange?.();
  };
  control.addEventListener(
    control instanceof HTMLSelectElement || (control instanceof HTMLInputElement && control.type === 'checkbox')
      ? 'change'
      : 'input',
    save,
  );
}

/**
 * Fills a select with models, keeping the user's choice (from the drafts) when it is still there,
 * else the host's default. Rebuilds the options only when the list changed.
 */
export function fillModels(
  select: HTMLSelectElement,
  models: Array<{ id: string; provider: string }>,
  preferred: string | undefined,
  fallback: string | undefined,
  empty: string,
): void {
  const key = JSON.stringify(models);
  if (select.dataset.key === key) return;
  select.dataset.key = key;
  const ids = models.map((m) => m.id);
  if (models.length === 0) {
    select.replaceChildren(h('option', { text: empty, attrs: { value: '' } }));
  } else {
    const groups = new Map<string, HTMLOptGroupElement>();
    const options: Node[] = [];
    for (const m of models) {
      let group = groups.get(m.provider);
      if (!group) {
        group = h('optgroup', { attrs: { label: m.provider } });
        groups.set(m.provider, group);
        options.push(group);
      }
      group.append(h('option', { text: m.id, attrs: { value: m.id } }));
    }
    select.replaceChildren(...options);
    const pick = [preferred, fallback].find((id) => id && ids.includes(id)) ?? ids[0];
    if (pick) select.value = pick;
  }
  select.disabled = models.length === 0;
}

/** A `<datalist>` with the given values, re-filled only when they change. */
export function fillList(list: HTMLDataListElement, values: string[]): void {
  const key = values.join('\n');
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  list.replaceChildren(...values.map((v) => h('option', { attrs: { value: v } })));
}
