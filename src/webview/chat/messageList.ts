/**
 * The scrolling list of messages: keeps one MessageView per message id across snapshots, follows
 * new content only while the user is at the bottom, and handles every click inside it with one
 * delegated listener (links become `openLink`, buttons are recognised by `data-act`).
 */
import * as l10n from '@vscode/l10n';
import type { WebviewMessage } from '../../shared/protocol';
import type { ChatStore } from './chatStore';
import { button, h, setHidden } from '../shared/dom';
import type { RenderOptions } from './markdown';
import { MessageView, sameHosts, type MessageContext } from './messageView';
import { SAFE_LINK } from './sanitizer';
import type { ChatChannel } from './chatChannel';

type Action = Extract<WebviewMessage, { type: 'action' }>['action'];
const ACTIONS: readonly Action[] = ['setKey', 'openSettings', 'refreshModels', 'retry', 'pickModel'];

/** Within this many pixels of the end counts as "at the bottom". */
const BOTTOM_SLACK = 24;

export class MessageList {
  /** The scroll container. */
  readonly el: HTMLElement;
  private readonly log: HTMLElement;
  private readonly olderButton: HTMLButtonElement;
  private readonly empty: HTMLElement;
  private readonly views = new Map<string, MessageView>();
  private readonly context: MessageContext;
  private stickToBottom: boolean;
  private conversationId: string | undefined;
  private firstSnapshot = true;

  constructor(
    private readonly store: ChatStore,
    private readonly channel: ChatChannel,
    /** Called when the user asks to pick another model (the model picker gets focus). */
    private readonly onPickModel: () => void = () => undefined,
    /** What an empty conversation shows (the chat's starter prompts), in place of the messages. */
    empty: HTMLElement = h('div', { className: 'empty' }),
  ) {
    this.context = {
      ui: channel.state,
      saveUi: () => channel.saveSoon(),
      post: (message) => channel.post(message),
      renderOptions: { remoteImageHosts: [] },
    };
    this.stickToBottom = channel.state.stickToBottom;
    this.olderButton = button(l10n.t('Load older messages'), { className: 'btn btn-secondary older', act: 'load-older' });
    this.empty = empty;
    // role=log is polite by default; a streaming answer carries aria-busy so it is read once complete.
    this.log = h('div', { className: 'log', attrs: { role: 'log', 'aria-live': 'polite', 'aria-label': l10n.t('Messages') } });
    this.el = h('main', { className: 'messages' }, this.olderButton, this.empty, this.log);
    this.el.addEventListener('scroll', () => this.onScroll(), { passive: true });
    // The render step scrolls to the end; sizes can still change in the frame's layout (off-screen
    // blocks use `content-visibility: auto` and get their real size once near the viewport), so
    // check again after layout, before paint. Layout is clean there: reading costs nothing.
    // The list itself shrinks when the composer grows (it wraps in a narrower view): observed too.
    const follow = new ResizeObserver(() => {
      if (this.stickToBottom && this.distanceFromBottom() > 1) this.scrollToBottom();
    });
    follow.observe(this.log);
    follow.observe(this.el);
    this.el.addEventListener('click', (event) => this.onClick(event));
    // Middle-click on a link would otherwise try to open it inside the webview.
    this.el.addEventListener('auxclick', (event) => {
      if ((event.target as Element).closest('a')) event.preventDefault();
    });
  }

  /** Brings the DOM up to date with the store's dirty flags (called once per animation frame). */
  render(): void {
    const store = this.store;
    const snapshot = store.snapshot;
    if (!snapshot) return;
    const stick = this.stickToBottom;
    let restoreTop: number | undefined;

    if (store.snapshotDirty) {
      const options: RenderOptions = { remoteImageHosts: snapshot.remoteImageHosts };
      if (!sameHosts(options.remoteImageHosts, this.context.renderOptions.remoteImageHosts)) {
        this.context.renderOptions = options;
        for (const view of this.views.values()) view.setRenderOptions(options);
      }
      setHidden(this.olderButton, !snapshot.hasOlder);
      if (this.firstSnapshot) {
        this.firstSnapshot = false;
        const ui = this.channel.state;
        if (ui.conversationId === snapshot.conversationId && !ui.stickToBottom && ui.scrollTop !== undefined) restoreTop = ui.scrollTop;
        else this.stickToBottom = true;
      } else if (snapshot.conversationId !== this.conversationId) {
        this.stickToBottom = true;
      }
      this.conversationId = snapshot.conversationId;
    }

    if (store.structureDirty) {
      this.reconcile();
    } else {
      for (const id of store.dirtyMessages) {
        const message = store.get(id);
        if (message) this.views.get(id)?.update(message);
      }
    }
    if (store.structureDirty || store.busyDirty) this.updateFlags();
    else if (store.dirtyMessages.size > 0) this.updateFlags(store.dirtyMessages);
    setHidden(this.empty, store.messages.length > 0);

    if (restoreTop !== undefined) {
      this.el.scrollTop = restoreTop;
    } else if (stick || this.stickToBottom) {
      this.scrollToBottom();
    }
  }

