/**
 * Streams one answer into its own conversation: applies the events to the session's message,
 * checkpoints the new text about once a second, and stores the final state. Every write names the
 * conversation and message it belongs to; none depends on what the view shows. No `vscode` import.
 */
import * as l10n from '@vscode/l10n';
import type { ConversationStore } from '../../core/chat/conversationStore';
import type { StoredMessage } from '../../core/chat/store/log';
import type { ChatEvent, Usage } from '../../core/chat/events';
import { GatewayError } from '../../core/errors';
import type { Citation } from '../../shared/protocol';
import { gone, type AnswerSession, type ChatSessions } from './sessions';
import { failureRecord } from '../../core/chat/failures';

/** About one animation frame: deltas are coalesced into at most one view update per interval. */
export const FLUSH_MS = 16;
/** How often the text streamed so far is written to the store. */
export const CHECKPOINT_EVERY_MS = 1000;
/**
 * An empty checkpoint while a model thinks silently, so that other windows do not take the answer
 * for one whose window died (the store's STREAMING_STALE_MS is far longer).
 */
export const HEARTBEAT_MS = 5000;

export interface AnswerDeps {
  store: Pick<ConversationStore, 'checkpoint' | 'update'>;
  sessions: ChatSessions;
  /** What the answer had used before this stream (a Continue): the stream's usage is added to it. */
  usageBefore?: Usage;
  /** New text is in the session's message (called at most once per FLUSH_MS). */
  onProgress(session: AnswerSession): void;
  /** The final state could not be stored (the conversation was deleted, or the disk or lock failed), and why. */
  onUnsaved(reason: string): void;
  /** A checkpoint could not be stored, and why (called at most once per answer; later checkpoints write it whole). */
  onCheckpointFailed(reason: string): void;
}

/**
 * Runs the stream to its end (done, error, or the session's abort) and returns the final message,
 * stored with `update` (which writes nothing if the conversation was deleted meanwhile).
 */
export async function streamAnswer(
  session: AnswerSession,
  conversationId: string,
  events: AsyncIterable<ChatEvent[]>,
  deps: AnswerDeps,
): Promise<StoredMessage> {
  const message = session.message;
  if (!message) throw new GatewayError('badRequest', l10n.t('An answer was streamed before its message was stored.'));
  const saver = new Checkpoints(session, conversationId, message, deps);
  const heartbeat = setInterval(() => {
    if (Date.now() - session.lastCheckpoint >= HEARTBEAT_MS) saver.checkpoint();
  }, HEARTBEAT_MS);
  const schedule = (): void => {
    if (session.flushTimer) return;
    session.flushTimer = setTimeout(() => {
      session.flushTimer = undefined;
      deps.onProgress(session);
      if (Date.now() - session.lastCheckpoint >= CHECKPOINT_EVERY_MS) saver.checkpoint();
    }, FLUSH_MS);
  };
  const sources: string[] = [];
  try {
    for await (const batch of events) {
      for (const e of batch) applyEvent(message, e, { session, sources, usageBefore: deps.usageBefore });
      schedule();
    }
  } catch (err) {
    if (session.abort.signal.aborted) message.status = 'stopped';
    else {
      message.status = 'cut';
      message.error = failureRecord(err);
    }
  } finally {
    clearInterval(heartbeat);
    if (session.flushTimer) clearTimeout(session.flushTimer);
    session.flushTimer = undefined;
  }
  // Sources a search read but the text did not cite come after the cited ones.
  for (const url of sources) addCitation(message, { url });
  if (message.status === 'streaming') message.status = session.abort.signal.aborted ? 'stopped' : 'cut';
  if (!message.reasoning) delete message.reasoning;
  await saver.written();
  return saveFinal(conversationId, message, deps);
}

