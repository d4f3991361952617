/**
 * Wires the parts together: host messages update the store as they arrive, and the DOM follows at
 * most once per animation frame, however many deltas came in between.
 */
import * as l10n from '@vscode/l10n';
import type { HostMessage } from '../../shared/protocol';
import { ChatStore } from './chatStore';
import { Composer } from './composer';
import { h } from '../shared/dom';
import { Header } from './header';
import { warmGrammars } from './highlight';
import { MessageList } from './messageList';
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
  private readonly header: Header;
  private readonly notice: NoticeBanner;
  private readonly list: MessageList;
  private readonly composer: Composer;
  private readonly loading = h('div', { className: 'loading', text: l10n.t('Loading…') });
  private frame: number | undefined;
  private snapshotRequestedAt = 0;

  constructor(
    root: HTMLElement,
    private readonly channel: ChatChannel,
  ) {
    this.header = new Header(channel);
    this.notice = new NoticeBanner((action) => channel.post({ type: 'action', action }));
    this.list = new MessageList(this.store, channel, () => this.header.focusModel());
    this.composer = new Composer(channel, () => this.store.messages.filter((m) => m.role === 'user').map((m) => m.text));
    this.header.el.hidden = true;
    root.replaceChildren(this.header.el, this.notice.el, this.loading, this.list.el, this.composer.el);
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && !event.defaultPrevented && !(event.target instanceof HTMLSelectElement) && this.composer.stop()) event.preventDefault();
    });
    window.addEventListener('pagehide', () => channel.saveNow());
    warmGrammars();
  }

  receive(message: HostMessage): void {
    const store = this.store;
    switch (message.type) {
      case 'snapshot':
        store.applySnapshot(message.state);
        break;
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
      this.header.el.hidden = false;
      this.header.update(snapshot);
      this.notice.update(snapshot.notice);
      this.composer.updateModel(
        snapshot.models.find((m) => m.id === snapshot.model),
        snapshot.imageMaxBytes,
      );
      this.composer.updateAttachments(snapshot.attachments);
      this.composer.setBlocked(snapshot.modelGone ? modelGoneSendNote(snapshot.modelGone.model) : undefined);
    }
    if (store.busyDirty) this.composer.setBusy(store.busy);
    this.list.render();
    store.clearDirty();
    // A User Timing entry per render (a web standard: the browser's profiler and the tests read it).
    performance.measure(RENDER_MEASURE, { start: started });
    performance.clearMeasures(RENDER_MEASURE);
  }
}
