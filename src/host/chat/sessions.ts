/**
 * Answers being written, each bound to the conversation and message it belongs to (architecture
 * principle 9). No `vscode` import: the registry is tested in plain Node.
 *
 * Rules:
 * - At most one answer per conversation, held by the conversation's one object (`Shown.answer`).
 *   A send claims its conversation's slot synchronously (`claim` never awaits), so two sends racing
 *   for the same conversation (the view and the `modelGateway.ask` command, or Retry and Send)
 *   cannot both start: the second is refused.
 * - Different conversations may stream at the same time: an answer keeps streaming into its own
 *   conversation when the view switches away or starts a new chat (as VS Code's own chat does);
 *   the view shows the state of the conversation it shows.
 * - A conversation being deleted cannot be claimed; `settled` and `idle` let the deleter wait until
 *   nothing writes to it any more.
 */
import { randomUUID } from 'node:crypto';
import * as l10n from '@vscode/l10n';
import type { ConversationStore } from '../../core/chat/conversationStore';
import type { ConversationMeta } from '../../core/chat/store/core';
import type { StoredMessage } from '../../core/chat/store/log';
import { GatewayError } from '../../core/errors';
import type { Services } from '../services';
import type { PendingAttachment } from './attachments';
import { words } from '../../shared/words';

/** A send that went through: where it went and what was asked and answered. */
export interface Sent {
  conversationId: string;
  question: StoredMessage;
  answer?: StoredMessage;
}

/** Why a send is refused while its conversation is answering here, or in another window. */
export const busyHere = (): string =>
  l10n.t('An answer is still being written in this conversation. Stop it first or wait for it to finish.');
export const busyElsewhere = (): string =>
  l10n.t(
    'An answer is being written in this conversation in another VS Code window. Wait for it to finish there, or start a new conversation.',
  );

/** The `code` of the refusal when the conversation is answering in this window, or in another one. */
export const ANSWERING_HERE = 'answeringHere';
export const ANSWERING_ELSEWHERE = 'answeringElsewhere';

export class AnswerSession {
  readonly abort = new AbortController();
  /** Whether the conversation's claim in the store (claims.ts) is this session's, to give back when it ends. */
  claimedInStore = false;
  /** The assistant message being written, once its placeholder was stored. */
  message: StoredMessage | undefined;
  /** How much of the text / reasoning the view has (the next delta starts there). */
  sentText = 0;
  sentReasoning = 0;
  /** How much of the text / reasoning is in the store's checkpoints. */
  savedText = 0;
  savedReasoning = 0;
  lastCheckpoint = Date.now();
  flushTimer: ReturnType<typeof setTimeout> | undefined;
  private resolveSettled!: () => void;
  /** Resolves once the session has ended and its last write is done. */
  readonly settled = new Promise<void>((resolve) => (this.resolveSettled = resolve));

  /** `conversation` holds this session as its `answer` while it runs (ChatSessions.claim). */
  constructor(readonly conversation: Shown) {}

  /** The conversation's id once it exists (a send into a new chat stores it after claiming). */
  get conversationId(): string | undefined {
    return this.conversation.id;
  }

  get messageId(): string | undefined {
    return this.message?.id;
  }

  /** @internal called by ChatSessions.release */
  markSettled(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.resolveSettled();
  }
}

/**
 * The conversations being answered in this window, whether a view shows them or not (a scripted
 * question, or a chat the view has left), the writes pending for each, and the ones being deleted.
 * The answer itself lives on its conversation's one object (`Shown.answer`).
 */
export class ChatSessions {
  private readonly answering = new Set<Shown>();
  private readonly deleting = new Set<string>();
  private readonly writes = new Map<string, Set<Promise<unknown>>>();

  /**
   * Claims the conversation's slot. Synchronous by design: the decision is taken before the caller's
   * first await. Undefined when the conversation already has an answer being written (on this object,
   * or on another naming the same stored conversation) or is being deleted.
   */
  claim(conversation: Shown): AnswerSession | undefined {
    if (conversation.answer) return undefined;
    const id = conversation.id;
    if (id !== undefined && (this.deleting.has(id) || this.conversation(id))) return undefined;
    const session = new AnswerSession(conversation);
    conversation.answer = session;
    this.answering.add(conversation);
    return session;
  }

