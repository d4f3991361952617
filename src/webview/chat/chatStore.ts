/**
 * The conversation as the host last described it, plus what changed since the last frame.
 * Host messages are applied here as they arrive (cheap); the DOM is updated at most once per
 * animation frame from the dirty flags.
 */
import type { ChatMessageView, HostMessage, Snapshot } from '../../shared/protocol';

type AppendMessage = Extract<HostMessage, { type: 'append' }>;
type MessagePost = Extract<HostMessage, { type: 'message' }>;
type BusyPost = Extract<HostMessage, { type: 'busy' }>;

/** `mismatch`: this delta showed one was missed (ask for a snapshot); `ignored`: still waiting for it. */
export type AppendResult = 'applied' | 'mismatch' | 'ignored';

export class ChatStore {
  snapshot: Snapshot | undefined;
  /** Messages in display order; `messages` in `snapshot` is not kept up to date. */
  messages: ChatMessageView[] = [];
  private byId = new Map<string, ChatMessageView>();
  busy = false;

  /** Everything (header, list, composer) must be brought up to date. */
  snapshotDirty = false;
  /** The set or order of messages changed (a message was added). */
  structureDirty = false;
  busyDirty = false;
  readonly dirtyMessages = new Set<string>();

  /** A delta did not fit; appends are ignored until the next snapshot. */
  awaitingSnapshot = false;

  applySnapshot(state: Snapshot): void {
    this.snapshot = state;
    // A message that did not change is the object the view already shows (hostMessageReader.ts),
    // so the list leaves its element alone instead of bringing hundreds of them up to date.
    this.messages = state.messages.slice();
    this.byId = new Map(this.messages.map((m) => [m.id, m]));
    this.busy = state.busy;
    this.awaitingSnapshot = false;
    this.snapshotDirty = true;
    this.structureDirty = true;
    this.busyDirty = true;
  }

  /**
   * Whether a post is about the conversation shown. Posts about another conversation (an answer
   * still streaming in one the user switched away from) are stale and change nothing.
   */
  private shows(conversationId: string): boolean {
    return this.snapshot !== undefined && this.snapshot.conversationId === conversationId;
  }

  /**
   * Extends a message; a delta that does not start where the text ends means one was missed.
   * A delta for another conversation or for a message this view does not have is stale: ignored.
   */
  applyAppend(delta: AppendMessage): AppendResult | 'stale' {
    if (!this.shows(delta.conversationId)) return 'stale';
    const message = this.byId.get(delta.messageId);
    if (!message) return 'stale';
    if (this.awaitingSnapshot) return 'ignored';
    const reasoning = message.reasoning ?? '';
    if (message.text.length !== delta.textFrom || reasoning.length !== delta.reasoningFrom) {
      this.awaitingSnapshot = true;
      return 'mismatch';
    }
    if (!delta.text && !delta.reasoning) return 'applied';
    const next: ChatMessageView = { ...message, text: message.text + delta.text };
    if (delta.reasoning) next.reasoning = reasoning + delta.reasoning;
    this.replace(next);
    return 'applied';
  }

  /**
   * Replaces one message (final status, usage, error). New messages come with a snapshot, so a
   * message this view does not have, or one of another conversation, is stale: ignored.
   */
  applyMessage(post: MessagePost): void {
    if (!this.shows(post.conversationId) || !this.byId.has(post.message.id)) return;
    this.replace(post.message);
  }

  applyBusy(post: BusyPost): void {
    if (!this.shows(post.conversationId)) return;
    const busy = post.busy;
    if (this.busy === busy) return;
    this.busy = busy;
    this.busyDirty = true;
  }

  get(id: string): ChatMessageView | undefined {
    return this.byId.get(id);
  }

  get dirty(): boolean {
    return this.snapshotDirty || this.structureDirty || this.busyDirty || this.dirtyMessages.size > 0;
  }

  clearDirty(): void {
    this.snapshotDirty = false;
    this.structureDirty = false;
    this.busyDirty = false;
    this.dirtyMessages.clear();
  }

  private replace(message: ChatMessageView): void {
    // The streaming message is normally the last one, so search from the end.
    for (let i = this.messages.length - 1; i >= 0; i--) {
      if (this.messages[i]?.id === message.id) {
        this.messages[i] = message;
        break;
      }
    }
    this.byId.set(message.id, message);
    this.dirtyMessages.add(message.id);
  }
}
