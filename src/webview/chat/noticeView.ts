/**
 * What the conversation says about itself, as quiet lines among its messages: a model change the
 * user did not make there (NoticeLines), and, while the conversation's own model cannot be used
 * with the key, the question which model to continue with (ModelGoneView). The host records the
 * answer as a notice; nothing here is ever sent to a model.
 */
import * as l10n from '@vscode/l10n';
import type { ChatMessageView, Snapshot } from '../../shared/protocol';
import { modelGoneText, noticeText } from '../../shared/notices';
import { button, h, setHidden, setText } from '../shared/dom';
import type { ChatChannel } from './chatChannel';

/** The notice messages of the list, one line each, kept by message id across snapshots. */
export class NoticeLines {
  private readonly lines = new Map<string, { el: HTMLElement; text: string }>();

  /** The line of `message` (a `notice`), made or brought up to date. */
  lineFor(message: ChatMessageView): HTMLElement {
    // A notice without a body this version knows still says something rather than nothing.
    const text = message.notice
      ? noticeText(message.notice)
      : message.text || l10n.t('The model of this conversation changed.');
    let line = this.lines.get(message.id);
    if (!line) {
      const el = h(
        'div',
        { className: 'msg-notice', dataset: { id: message.id }, attrs: { role: 'note' } },
        h('span', { className: 'msg-notice-text' }),
      );
      line = { el, text: '' };
      this.lines.set(message.id, line);
    }
    if (line.text !== text) {
      line.text = text;
      setText(line.el.firstElementChild as HTMLElement, text);
    }
    return line.el;
  }

  /** Forgets (and takes out of the page) the lines of notices no longer shown. */
  prune(shown: ReadonlySet<string>): void {
    for (const [id, line] of this.lines) {
      if (shown.has(id)) continue;
      line.el.remove();
      this.lines.delete(id);
    }
  }
}

/**
 * "gpt-x is not available with this API key. Continue with: [A] [B] [Pick another…]", at the end of
 * the conversation while its model is gone. Real buttons, so Tab reaches each of them.
 */
export class ModelGoneView {
  readonly el: HTMLElement;
  private readonly text: HTMLElement;
  private readonly choices: HTMLElement;
  private key = '';

  constructor(private readonly channel: ChatChannel) {
    this.text = h('span', { className: 'model-gone-text' });
    this.choices = h('div', {
      className: 'model-gone-choices',
      attrs: { role: 'group', 'aria-label': l10n.t('Continue with') },
    });
    this.el = h('div', { className: 'model-gone', attrs: { role: 'status' } }, this.text, this.choices);
    this.el.hidden = true;
    this.el.addEventListener('click', (event) => {
      const control = (event.target as Element).closest<HTMLElement>('button');
      if (!control || !this.el.contains(control)) return;
      const model = control.dataset.model;
      if (model) this.channel.intent({ type: 'selectModel', model });
      else
        this.channel.post({
          type: 'action',
          action: 'pickModel',
          ...(this.channel.conversation !== undefined ? { conversationId: this.channel.conversation } : {}),
        });
    });
  }

  update(gone: Snapshot['modelGone']): void {
    const key = JSON.stringify(gone ?? null);
    if (key === this.key) return;
    this.key = key;
    setHidden(this.el, !gone);
    if (!gone) {
      this.choices.replaceChildren();
      return;
    }
    setText(this.text, `${modelGoneText(gone.model, gone.keyChanged)} ${l10n.t('Continue with:')}`);
    this.choices.replaceChildren(
      ...gone.choices.map((id) =>
        button(id, {
          className: 'btn btn-secondary',
          ariaLabel: l10n.t('Continue with {0}', id),
          dataset: { model: id },
        }),
      ),
      button(l10n.t('Pick another…'), {
        className: 'btn btn-secondary',
        ariaLabel: l10n.t('Pick another model to continue with'),
      }),
    );
  }
}
