/**
 * Which conversation the view shows, and which one each of the view's intents names. The view may
 * have moved on by the time the host acts on an intent, so every intent names its conversation by
 * the key of the snapshot it came from: the one shown, a new chat the view showed lately (stored
 * since or not), or a stored conversation by id. No `vscode` import.
 */
import type { ConversationStore } from '../../core/chat/conversationStore';
import { draft, DRAFT_PREFIX, type Shown } from './sessions';
import { SNAPSHOT_WINDOW } from './snapshot';

/** How many new chats the view showed lately an intent may still name. */
const RECENT_DRAFTS = 8;

export class ShownConversations {
  private shown: Shown = draft();
  /**
   * The new chats this view showed lately, by the key the view named them with: an intent that
   * names one finds it after it was stored under its id (shown.key follows, the view's key stays).
   */
  private readonly drafts = new Map<string, Shown>();
  /** How many of the shown conversation's last messages the view holds ("Load older" adds more). */
  private shownWindow = SNAPSHOT_WINDOW;

  constructor(
    private readonly store: Pick<ConversationStore, 'open'>,
    /** Called when the view shows another conversation (it then needs a snapshot). */
    private readonly onShow: () => void,
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

  /** The view now shows `next`; the window of messages starts small again. */
  show(next: Shown): void {
    if (next.key.startsWith(DRAFT_PREFIX)) {
      this.drafts.set(next.key, next);
      // A few are enough: an intent is about a chat the view showed a moment ago.
      for (const key of [...this.drafts.keys()].slice(0, Math.max(0, this.drafts.size - RECENT_DRAFTS)))
        this.drafts.delete(key);
    }
    this.shown = next;
    this.shownWindow = SNAPSHOT_WINDOW;
    this.onShow();
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
    return { key, id: key, meta: { id: key } };
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
    if (typeof gone === 'string' ? this.shown.id === gone : this.shown === gone) this.show(draft());
  }

  /** More of the conversation shown; false when the view asked while it showed another one. */
  loadOlder(key: string): boolean {
    if (key !== this.shown.key) return false;
    this.shownWindow += SNAPSHOT_WINDOW;
    return true;
  }
}