  private scrollToBottom(): void {
    this.el.scrollTop = this.el.scrollHeight;
  }

  private distanceFromBottom(): number {
    const el = this.el;
    return el.scrollHeight - el.scrollTop - el.clientHeight;
  }

  private reconcile(): void {
    const store = this.store;
    const seen = new Set<string>();
    let previous: Element | null = null;
    for (const message of store.messages) {
      seen.add(message.id);
      let view = this.views.get(message.id);
      if (view) {
        if (view.message !== message) view.update(message);
      } else {
        view = new MessageView(message, this.context);
        this.views.set(message.id, view);
      }
      // Move only what is out of place, so unchanged messages keep their nodes (and focus).
      const expected: Element | null = previous ? previous.nextElementSibling : this.log.firstElementChild;
      if (expected !== view.el) {
        if (previous) previous.after(view.el);
        else this.log.prepend(view.el);
      }
      previous = view.el;
    }
    for (const [id, view] of this.views) {
      if (!seen.has(id)) {
        view.el.remove();
        this.views.delete(id);
      }
    }
  }

  /** Which messages offer Edit / Regenerate; only `only` when just those messages changed. */
  private updateFlags(only?: ReadonlySet<string>): void {
    const messages = this.store.messages;
    let lastUser: string | undefined;
    let lastAssistant: string | undefined;
    for (let i = messages.length - 1; i >= 0 && (!lastUser || !lastAssistant); i--) {
      const m = messages[i];
      if (!m) continue;
      if (m.role === 'user') lastUser ??= m.id;
      else lastAssistant ??= m.id;
    }
    // Regenerate only makes sense for an answer that follows the last question.
    if (lastAssistant && messages[messages.length - 1]?.id !== lastAssistant) lastAssistant = undefined;
    const busy = this.store.busy;
    const views = only ? Array.from(only, (id) => this.views.get(id)) : this.views.values();
    for (const view of views) view?.setFlags({ isLastUser: view.id === lastUser, isLastAssistant: view.id === lastAssistant, busy });
  }

  private onScroll(): void {
    const el = this.el;
    this.stickToBottom = this.distanceFromBottom() <= BOTTOM_SLACK;
    const ui = this.channel.state;
    ui.scrollTop = el.scrollTop;
    ui.stickToBottom = this.stickToBottom;
    ui.conversationId = this.conversationId;
    this.channel.saveSoon();
  }

  private onClick(event: MouseEvent): void {
    const target = event.target as Element;
    const control = target.closest<HTMLElement>('[data-act]');
    if (control && this.el.contains(control)) {
      this.act(control);
      return;
    }
    const link = target.closest('a');
    if (link && this.el.contains(link)) {
      // Never navigate the webview; the host opens links after asking the user.
      event.preventDefault();
      const href = link.getAttribute('href');
      if (href && SAFE_LINK.test(href.trim())) this.channel.post({ type: 'openLink', url: link.href });
    }
  }

  private act(control: HTMLElement): void {
    const post = (message: WebviewMessage): void => this.channel.post(message);
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
        const message = messageId ? this.store.get(messageId) : undefined;
        if (message) post({ type: 'copy', text: message.text });
        break;
      }
      case 'edit':
        if (messageId) this.views.get(messageId)?.startEdit();
        break;
      case 'regenerate':
        if (messageId) post({ type: 'regenerate', messageId });
        break;
      case 'continue':
        if (messageId) post({ type: 'continue', messageId });
        break;
      case 'error-action': {
        const action = ACTIONS.find((a) => a === control.dataset.action);
        // Retry names the answer it re-runs; the host refuses it unless that is still the last one.
        if (action) post({ type: 'action', action, ...(action === 'retry' && messageId ? { messageId } : {}) });
        if (action === 'pickModel') this.onPickModel();
        break;
      }
      case 'load-older':
        post({ type: 'loadOlder' });
        break;
      case 'open-image':
        if (control.dataset.image) post({ type: 'openImage', id: control.dataset.image });
        break;
    }
  }
}
