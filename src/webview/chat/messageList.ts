/**
 * The scrolling list of messages: keeps one MessageView per message id across snapshots, follows
 * new content only while the user is at the bottom, and hands every click inside it to one
 * delegated listener (listClicks.ts).
 */
import * as l10n from '@vscode/l10n';
import type { ChatMessageView } from '../../shared/protocol';
import type { ChatStore } from './chatStore';
import { button, h, setHidden, setText } from '../shared/dom';
import type { RenderOptions } from './markdown';
import { MessageView, sameHosts, type MessageContext } from './messageView';
import type { ChatChannel } from './chatChannel';
import { ModelGoneView, NoticeLines } from './noticeView';
import { MessageGroups } from './messageGroups';
import { onListClick } from './listClicks';

/** Within this many pixels of the end counts as "at the bottom". */
const BOTTOM_SLACK = 24;
/** A scroll event this soon after the reader's wheel, key, touch or pointer on the list is theirs. */
const READER_SCROLL_MS = 250;

/**
 * A conversation opens with only its last messages rendered; older ones (already in the store, or
 * asked of the host) are rendered as the reader scrolls up, so opening a long conversation costs
 * the same as a short one and no frame renders hundreds of messages.
 */
const FIRST_RENDER = 20;
/**
 * Of those, a newly opened conversation renders its newest first and stops after this long (at
 * least one): the rest follow in the next frames, above what is on screen, while the reader is near
 * the top (a slow machine would otherwise spend one long task on messages far above the viewport).
 */
const FIRST_BUDGET_MS = 8;
/** Older messages are rendered while the reader is within this many viewport heights of the top. */
const REVEAL_MARGIN = 1.5;
/**
 * A frame that renders older messages adds about as many as fit in this long, the layout of what it
 * added included (laying out a new message costs more than rendering it); at least one each frame.
 */
const REVEAL_BUDGET_MS = 8;

