/**
 * Wires the parts together: host messages update the store as they arrive, and the DOM follows at
 * most once per animation frame, however many deltas came in between.
 */
import * as l10n from '@vscode/l10n';
import type { ChatMessageView, HostMessage } from '../../shared/protocol';
import { ChatStore } from './chatStore';
import { Composer } from './composer';
import { h } from '../shared/dom';
import { EmptyState } from './emptyState';
import { warmWorker } from './highlight';
import { warmMarkdown } from './markdown';
import { MessageList } from './messageList';
import { RemoteImages } from './remoteImages';
import { NoticeBanner } from '../shared/notice';
import { modelGoneSendNote } from '../../shared/notices';
import type { ChatChannel } from './chatChannel';

/** Render timings, collected only when a test page installs `window.__chatPerf`. */
/** Ask again for a snapshot if none came this long after the first request. */
const SNAPSHOT_RETRY_MS = 3000;

/** The name of the User Timing measure each render records. */
const RENDER_MEASURE = 'chat-render';

export class ChatApp {
  private readonly store = new ChatStore();
  private readonly emptyState: EmptyState;
  private readonly notice: NoticeBanner;
  private readonly list: MessageList;
  private readonly composer: Composer;
  private readonly remoteImages: RemoteImages;
  private readonly loading = h('div', { className: 'loading', text: l10n.t('Loading…') });
  private frame: number | undefined;
  private snapshotRequestedAt = 0;

  constructor(
    root: HTMLElement,
    private readonly channel: ChatChannel,
  ) {
    this.notice = new NoticeBanner((action) => channel.post({ type: 'action', action }));
    this.composer = new Composer(
      channel,
      () => this.store.messages.filter((m) => m.role === 'user').map((m) => m.text),
      this.notice.el,
    );
    this.emptyState = new EmptyState((prompt) => this.composer.fill(prompt));
    this.list = new MessageList(this.store, channel, () => this.composer.focusModel(), this.emptyState.el);
    this.remoteImages = new RemoteImages(this.list.el, (url) => channel.intent({ type: 'loadRemoteImage', url }));
    this.composer.el.hidden = true;
    root.replaceChildren(this.loading, this.list.el, this.composer.el);
    document.addEventListener('keydown', (event) => {
      if (
        event.key === 'Escape' &&
        !event.defaultPrevented &&
        !(event.target instanceof HTMLSelectElement) &&
        this.composer.stop()
      )
        event.preventDefault();
    });
    window.addEventListener('pagehide', () => channel.saveNow());
    warmWorker();
    // After this task, which posts `ready`: while the host makes the first snapshot.
    setTimeout(warmMarkdown);
  }

  /** The message with this id that the view holds, if any. */
  held(id: string): ChatMessageView | undefined {
    return this.store.get(id);
  }

  receive(message: HostMessage): void {
    const store = this.store;
    switch (message.type) {
      case 'snapshot': {
        const first = store.snapshot === undefined;
        this.channel.conversation = message.state.key;
        // Which conversation the page shows, for whoever reads the page (the UI tests wait on it).
        document.documentElement.dataset.conversation = message.state.key;
        store.applySnapshot(message.state);
        if (first)
          this.composer.restorePending(message.state.messages.filter((m) => m.role === 'user').map((m) => m.text));
        break;
      }
      case 'append': {
        const result = store.applyAppend(message);
        const now = Date.now();
        if (result === 'mismatch' || (result === 'ignored' && now - this.snapshotRequestedAt > SNAPSHOT_RETRY_MS)) {
          this.snapshotRequestedAt = now;
          this.channel.post({ type: 'needSnapshot' });
        }
        break;
      }
      case 'message':
        store.applyMessage(message);
        break;
      case 'busy':
        store.applyBusy(message);
        break;
      case 'focusInput':
        this.composer.focus();
        return;
      case 'sendResult':
        this.composer.settle(message.sendId, message.accepted);
        return;
      case 'queued':
        this.list.queued(message.messageId);
        return;
      case 'putBack':
        this.composer.putBack(message.text);
        return;
      case 'remoteImage':
        this.remoteImages.receive(message);
        return;
    }
    if (store.dirty) this.schedule();
  }

  private schedule(): void {
    this.frame ??= requestAnimationFrame(() => {
      this.frame = undefined;
      this.render();
    });
  }

  private render(): void {
    const started = performance.now();
    const store = this.store;
    const snapshot = store.snapshot;
    if (snapshot && store.snapshotDirty) {
      this.loading.remove();
      this.composer.el.hidden = false;
      const model = snapshot.models.find((m) => m.id === snapshot.model);
      this.notice.update(snapshot.notice);
      this.composer.updatePicker(snapshot);
      this.composer.updateModel(model, snapshot.imageMaxBytes);
      // While the chat cannot be used (no key, no models…) the notice beside Send says why and Send waits.
      const setup = snapshot.notice;
      this.emptyState.update(model, setup === undefined);
      this.composer.updateAttachments(snapshot.attachments);
      if (setup) this.composer.setBlocked(setup.message, true);
      else this.composer.setBlocked(snapshot.modelGone ? modelGoneSendNote(snapshot.modelGone.model) : undefined);
    }
    if (store.busyDirty) this.composer.setBusy(store.busy);
    this.list.render();
    store.clearDirty();
    // A User Timing entry per render (a web standard: the browser's profiler and the tests read it).
    performance.measure(RENDER_MEASURE, { start: started });
    performance.clearMeasures(RENDER_MEASURE);
  }
}
