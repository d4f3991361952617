/**
 * What the next message goes to, in the composer's bottom bar (where VS Code's own chat keeps its
 * model picker): the chat models grouped by provider, the protocol (a chooser only for a model that
 * speaks more than one, otherwise its name, once), the thinking control and the web-search toggle.
 * Native <select>s and real buttons, so the keyboard and screen readers work as usual; every change
 * is posted as an intent and the host answers with a new snapshot.
 */
import * as l10n from '@vscode/l10n';
import type { ChatModelView, Snapshot } from '../../shared/protocol';
import type { WireProtocol } from '../../shared/protocolNames';
import { h, setHidden, setText } from '../shared/dom';
import { PROTOCOL_LABELS } from '../../shared/protocolNames';
import type { ChatChannel } from './chatChannel';
import { iconButton } from './icons';
import { ThinkingControl } from './thinkingControl';

let nextId = 0;

function labelled<T extends HTMLElement>(text: string, control: T): [HTMLLabelElement, T] {
  control.id ||= `ctl-${++nextId}`;
  return [h('label', { className: 'sr-only', text, attrs: { for: control.id } }), control];
}

export function activeProtocol(model: ChatModelView, override: WireProtocol | undefined): WireProtocol | undefined {
  return override && model.protocols.includes(override) ? override : model.protocols[0];
}

/** What a model can do beyond text, in a few words each (the option's tooltip, the empty chat's line). */
export function capabilities(model: ChatModelView): string[] {
  const out: string[] = [];
  if (model.imageInput) out.push(l10n.t('takes images'));
  if (model.searchable) out.push(l10n.t('can search the web'));
  if (model.thinking?.always) out.push(l10n.t('always thinks'));
  else if (model.thinking) out.push(l10n.t('thinking can be set'));
  return out;
}

export class ModelPicker {
  /** The controls, in the order they sit in the bar. */
  readonly controls: HTMLElement[];
  private readonly model = h('select', { className: 'select model-select' });
  private readonly protocol = h('select', { className: 'select protocol-select' });
  /** The protocol of a model that speaks only one: its name, no chooser. */
  private readonly protocolName = h('span', { className: 'protocol-name' });
  private readonly search: HTMLButtonElement;
  private readonly thinking: ThinkingControl;
  private modelsKey = '';
  private protocolKey = '';
  private snapshot: Snapshot | undefined;

  constructor(private readonly channel: ChatChannel) {
    this.thinking = new ThinkingControl(channel);
    this.search = iconButton('globe', { label: l10n.t('Web search'), className: 'search-toggle', pressed: false });
    this.protocol.title = l10n.t('The protocol this conversation uses with the model (the first is its default)');
    this.controls = [
      ...labelled(l10n.t('Model'), this.model),
      ...labelled(l10n.t('Protocol'), this.protocol),
      this.protocolName,
      this.thinking.el,
      this.search,
    ];

    this.model.addEventListener('change', () => {
      if (this.model.value) channel.intent({ type: 'selectModel', model: this.model.value });
    });
    this.protocol.addEventListener('change', () => {
      const protocols = this.selectedModel()?.protocols ?? [];
      const chosen = protocols.find((p) => p === this.protocol.value);
      // The model's first protocol is what it uses without a choice: picking it clears the override.
      channel.intent(
        chosen && chosen !== protocols[0] ? { type: 'setProtocol', protocol: chosen } : { type: 'setProtocol' },
      );
    });
    this.search.addEventListener('click', () => {
      const on = this.search.getAttribute('aria-pressed') !== 'true';
      this.search.setAttribute('aria-pressed', String(on));
      channel.intent({ type: 'setSearch', enabled: on });
    });
  }

  /** Focus the model picker (the "Pick another model" error action does this too, host-side). */
  focus(): void {
    this.model.focus();
  }

  update(snapshot: Snapshot): void {
    this.snapshot = snapshot;
    this.updateModels(snapshot);
    const model = this.selectedModel();
    this.updateProtocols(model, snapshot.protocolOverride);
    // Shown only where the model can search over the protocol in use; each protocol has its own form.
    setHidden(this.search, !model?.searchable);
    const active = model ? activeProtocol(model, snapshot.protocolOverride) : undefined;
    this.search.title =
      active === 'responses'
        ? l10n.t(
            'Let the model search the web (the Responses web_search tool); its sources are listed under the answer',
          )
        : l10n.t('Let the model search the web (for Alibaba Bailian models such as Qwen)');
    this.search.setAttribute('aria-pressed', String(snapshot.enableSearch));
    this.thinking.update(model, snapshot.thinking);
  }

  private selectedModel(): ChatModelView | undefined {
    const snapshot = this.snapshot;
    return snapshot?.models.find((m) => m.id === snapshot.model);
  }

  private updateModels(snapshot: Snapshot): void {
    const key = JSON.stringify([snapshot.model, snapshot.models]);
    if (key === this.modelsKey) return;
    this.modelsKey = key;
    const groups = new Map<string, ChatModelView[]>();
    for (const model of snapshot.models) {
      const list = groups.get(model.provider) ?? [];
      list.push(model);
      groups.set(model.provider, list);
    }
    const children: HTMLElement[] = [];
    if (!snapshot.model || !snapshot.models.some((m) => m.id === snapshot.model)) {
      const text = snapshot.model
        ? l10n.t('{0} (not available)', snapshot.model)
        : snapshot.models.length
          ? l10n.t('Choose a model')
          : l10n.t('No chat models');
      children.push(h('option', { text, attrs: { value: snapshot.model ?? '', disabled: '' } }));
    }
    for (const [provider, models] of groups) {
      children.push(
        h(
          'optgroup',
          { attrs: { label: provider || l10n.t('Other') } },
          // The id alone keeps the closed picker narrow; the tooltip says what the model speaks and can do.
          ...models.map((m) =>
            h('option', {
              text: m.id,
              attrs: {
                value: m.id,
                title: [`${m.id}: ${m.protocols.map((p) => PROTOCOL_LABELS[p]).join(', ')}`, ...capabilities(m)].join(
                  ' · ',
                ),
              },
            }),
          ),
        ),
      );
    }
    this.model.replaceChildren(...children);
    this.model.value = snapshot.model ?? '';
    this.model.disabled = snapshot.models.length === 0;
    const chosen = snapshot.models.find((m) => m.id === snapshot.model);
    this.model.title = chosen
      ? l10n.t('Model: {0} ({1})', chosen.id, chosen.provider || l10n.t('Other'))
      : l10n.t('Model');
  }

  private updateProtocols(model: ChatModelView | undefined, override: WireProtocol | undefined): void {
    const protocols = model?.protocols ?? [];
    const active = model ? activeProtocol(model, override) : undefined;
    const key = JSON.stringify([protocols, active]);
    if (key !== this.protocolKey) {
      this.protocolKey = key;
      this.protocol.replaceChildren(
        ...protocols.map((p) => h('option', { text: PROTOCOL_LABELS[p], attrs: { value: p } })),
      );
      this.protocol.value = active ?? '';
    }
    setHidden(this.protocol, protocols.length < 2);
    const only = protocols.length === 1 ? protocols[0] : undefined;
    setText(this.protocolName, only ? PROTOCOL_LABELS[only] : '');
    this.protocolName.title = only
      ? l10n.t('Protocol: {0} (the only one this model speaks)', PROTOCOL_LABELS[only])
      : '';
    setHidden(this.protocolName, !only);
  }
}