export class MessageList {
  /** The scroll container. */
  readonly el: HTMLElement;
  private readonly log: HTMLElement;
  /** The list's elements, in groups that leave the page while far off screen (messageGroups.ts). */
  private readonly groups: MessageGroups;
  private readonly olderButton: HTMLButtonElement;
  private readonly empty: HTMLElement;
  private readonly views = new Map<string, MessageView>();
  /** Notices (a model change) are lines of their own, not messages (noticeView.ts). */
  private readonly notices = new NoticeLines();
  private readonly modelGone: ModelGoneView;
  private readonly context: MessageContext;
  private stickToBottom: boolean;
  private conversationId: string | undefined;
  private firstSnapshot = true;
  /** How many messages at the start of the store's list are not rendered (yet). */
  private hidden = 0;
  /** The oldest rendered message: a new snapshot keeps it the oldest rendered. */
  private oldestShown: string | undefined;
  /** Frame that renders older messages, when one is scheduled. */
  private revealFrame: number | undefined;
  /** `loadOlder` was posted for the current snapshot (the next snapshot answers it). */
  private olderAsked = false;
  /** The scroller's sizes at the last scroll event: a change tells a layout's scroll from a reader's. */
  private scrolledSize = { content: 0, view: 0 };
  /** When the reader last used the wheel, a key, a touch or the scroll bar on the list. */
  private readerScrolledAt = Number.NEGATIVE_INFINITY;
  /** What rendering one older message and laying it out took lately (revealOlder measures it). */
  private msPerMessage = 4;

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
      intent: (body) => channel.intent(body),
      renderOptions: { remoteImageHosts: [] },
    };
    this.stickToBottom = channel.state.stickToBottom;
    this.olderButton = button(l10n.t('Load older messages'), {
      className: 'btn btn-secondary older',
      act: 'load-older',
    });
    this.empty = empty;
    // role=log is polite by default; a streaming answer carries aria-busy so it is read once complete.
    this.log = h('div', {
      className: 'log',
      attrs: { role: 'log', 'aria-live': 'polite', 'aria-label': l10n.t('Messages') },
    });
    this.modelGone = new ModelGoneView(channel);
    this.el = h('main', { className: 'messages' }, this.olderButton, this.empty, this.log, this.modelGone.el);
    this.groups = new MessageGroups(this.log, this.el);
    this.el.addEventListener('scroll', () => this.onScroll(), { passive: true });
    for (const type of ['wheel', 'keydown', 'pointerdown', 'touchstart'] as const) {
      this.el.addEventListener(type, () => (this.readerScrolledAt = performance.now()), { passive: true });
    }
    // The render step scrolls to the end; sizes can still change in the frame's layout (off-screen
    // blocks use `content-visibility: auto` and get their real size once near the viewport, groups
    // of messages come back into the page), so check again after layout, before paint. Layout is clean there: reading costs nothing.
    // The list itself shrinks when the composer grows (it wraps in a narrower view): observed too.
    const follow = new ResizeObserver(() => {
      if (this.stickToBottom && this.distanceFromBottom() > 1) this.scrollToBottom();
    });
    follow.observe(this.log);
    follow.observe(this.el);
    this.el.addEventListener('click', (event) =>
      onListClick(event, { root: this.el, store, channel, views: this.views, onPickModel }),
    );
    // Middle-click on a link would otherwise try to open it inside the webview.
    this.el.addEventListener('auxclick', (event) => {
      if ((event.target as Element).closest('a')) event.preventDefault();
    });
  }

  /** Brings the DOM up to date with the store's dirty flags (called once per animation frame). */
  /** An answer whose request waits for a free slot of the key says so where it says it waits (until its text comes). */
  queued(messageId: string): void {
    const waiting = this.views.get(messageId)?.el.querySelector<HTMLElement>('.waiting');
    if (waiting) setText(waiting, l10n.t('Waiting for a free slot (the key’s concurrency limit)…'));
  }

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
      this.modelGone.update(snapshot.modelGone);
      this.olderAsked = false;
      let firstRender = FIRST_RENDER;
      let sameConversation = snapshot.conversationId === this.conversationId;
      if (this.firstSnapshot) {
        this.firstSnapshot = false;
        sameConversation = false;
        const ui = this.channel.state;
        if (ui.conversationId === snapshot.conversationId && !ui.stickToBottom && ui.scrollTop !== undefined) {
          restoreTop = ui.scrollTop;
          // As many as were rendered when the position was saved, so that it points at the same place.
          firstRender = Math.max(FIRST_RENDER, ui.rendered ?? 0);
        } else this.stickToBottom = true;
      } else if (!sameConversation) {
        this.stickToBottom = true;
      }
      this.conversationId = snapshot.conversationId;
      this.hidden = this.hiddenFor(sameConversation, firstRender);
      if (!sameConversation && restoreTop === undefined) this.hidden = this.renderNewest(this.hidden);
    }

    // Off the bottom, a new snapshot must not move what the reader looks at (the older-messages
    // button above the list may hide, messages may come or go above).
    const anchor = store.structureDirty && !stick && restoreTop === undefined ? this.topAnchor() : undefined;
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

    // Near the top, the older messages a snapshot brought are rendered above at once: the button
    // above the list then hides without pulling the content up (at the top it could not be undone).
    if (anchor && this.hidden > 0 && this.nearTop()) this.renderOlder();
    setHidden(this.olderButton, !(snapshot.hasOlder && this.hidden === 0));

    if (anchor?.el.isConnected) {
      this.restoreAnchor(anchor);
    } else if (restoreTop !== undefined) {
      this.el.scrollTop = restoreTop;
    } else if (stick || this.stickToBottom) {
      this.scrollToBottom();
    }
    this.revealSoon();
  }

  /**
   * How many of the store's messages stay unrendered after a snapshot: in the same conversation
   * the oldest rendered message stays the oldest rendered (older ones the host added wait for the
   * reader to scroll up; nothing on screen moves); otherwise the last `firstRender` are rendered.
   */
  private hiddenFor(sameConversation: boolean, firstRender: number): number {
    const messages = this.store.messages;
    if (sameConversation && this.oldestShown !== undefined) {
      const at = messages.findIndex((m) => m.id === this.oldestShown);
      if (at >= 0) return at;
    }
    // The same conversation without its oldest rendered message (it was removed): keep as many rendered.
    const keep = sameConversation ? Math.max(firstRender, this.views.size) : firstRender;
    return Math.max(0, messages.length - keep);
  }

  /**
   * Renders the views of the messages from `hidden` on, newest first, for up to FIRST_BUDGET_MS (at
   * least one); returns how many stay unrendered (reconcile puts the views in place).
   */
  private renderNewest(hidden: number): number {
    const messages = this.store.messages;
    const started = performance.now();
    let first = messages.length;
    while (first > hidden && (first === messages.length || performance.now() - started < FIRST_BUDGET_MS)) {
      first--;
      this.elementFor(messages[first] as ChatMessageView);
    }
    return first;
  }

  /** Schedules rendering older messages when the reader is near the top of what is rendered. */
  private revealSoon(): void {
    if (this.revealFrame !== undefined || !this.nearTop()) return;
    if (this.hidden > 0) {
      this.revealFrame = requestAnimationFrame(() => {
        this.revealFrame = undefined;
        this.revealOlder();
      });
    } else if (this.store.snapshot?.hasOlder && !this.olderAsked) {
      // Everything the view holds is rendered: ask the host for older messages (a snapshot answers).
      this.olderAsked = true;
      this.channel.intent({ type: 'loadOlder' });
    }
  }

  /**
   * The first rendered message in the page and where it is on screen. Groups above it that left the
   * page keep their height, so keeping it in place keeps what the reader sees in place.
   */
  private topAnchor(): { el: Element; top: number } | undefined {
    const el = this.groups.firstInPage();
    return el ? { el, top: el.getBoundingClientRect().top } : undefined;
  }

  /** Scrolls so that the anchor is where it was on screen (the browser's own anchoring does not act at the very top). */
  private restoreAnchor(anchor: { el: Element; top: number }): void {
    const moved = anchor.el.getBoundingClientRect().top - anchor.top;
    if (moved) this.el.scrollTop += moved;
  }

  private nearTop(): boolean {
    return this.el.scrollTop < this.el.clientHeight * REVEAL_MARGIN;
  }

  /**
   * Renders older messages above the oldest rendered one for up to REVEAL_BUDGET_MS, and keeps the
   * message the reader looks at where it was on screen (at the very top the browser's scroll
   * anchoring does not apply, so the position is set here).
   */
  private revealOlder(): void {
    if (this.hidden <= 0 || !this.store.snapshot) return;
    const anchor = this.topAnchor();
    const started = performance.now();
    const added = this.renderOlder();
    setHidden(this.olderButton, !(this.store.snapshot.hasOlder && this.hidden === 0));
    if (anchor) {
      // Measuring the anchor again lays out what was added: the cost per message includes it.
      this.restoreAnchor(anchor);
      this.msPerMessage = (this.msPerMessage + (performance.now() - started) / added) / 2;
    }
    this.saveScroll();
    this.revealSoon();
  }

  /**
   * Renders older messages above the oldest rendered one: as many as REVEAL_BUDGET_MS allows by the
   * recent cost per message, and no longer than that (at least one). Returns how many.
   */
  private renderOlder(): number {
    const messages = this.store.messages;
    const started = performance.now();
    const added = new Set<string>();
    const elements: HTMLElement[] = [];
    const most = Math.max(1, Math.floor(REVEAL_BUDGET_MS / this.msPerMessage));
    while (
      this.hidden > 0 &&
      (added.size === 0 || (added.size < most && performance.now() - started < REVEAL_BUDGET_MS))
    ) {
      const message = messages[this.hidden - 1];
      if (!message) break;
      this.hidden--;
      elements.push(this.elementFor(message));
      added.add(message.id);
    }
    this.groups.prepend(elements.reverse());
    sizedOnce(elements);
    this.oldestShown = messages[this.hidden]?.id;
    this.updateFlags(added);
    return Math.max(1, added.size);
  }

  private scrollToBottom(): void {
    this.el.scrollTop = this.el.scrollHeight;
  }

  private distanceFromBottom(): number {
    const el = this.el;
    return el.scrollHeight - el.scrollTop - el.clientHeight;
  }

  /** The element that shows `message`: a notice line, or its message view (made or brought up to date). */
  private elementFor(message: ChatMessageView): HTMLElement {
    if (message.role === 'notice') return this.notices.lineFor(message);
    let view = this.views.get(message.id);
    if (view) {
      if (view.message !== message) view.update(message);
    } else {
      view = new MessageView(message, this.context);
      this.views.set(message.id, view);
    }
    return view.el;
  }

  private reconcile(): void {
    const store = this.store;
    const seen = new Set<string>();
    const placed = new Set<Element>();
    let previous: HTMLElement | undefined;
    const messages = store.messages;
    this.hidden = Math.min(this.hidden, messages.length);
    this.oldestShown = messages[this.hidden]?.id;
    for (let i = this.hidden; i < messages.length; i++) {
      const message = messages[i] as ChatMessageView;
      seen.add(message.id);
      const el = this.elementFor(message);
      // Move only what is out of place, so unchanged messages keep their nodes (and focus).
      const expected = previous ? this.groups.next(previous) : this.groups.first();
      if (expected !== el) this.groups.insertAfter(previous, el);
      placed.add(el);
      previous = el;
    }
    this.groups.keepOnly(placed);
    this.notices.prune(seen);
    for (const id of this.views.keys()) if (!seen.has(id)) this.views.delete(id);
  }

  /** Which messages offer Edit / Regenerate; only `only` when just those messages changed. */
  private updateFlags(only?: ReadonlySet<string>): void {
    const messages = this.store.messages;
    let lastUser: string | undefined;
    let lastAssistant: string | undefined;
    let lastSpoken: string | undefined;
    for (let i = messages.length - 1; i >= 0 && (!lastUser || !lastAssistant); i--) {
      const m = messages[i];
      if (!m || m.role === 'notice') continue;
      lastSpoken ??= m.id;
      if (m.role === 'user') lastUser ??= m.id;
      else lastAssistant ??= m.id;
    }
    // Regenerate only makes sense for an answer that follows the last question (notices aside).
    if (lastAssistant && lastSpoken !== lastAssistant) lastAssistant = undefined;
    const busy = this.store.busy;
    const views = only ? Array.from(only, (id) => this.views.get(id)) : this.views.values();
    for (const view of views)
      view?.setFlags({ isLastUser: view.id === lastUser, isLastAssistant: view.id === lastAssistant, busy });
  }

  private onScroll(): void {
    // Text that wraps again when the view gets narrower or wider (or a composer that wraps onto
    // another line) changes the scroller's sizes, and Chrome's scroll anchoring then moves
    // scrollTop: a scroll event that the reader did not make. It must not stop the view following
    // the end, or a reader at the end loses it by resizing the side bar.
    const el = this.el;
    const resized = el.scrollHeight !== this.scrolledSize.content || el.clientHeight !== this.scrolledSize.view;
    this.scrolledSize = { content: el.scrollHeight, view: el.clientHeight };
    const byReader = performance.now() - this.readerScrolledAt < READER_SCROLL_MS;
    if (resized && this.stickToBottom && !byReader) {
      if (this.distanceFromBottom() > 1) this.scrollToBottom();
    } else this.stickToBottom = this.distanceFromBottom() <= BOTTOM_SLACK;
    this.saveScroll();
    this.revealSoon();
  }

  private saveScroll(): void {
    const ui = this.channel.state;
    ui.scrollTop = this.el.scrollTop;
    ui.stickToBottom = this.stickToBottom;
    ui.conversationId = this.conversationId;
    ui.rendered = this.store.messages.length - this.hidden;
    this.channel.saveSoon();
  }
}

/**
 * Lays out messages put in above the reader fully in their first frame. Off-screen blocks of long
 * answers skip layout (`content-visibility: auto`) and until they have been laid out once their
 * size is a guess (30em); the reveal measures right after putting them in, before the browser has
 * decided which blocks are near the viewport, so a guess there moved what the reader saw when it
 * resolved (a 140 px answer measured as 390 px: a 248 px jump). Laid out once, a block keeps its
 * real size when it is skipped again (`contain-intrinsic-size: auto`).
 */
function sizedOnce(elements: readonly HTMLElement[]): void {
  for (const el of elements) el.classList.add('sizing');
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      for (const el of elements) el.classList.remove('sizing');
    }),
  );
}
