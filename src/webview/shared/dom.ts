/** A tiny element builder: no templates, no innerHTML, listeners attached in code (the CSP forbids inline handlers). */

type Child = Node | string | null | undefined | false;

export interface ElementOptions {
  className?: string;
  text?: string;
  attrs?: Record<string, string>;
  dataset?: Record<string, string>;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: ElementOptions = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (options.className) el.className = options.className;
  if (options.text !== undefined) el.textContent = options.text;
  if (options.attrs) for (const [name, value] of Object.entries(options.attrs)) el.setAttribute(name, value);
  if (options.dataset) Object.assign(el.dataset, options.dataset);
  for (const child of children) if (child) el.append(child);
  return el;
}

/** A real <button type="button"> with a visible label and an optional longer accessible name. */
export function button(
  label: string,
  options: {
    className?: string;
    ariaLabel?: string;
    title?: string;
    act?: string;
    dataset?: Record<string, string>;
  } = {},
): HTMLButtonElement {
  const el = h('button', { className: options.className ?? 'btn', text: label, attrs: { type: 'button' } });
  if (options.ariaLabel) el.setAttribute('aria-label', options.ariaLabel);
  if (options.title ?? options.ariaLabel) el.title = options.title ?? options.ariaLabel ?? '';
  if (options.act) el.dataset.act = options.act;
  if (options.dataset) Object.assign(el.dataset, options.dataset);
  return el;
}

export function setHidden(el: HTMLElement, hidden: boolean): void {
  if (el.hidden !== hidden) el.hidden = hidden;
}

export function setText(el: HTMLElement, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/**
 * Where an element goes in a translated sentence, so each language puts it where its grammar
 * wants: `aroundSlot(l10n.t('Saved to {0}', SLOT), folderElement)`.
 */
export const SLOT = '\u0000';

/** The parts of `sentence` around its SLOT, with `node` in its place, ready to append. */
export function aroundSlot(sentence: string, node: Node): Array<string | Node> {
  const [before = '', after = ''] = sentence.split(SLOT);
  return [before, node, after].filter((part) => part !== '');
}
