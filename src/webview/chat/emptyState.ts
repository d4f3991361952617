/**
 * What an empty conversation shows: how to send, what the chosen model can do (images, web search,
 * thinking) and a few starter prompts. A starter only fills the message box; the user finishes it
 * (or attaches what it is about) and sends it.
 */
import * as l10n from '@vscode/l10n';
import type { ChatModelView } from '../../shared/protocol';
import { h, setHidden, setText } from '../shared/dom';
import { capabilities } from './modelPicker';

/** At most this many starters, so they fit a narrow side bar without pushing the rest away. */
const MAX_STARTERS = 4;

function starters(model: ChatModelView | undefined): string[] {
  const out: string[] = [];
  if (model?.imageInput) out.push(l10n.t('Describe this image and read out any text in it:'));
  if (model?.searchable) out.push(l10n.t('Search the web for the latest news about'));
  out.push(
    l10n.t('Explain this code step by step:'),
    l10n.t('Write unit tests for this function:'),
    l10n.t('Find bugs in this code and suggest fixes:'),
  );
  return out.slice(0, MAX_STARTERS);
}

export class EmptyState {
  readonly el: HTMLElement;
  private readonly body = h('div');
  private readonly can = h('p', { className: 'empty-can' });
  private readonly list = h('div', {
    className: 'starters',
    attrs: { role: 'group', 'aria-label': l10n.t('Starter prompts') },
  });
  private key: string | undefined;

  constructor(private readonly onPick: (prompt: string) => void) {
    // The list shows or hides `el` by whether there are messages; `body` is this state's own.
    this.el = h('div', { className: 'empty' }, this.body);
    this.body.append(
      h('p', { className: 'empty-lead', text: l10n.t('Ask anything. Enter sends, Shift+Enter adds a line.') }),
      this.can,
      this.list,
    );
  }

  /**
   * `usable`: the chat can be used (a key, models…). When it cannot, the notice beside Send says
   * why, and no invitation to pick a model or try a prompt is shown that could not be followed.
   */
  update(model: ChatModelView | undefined, usable = true): void {
    const key = JSON.stringify([model ?? null, usable]);
    if (key === this.key) return;
    this.key = key;
    setHidden(this.body, !usable);
    if (!usable) {
      // Nothing that could not be followed stays behind, hidden or not (a screen reader's list of buttons included).
      this.list.replaceChildren();
      return;
    }
    const can = model ? capabilities(model) : [];
    setText(
      this.can,
      !model
        ? l10n.t('Choose a model below to start.')
        : can.length
          ? l10n.t('{0}: {1}.', model.id, can.join(' · '))
          : l10n.t('{0}: text only (no images, web search or thinking control).', model.id),
    );
    this.list.replaceChildren(
      ...starters(model).map((prompt) => {
        const starter = h('button', {
          className: 'starter',
          text: prompt,
          attrs: { type: 'button', title: l10n.t('Put this in the message box (it is not sent yet)') },
        });
        // The caret goes after a space where the language puts one between words (not after "：").
        starter.addEventListener('click', () => this.onPick(/[\x21-\x7e]$/.test(prompt) ? `${prompt} ` : prompt));
        return starter;
      }),
    );
  }
}