/** Applies one event to the answer being written; the sources a search read are gathered in `sources`. */
function applyEvent(
  message: StoredMessage,
  e: ChatEvent,
  at: { session: AnswerSession; sources: string[]; usageBefore: Usage | undefined },
): void {
  if (e.type === 'textDelta') message.text += e.text;
  else if (e.type === 'reasoningDelta') message.reasoning = (message.reasoning ?? '') + e.text;
  else if (e.type === 'citation') addCitation(message, { url: e.url, ...(e.title ? { title: e.title } : {}) });
  else if (e.type === 'webSearch') {
    if (e.queries.length) message.searches = [...(message.searches ?? []), ...e.queries];
    at.sources.push(...e.sources);
  } else if (e.type === 'usage') message.usage = at.usageBefore ? addUsage(at.usageBefore, e.usage) : e.usage;
  else if (e.type === 'done') {
    message.status = 'done';
    message.finishReason = e.finishReason;
  } else if (e.type === 'error') {
    // An abort of ours (Stop, the conversation deleted elsewhere) may reach the stream as a cut
    // connection rather than a cancellation, depending on where the body was: it is a stop.
    const stopped = e.error.kind === 'cancelled' || at.session.abort.signal.aborted;
    message.status = stopped ? 'stopped' : 'cut';
    if (!stopped) message.error = failureRecord(e.error);
  }
}

/** The final state: the one write that must not fail unseen (the view shows the answer as done). */
async function saveFinal(conversationId: string, message: StoredMessage, deps: AnswerDeps): Promise<StoredMessage> {
  const saved = await deps.sessions
    .track(conversationId, deps.store.update(conversationId, message))
    .catch((err: unknown) => err);
  if (saved !== true)
    deps.onUnsaved(saved === false ? gone().message : saved instanceof Error ? saved.message : String(saved));
  return message;
}

/**
 * The answer's checkpoints while it streams: each stores the text since the last one stored, in
 * order. After a failed one the store refuses pieces (a piece after a missing one would join
 * around the hole), so the next writes the whole message with `update`.
 */
class Checkpoints {
  private chain: Promise<unknown> = Promise.resolve();
  /** Whether a checkpoint failed since the message was last stored whole. */
  private behind = false;
  private told = false;

  constructor(
    private readonly session: AnswerSession,
    private readonly conversationId: string,
    private readonly message: StoredMessage,
    private readonly deps: AnswerDeps,
  ) {}

  checkpoint(): void {
    this.session.lastCheckpoint = Date.now();
    // Chained so the pieces reach the log in order; the final update writes the whole message.
    this.chain = this.chain.then(() => this.save());
  }

  /** Resolves when every checkpoint asked for is written (or has failed). */
  written(): Promise<unknown> {
    return this.chain;
  }

  private async save(): Promise<void> {
    const { session, message } = this;
    // What is saved is measured when the write runs: the text up to here, from the last SAVED point.
    const text = message.text.length;
    const reasoning = (message.reasoning ?? '').length;
    const failure = await this.write(text, reasoning);
    if (failure === undefined) {
      session.savedText = text;
      session.savedReasoning = reasoning;
      this.behind = false;
      return;
    }
    this.behind = true;
    if (!this.told) {
      this.told = true;
      this.deps.onCheckpointFailed(failure);
    }
  }

  /** Writes the checkpoint up to `text` / `reasoning` characters; the reason when it failed. */
  private async write(text: number, reasoning: number): Promise<string | undefined> {
    const { session, message, conversationId, deps } = this;
    try {
      const saved = this.behind
        ? await deps.sessions.track(
            conversationId,
            deps.store.update(conversationId, { ...message, status: 'streaming' }),
          )
        : await deps.sessions.track(
            conversationId,
            deps.store.checkpoint(conversationId, message.id, {
              text: message.text.slice(session.savedText, text),
              reasoning: (message.reasoning ?? '').slice(session.savedReasoning, reasoning),
            }),
          );
      if (saved) return undefined;
      // The conversation is gone, or no longer holds this answer (replaced): nothing more of it can
      // be kept, so the stream stops at once rather than running on (and being billed) to its end.
      session.abort.abort();
      return gone().message;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }
}

/** Two usages added field by field; a field neither has stays absent. */
export function addUsage(a: Usage, b: Usage): Usage {
  const out: Usage = {};
  for (const key of [
    'inputTokens',
    'outputTokens',
    'reasoningTokens',
    'totalTokens',
    'cachedInputTokens',
    'cacheWriteTokens',
  ] as const) {
    if (a[key] !== undefined || b[key] !== undefined) out[key] = (a[key] ?? 0) + (b[key] ?? 0);
  }
  return out;
}

/** One entry in an answer's numbered sources; a URL already there keeps its place (and gains a title). */
export function addCitation(message: StoredMessage, citation: Citation): void {
  const list = (message.citations ??= []);
  const known = list.find((c) => c.url === citation.url);
  if (!known) list.push(citation);
  else if (!known.title && citation.title) known.title = citation.title;
}
