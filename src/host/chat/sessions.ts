/**
 * Answers being written, each bound to the conversation and message it belongs to (architecture
 * principle 9). No `vscode` import: the registry is tested in plain Node.
 *
 * Rules:
 * - At most one answer per conversation. A send claims its conversation's slot synchronously
 *   (`claim` never awaits), so two sends racing for the same conversation (the view and the
 *   `modelGateway.ask` command, or Retry and Send) cannot both start: the second is refused.
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
  /** The conversation once it exists (a send into a new chat creates it after claiming). */
  conversationId: string | undefined;
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

  constructor(public key: string) {}

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

export class ChatSessions {
  private readonly byKey = new Map<string, AnswerSession>();
  private readonly deleting = new Set<string>();
  private readonly writes = new Map<string, Set<Promise<unknown>>>();

  /**
   * Claims the slot of a conversation (its id, or the key of a chat not yet stored). Synchronous by
   * design: the decision is taken before the caller's first await. Undefined when the conversation
   * already has an answer being written or is being deleted.
   */
  claim(key: string): AnswerSession | undefined {
    if (this.byKey.has(key) || this.deleting.has(key)) return undefined;
    const session = new AnswerSession(key);
    if (!key.startsWith(DRAFT_PREFIX)) session.conversationId = key;
    this.byKey.set(key, session);
    return session;
  }

  /** The new chat a session was claimed for now exists under `id`. */
  bind(session: AnswerSession, id: string): void {
    if (this.byKey.get(session.key) === session) this.byKey.delete(session.key);
    session.key = id;
    session.conversationId = id;
    this.byKey.set(id, session);
  }

  /** Ends a session: its slot is free again and `settled` resolves. */
  release(session: AnswerSession): void {
    if (this.byKey.get(session.key) === session) this.byKey.delete(session.key);
    session.markSettled();
  }

  get(key: string | undefined): AnswerSession | undefined {
    return key === undefined ? undefined : this.byKey.get(key);
  }

  all(): AnswerSession[] {
    return [...this.byKey.values()];
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
      const session = this.byKey.get(id);
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
  /** The key its answer session is claimed under: the id, or a draft key. */
  key: string;
  id?: string;
  /** Its title, model, protocol and search switch as last read (a draft keeps its choices here). */
  meta: Partial<ConversationMeta>;
  /** Notices recorded in a new chat before its first send; stored first when it is created. */
  notices?: StoredMessage[];
  /** What waits to go with its next message (attachmentTray.ts); it stays with the conversation when a new chat is stored. */
  tray?: PendingAttachment[];
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
