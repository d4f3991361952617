/**
 * Which conversation the view shows, and which one each of the view's intents names. The view may
 * have moved on by the time the host acts on an intent, so every intent names its conversation by
 * the key of the snapshot it came from: the one shown, a new chat the view showed lately (stored
 * since or not), or a stored conversation by id. Each conversation has one object here (a `Shown`),
 * the same one an answer being written in it holds, so what it holds (its answer, its tray, a new
 * chat's notices) follows it whoever names it. No `vscode` import.
 */
import type { ConversationStore } from '../../core/chat/conversationStore';
import { draft, DRAFT_PREFIX, type ChatSessions, type Shown } from './sessions';

/** How many messages a snapshot carries; "Load older" adds as many again. */
const SNAPSHOT_WINDOW = 200;

/** How many new chats the view showed lately an intent may still name. */
const RECENT_DRAFTS = 8;

export class ShownConversations {
  private shown: Shown = draft();
  /**
   * The new chats this view showed lately, by the key the view named them with: an intent that
   * names one finds it after it was stored under its id (shown.key follows, the view's key stays).
   */
  private readonly drafts = new Map<string, Shown>();
  /** The stored conversations this view showed or an intent named, by id: one object each. */
  private readonly stored = new Map<string, Shown>();
  /** How many of the shown conversation's last messages the view holds ("Load older" adds more). */
  private shownWindow = SNAPSHOT_WINDOW;

  constructor(
    private readonly store: Pick<ConversationStore, 'open'>,
    /** Called when the view shows another conversation (it then needs a snapshot). */
    private readonly onShow: () => void,
    /** The conversations being answered, shown or not: one of them is the object of its id. */
    private readonly answering: Pick<ChatSessions, 'conversation'>,
  ) {
    this.drafts.set(this.shown.key, this.shown);
  }

  /** The conversation the view shows now. */
  get current(): Shown {
    return this.shown;
  }

  get window(): number {
    return this.shownWindow;
  }

  /**
   * The view now shows `next` (a new chat, or a stored conversation whose metadata was just read);
   * the window of messages starts small again. Returns the conversation's one object.
   */
  show(next: Shown): Shown {
    if (next.key.startsWith(DRAFT_PREFIX)) this.rememberDraft(next);
    else if (next.id) next = this.storedOne(next.id, next);
    this.shown = next;
    this.shownWindow = SNAPSHOT_WINDOW;
    this.onShow();
    return next;
  }

  private rememberDraft(next: Shown): void {
    this.drafts.set(next.key, next);
    // A few are enough: an intent is about a chat the view showed a moment ago. One stored since
    // stays known by its id.
    for (const [key, old] of [...this.drafts].slice(0, Math.max(0, this.drafts.size - RECENT_DRAFTS))) {
      this.drafts.delete(key);
      if (old.id && !this.stored.has(old.id)) this.stored.set(old.id, old);
    }
  }

  /**
   * The one object of stored conversation `id`: the one known (a new chat stored under it, if the
   * view showed one), with `fresh`'s metadata when given; else `fresh`, or a new one.
   */
  private storedOne(id: string, fresh?: Shown): Shown {
    const known =
      this.stored.get(id) ??
      this.answering.conversation(id) ??
      [this.shown, ...this.drafts.values()].find((s) => s.id === id);
    const one = known ?? fresh ?? { key: id, id, meta: { id } };
    if (known && fresh) known.meta = fresh.meta;
    this.stored.set(id, one);
    return one;
  }

  /**
   * The conversation an intent of the view names (a snapshot's `key`), without awaiting anything:
   * the one shown, a new chat shown lately (stored since or not), or a stored conversation by id
   * (its metadata is read when it is used). Undefined: a new chat the view no longer knows.
   */
  targetNow(key: string): Shown | undefined {
    if (key === this.shown.key) return this.shown;
    const known = this.drafts.get(key);
    if (known) return known;
    if (key.startsWith(DRAFT_PREFIX)) return undefined;
    return this.storedOne(key);
  }

  /** As targetNow, with a stored conversation's metadata read; undefined when it is gone too. */
  async target(key: string | undefined): Promise<Shown | undefined> {
    const shown = key === undefined ? this.shown : this.targetNow(key);
    if (!shown?.id || shown === this.shown) return shown;
    const page = await this.store.open(shown.id, { limit: 0 });
    if (!page) return undefined;
    shown.meta = page.meta;
    return shown;
  }

  /** The conversation was deleted (or set aside): if the view shows `gone`, it shows a new chat instead. */
  forget(gone: string | Shown): void {
    const id = typeof gone === 'string' ? gone : gone.id;
    if (id) this.stored.delete(id);
    if (typeof gone === 'string' ? this.shown.id === gone : this.shown === gone) this.show(draft());
  }

  /** More of the conversation shown; false when the view asked while it showed another one. */
  loadOlder(key: string): boolean {
    if (key !== this.shown.key) return false;
    this.shownWindow += SNAPSHOT_WINDOW;
    return true;
  }
}
