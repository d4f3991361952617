/** The banner that says why a view cannot be used right now, with the button that fixes it (both apps). */
import * as l10n from '@vscode/l10n';
import { button, h, setHidden } from './dom';

export type NoticeAction = 'setKey' | 'openSettings' | 'refreshModels';

export interface Notice {
  message: string;
  action?: NoticeAction;
}

/** A function, not a constant: the translations are configured after the modules load. */
function actionLabel(action: NoticeAction): string {
  switch (action) {
    case 'setKey':
      return l10n.t('Set API Key');
    case 'openSettings':
      return l10n.t('Open Settings');
    case 'refreshModels':
      return l10n.t('Refresh Models');
  }
}

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
      const fix = button(actionLabel(action), { className: 'btn' });
      fix.addEventListener('click', () => this.run(action));
      parts.push(fix);
    }
    this.el.replaceChildren(...parts);
  }
}
