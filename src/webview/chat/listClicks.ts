/**
 * Every click inside the message list, handled by one delegated listener: links become `openLink`
 * (the webview never navigates), buttons are recognised by their `data-act`.
 */
import { VIEW_SETTINGS, type WebviewMessage } from '../../shared/protocol';
import type { ChatChannel } from './chatChannel';
import type { ChatStore } from './chatStore';
import type { MessageView } from './messageView';
import { SAFE_LINK } from './sanitizer';

type Action = Extract<WebviewMessage, { type: 'action' }>['action'];
const ACTIONS: readonly Action[] = ['setKey', 'openSettings', 'refreshModels', 'retry', 'pickModel'];

/** What a click may act on: the list's element, its messages and their views, and the way to the host. */
export interface ListParts {
  root: HTMLElement;
  store: ChatStore;
  channel: ChatChannel;
  views: ReadonlyMap<string, MessageView>;
  /** The user asked to pick another model (the model picker gets focus). */
  onPickModel(): void;
}

export function onListClick(event: MouseEvent, list: ListParts): void {
  const target = event.target as Element;
  const control = target.closest<HTMLElement>('[data-act]');
  if (control && list.root.contains(control)) {
    act(control, list);
    return;
  }
  const link = target.closest('a');
  if (link && list.root.contains(link)) {
    // Never navigate the webview; the host opens links after asking the user.
    event.preventDefault();
    const href = link.getAttribute('href');
    if (href && SAFE_LINK.test(href.trim())) list.channel.post({ type: 'openLink', url: link.href });
  }
}

function act(control: HTMLElement, list: ListParts): void {
  const post = (message: WebviewMessage): void => list.channel.post(message);
  const messageId = control.closest<HTMLElement>('.msg')?.dataset.id;
  switch (control.dataset.act) {
    case 'copy-code':
    case 'insert-code': {
      // markdown-it ends a fence's code with a newline; leave it off what is copied or inserted.
      const code = (control.closest('.code-block')?.querySelector('code')?.textContent ?? '').replace(/\n$/, '');
      post(control.dataset.act === 'copy-code' ? { type: 'copy', text: code } : { type: 'insertCode', code });
      break;
    }
    case 'allow-images':
      if (control.dataset.host) post({ type: 'allowRemoteImageHost', host: control.dataset.host });
      break;
    case 'copy-msg': {
      const message = messageId ? list.store.get(messageId) : undefined;
      if (message) post({ type: 'copy', text: message.text });
      break;
    }
    case 'edit':
      if (messageId) list.views.get(messageId)?.startEdit();
      break;
    case 'regenerate':
      if (messageId) list.channel.intent({ type: 'regenerate', messageId });
      break;
    case 'continue':
      if (messageId) list.channel.intent({ type: 'continue', messageId });
      break;
    case 'error-action': {
      const action = ACTIONS.find((a) => a === control.dataset.action);
      // Retry names the answer it re-runs; the host refuses it unless that is still the last one.
      // Retry and Pick a model act on this conversation and name it; the setup actions concern none.
      const named =
        (action === 'retry' || action === 'pickModel') && list.channel.conversation !== undefined
          ? { conversationId: list.channel.conversation }
          : {};
      if (action) post({ type: 'action', action, ...(action === 'retry' && messageId ? { messageId } : {}), ...named });
      if (action === 'pickModel') list.onPickModel();
      break;
    }
    case 'open-setting': {
      const id = VIEW_SETTINGS.find((s) => s === control.dataset.setting);
      if (id) post({ type: 'openSetting', id });
      break;
    }
    case 'load-older':
      list.channel.intent({ type: 'loadOlder' });
      break;
    case 'open-image':
      if (control.dataset.image) list.channel.intent({ type: 'openImage', id: control.dataset.image });
      break;
  }
}