  /** Ends a session: its conversation's slot is free again and `settled` resolves. */
  release(session: AnswerSession): void {
    const conversation = session.conversation;
    if (conversation.answer === session) {
      conversation.answer = undefined;
      this.answering.delete(conversation);
    }
    session.markSettled();
  }

  /** The object of stored conversation `id` while an answer is being written in it (shown or not). */
  conversation(id: string): Shown | undefined {
    for (const conversation of this.answering) if (conversation.id === id) return conversation;
    return undefined;
  }

  /** The answer being written in stored conversation `id`, if any. */
  answerIn(id: string | undefined): AnswerSession | undefined {
    return id === undefined ? undefined : this.conversation(id)?.answer;
  }

  all(): AnswerSession[] {
    return [...this.answering].flatMap((c) => (c.answer ? [c.answer] : []));
  }

  /** Runs a write for a conversation and remembers it until it is done (see `idle`). */
  track<T>(id: string, write: Promise<T>): Promise<T> {
    let set = this.writes.get(id);
    if (!set) this.writes.set(id, (set = new Set()));
    const entry = set;
    const done = write.finally(() => {
      entry.delete(done);
      if (!entry.size && this.writes.get(id) === entry) this.writes.delete(id);
    });
    entry.add(done);
    return done;
  }

  /** Resolves when no tracked write for the conversation is pending (failed writes count as done). */
  async idle(id: string): Promise<void> {
    for (;;) {
      const pending = this.writes.get(id);
      if (!pending?.size) return;
      await Promise.allSettled([...pending]);
    }
  }

  /** Whether any write is pending for any conversation (an image prune waits for none). */
  async idleAll(): Promise<void> {
    for (const id of [...this.writes.keys()]) await this.idle(id);
  }

  /**
   * Stops the conversation's answer, waits for it and its writes to settle, then runs `work` (the
   * delete) while no new answer may start in it.
   */
  async whileDeleting<T>(id: string, work: () => Promise<T>): Promise<T> {
    this.deleting.add(id);
    try {
      const session = this.answerIn(id);
      if (session) {
        session.abort.abort();
        await session.settled;
      }
      await this.idle(id);
      return await work();
    } finally {
      this.deleting.delete(id);
    }
  }

  isDeleting(id: string): boolean {
    return this.deleting.has(id);
  }
}

/** Keys of chats that exist only in the view so far (nothing stored until the first send). */
export const DRAFT_PREFIX = 'draft:';

/**
 * A conversation the view shows or an intent names: a stored one (`id`), or a new chat not stored
 * until its first send. There is one object per conversation (shownConversations.ts hands them out),
 * so what it holds (its metadata, a new chat's notices, its tray) is found by whoever names it.
 */
export interface Shown {
  /** How the view names it: the id, or a draft key until it is stored. */
  key: string;
  id?: string;
  /** Its title, model, protocol and search switch as last read (a draft keeps its choices here). */
  meta: Partial<ConversationMeta>;
  /** Notices recorded in a new chat before its first send; stored first when it is created. */
  notices?: StoredMessage[];
  /** What waits to go with its next message (attachmentTray.ts); it stays with the conversation when a new chat is stored. */
  tray?: PendingAttachment[];
  /** The answer being written in it, from its claim to its end (ChatSessions.claim / release). */
  answer?: AnswerSession;
}

/** What every part of the chat host reads from the controller (each part's host interface extends it). */
export interface ChatBase {
  readonly services: Services;
  readonly store: ConversationStore;
  readonly sessions: ChatSessions;
  /** The conversation the view shows now. */
  readonly shown: Shown;
}

/** A new chat, nothing stored yet. */
export function draft(): Shown {
  return { key: `${DRAFT_PREFIX}${randomUUID()}`, meta: {} };
}

/** A write into a conversation that was deleted meanwhile was refused. */
export function gone(): GatewayError {
  return new GatewayError('badRequest', words('The conversation was deleted; nothing more is written to it.'));
}
