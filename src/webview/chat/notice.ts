/** The banner that says why chat cannot be used right now, with the button that fixes it. */
import type { Snapshot } from '../../shared/protocol';
import { button, h, setHidden } from './dom';
import { NOTICE_ACTION_LABELS } from './labels';
import type { ChatChannel } from './chatChannel';

export class NoticeBanner {
  readonly el: HTMLElement;
  private key = '';

  constructor(private readonly channel: ChatChannel) {
    this.el = h('div', { className: 'notice', attrs: { role: 'status' } });
    this.el.hidden = true;
  }

  update(notice: Snapshot['notice']): void {
    const key = JSON.stringify(notice ?? null);
    if (key === this.key) return;
    this.key = key;
    setHidden(this.el, !notice);
    if (!notice) {
      this.el.replaceChildren();
      return;
    }
    const parts: Node[] = [h('span', { className: 'notice-text', text: notice.message })];
    const action = notice.action;
    if (action) {
      const fix = button(NOTICE_ACTION_LABELS[action], { className: 'btn' });
      fix.addEventListener('click', () => this.channel.post({ type: 'action', action }));
      parts.push(fix);
    }
    this.el.replaceChildren(...parts);
  }
}
