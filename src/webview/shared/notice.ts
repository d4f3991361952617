/** The banner that says why a view cannot be used right now, with the button that fixes it (both apps). */
import { button, h, setHidden } from './dom';

export type NoticeAction = 'setKey' | 'openSettings' | 'refreshModels';

export interface Notice {
  message: string;
  action?: NoticeAction;
}

const ACTION_LABELS: Record<NoticeAction, string> = {
  setKey: 'Set API Key',
  openSettings: 'Open Settings',
  refreshModels: 'Refresh Models',
};

export class NoticeBanner {
  readonly el: HTMLElement;
  private key = '';

  constructor(private readonly run: (action: NoticeAction) => void) {
    this.el = h('div', { className: 'notice', attrs: { role: 'status' } });
    this.el.hidden = true;
  }

  update(notice: Notice | undefined): void {
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
      const fix = button(ACTION_LABELS[action], { className: 'btn' });
      fix.addEventListener('click', () => this.run(action));
      parts.push(fix);
    }
    this.el.replaceChildren(...parts);
  }
}
