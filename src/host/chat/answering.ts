/**
 * One answer, from its placeholder to its final state, and what it tells the view: the placeholder
 * is stored (after the last message, replacing messages, or going on with a cut answer), the
 * request is sent with the protocol fallback, the stream is applied to the message (streaming.ts),
 * and the end leaves the final post, the bill and, after `model_not_found`, a fresh model list.
 * Each post names the conversation and goes out only while the view shows it; a view that is
 * hidden or out of step gets a snapshot instead.
 */
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { effectiveProtocol, isSearchable as searchableOver } from '../../core/chat/capabilities';
import type { CacheField } from '../../core/chat/cacheFields';
import { streamChat } from '../../core/chat/chat';
import type { ChatEvent, ChatMessage } from '../../core/chat/events';
import { promptCacheRequest } from '../../core/chat/promptCache';
import type { ConversationMeta } from '../../core/chat/store/core';
import type { StoredMessage } from '../../core/chat/store/log';
import { thinkingControl, thinkingRequest } from '../../core/chat/thinking';
import { continuationMessages } from '../../core/chat/turns';
import { withProtocolFallback } from '../../core/models/protocolFallback';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import type { ChatMessageView } from '../../shared/protocol';
import { cacheFieldRetry, protocolSwitchHandler } from '../protocolSwitch';
import { chatSettings } from './chatSettings';
import { buildHistory } from './history';
import type { ModelChoice } from './modelChoice';
import { gone, type AnswerSession, type ChatBase, type ChatSessions, type Shown } from './sessions';
import { inStep, type ViewLink } from './snapshot';
import { streamAnswer } from './streaming';

/** How an answer starts: after the last message, replacing messages, or going on with a cut answer. */
export interface AnswerStart {
  system?: string;
  /** The answer cut at the max tokens limit that goes on (the same message). */
  continuing?: StoredMessage;
  /** Message `from` and every later one are replaced by `before` and the new answer, in one write. */
  replace?: { from: string; before: StoredMessage[] };
  /**
   * Runs once the placeholder is stored (with `replace`, once what it replaces is gone) and before
   * the view is told: a change that goes with the stored one (an edit's new title) reaches the view
   * with the answer's first snapshot, while the answer's own changes keep the store's watch quiet.
   */
  onPlaced?(): Promise<void>;
}

/** What an answer needs from the chat controller. */
export interface AnsweringHost extends ChatBase, PostHost {
  readonly models: Pick<ModelChoice, 'writeMeta' | 'dropRefusedOverride'>;
}

/** What the request of an answer is made from. */
interface AnswerRequest {
  id: string;
  info: ModelInfo;
  meta: ConversationMeta;
  protocol: ChatProtocol;
  keyId: string | undefined;
  message: StoredMessage;
  how: AnswerStart;
}

/**
 * Streams the answer to the last message of conversation `id` under `session`. The placeholder
 * is stored first (with `replace`, in the one write that removes what it replaces; undefined,
 * with the user told and nothing changed, when that write fails), then the history is read from
 * the store; posts go to the view only while it shows this conversation.
 */
export async function runAnswer(
  host: AnsweringHost,
  session: AnswerSession,
  id: string,
  info: ModelInfo,
  how: AnswerStart = {},
): Promise<StoredMessage | undefined> {
  const meta = (await host.store.open(id, { limit: 0 }))?.meta;
  if (!meta) throw gone();
  const protocol = effectiveProtocol(info, meta.protocolOverride);
  const message = await placeAnswer(host, session, id, { info, protocol, how });
  if (!message) return undefined;
  await how.onPlaced?.();
  const keyId = await rememberKey(host, id, meta, info);
  session.message = message;
  if (host.shown.id === id) {
    host.link.needsSnapshot = true;
    await host.sendSnapshot();
  }
  if (session.abort.signal.aborted) {
    message.status = 'stopped';
    await host.sessions.track(id, host.store.update(id, message));
    postFinal(host, id, message);
    return message;
  }
  const usageBefore = how.continuing?.usage;
  const events = answerEvents(host, session, { id, info, meta, protocol, keyId, message, how });
  const final = await streamAnswer(session, id, events, {
    store: host.store,
    sessions: host.sessions,
    ...(usageBefore ? { usageBefore } : {}),
    onProgress: (s) => postDelta(host, s),
    onUnsaved: (reason) => unsaved(host, id, reason),
    onCheckpointFailed: (reason) => checkpointFailed(host, id, reason),
  });
  finishAnswer(host, id, { info, protocol, final, usageBefore });
  return final;
}

/**
 * Stores the answer's placeholder: the cut answer going on, a new message after the last one, or
 * one that replaces messages. Undefined (the user told, nothing changed) when a replacement's
 * write failed; a conversation deleted meanwhile is `gone()`.
 */
async function placeAnswer(
  host: AnsweringHost,
  session: AnswerSession,
  id: string,
  { info, protocol, how }: { info: ModelInfo; protocol: ChatProtocol; how: AnswerStart },
): Promise<StoredMessage | undefined> {
  const { continuing, replace } = how;
  if (continuing) {
    // The same message goes on: what the view and the store already hold is not sent again.
    const { finishReason: _cut, error: _error, ...rest } = continuing;
    const message: StoredMessage = {
      ...rest,
      reasoning: continuing.reasoning ?? '',
      status: 'streaming',
      model: info.id,
      protocol,
    };
    session.sentText = session.savedText = message.text.length;
    session.sentReasoning = session.savedReasoning = (message.reasoning ?? '').length;
    if (!(await host.sessions.track(id, host.store.update(id, message)))) throw gone();
    return message;
  }
  const message: StoredMessage = {
    id: randomUUID(),
    role: 'assistant',
    text: '',
    reasoning: '',
    status: 'streaming',
    model: info.id,
    protocol,
    createdAt: Date.now(),
  };
  if (replace) return (await replaceWith(host, id, replace, message)) ? message : undefined;
  if (!(await host.sessions.track(id, host.store.append(id, message)))) throw gone();
  return message;
}

/** Replaces messages with `replace.before` and the placeholder in one write; false (the user told) when it failed. */
async function replaceWith(
  host: AnsweringHost,
  id: string,
  replace: NonNullable<AnswerStart['replace']>,
  message: StoredMessage,
): Promise<boolean> {
  let replaced: boolean;
  try {
    replaced = await host.sessions.track(id, host.store.replaceFrom(id, replace.from, [...replace.before, message]));
  } catch (err) {
    // Nothing of the write counts (see replaceFrom): the old messages are still there.
    const reason = err instanceof Error ? err.message : String(err);
    host.services.log.warn(`Replacing messages in conversation ${id} failed: ${reason}`);
    void host.sendSnapshot();
    void vscode.window.showWarningMessage(
      vscode.l10n.t(
        'The chat history could not be saved ({0}). Nothing was changed: the previous messages are kept.',
        reason,
      ),
    );
    return false;
  }
  if (!replaced) throw gone();
  return true;
}

/** The conversation remembers the key with the model: its own while that key lists the model, else the model's. */
async function rememberKey(
  host: AnsweringHost,
  id: string,
  meta: ConversationMeta,
  info: ModelInfo,
): Promise<string | undefined> {
  const keyId = meta.keyId !== undefined && info.keyIds?.includes(meta.keyId) ? meta.keyId : info.keyId;
  if (meta.model !== info.id || meta.keyId !== keyId)
    await host.models.writeMeta(id, { model: info.id, ...(keyId !== undefined ? { keyId } : {}) });
  return keyId;
}

/**
 * The answer's events: the request over the conversation's protocol, and again over another one
 * (or without a prompt-cache field) when the gateway refuses it for the model.
 */
function answerEvents(host: AnsweringHost, session: AnswerSession, r: AnswerRequest): AsyncIterable<ChatEvent[]> {
  const { id, info, meta, keyId, message } = r;
  const { system, continuing } = r.how;
  const settings = chatSettings();
  // Read once the placeholder is stored (a replacement has removed what it replaces by then),
  // when the request starts: a failure to read it ends the answer as cut, like a failed request.
  let history: Promise<ChatMessage[]> | undefined;
  const readHistory = (): Promise<ChatMessage[]> =>
    (history ??= buildHistory(host.store, id, info, settings, continuing ? undefined : message.id).then(
      (read) => read ?? Promise.reject(gone()),
    ));
  const thinking = (over: ChatProtocol) =>
    thinkingRequest(thinkingControl(info, over), meta.thinking ?? settings.thinking);
  const cacheOver = (over: ChatProtocol, without: readonly CacheField[] = []) =>
    promptCacheRequest(info, over, { enabled: settings.promptCaching, conversation: id, without });
  const run = async function* (over: ChatProtocol, without: readonly CacheField[]): AsyncGenerator<ChatEvent[]> {
    const sent = await readHistory();
    const cache = cacheOver(over, without);
    yield* streamChat(host.services.http(), {
      model: info.id,
      ...(keyId !== undefined ? { key: keyId } : {}),
      protocol: over,
      messages: continuing ? continuationMessages(sent, over, thinking) : sent,
      system: system ?? (settings.systemPrompt || undefined),
      // The chat always streams; a model that requires streaming would get it anyway.
      stream: true,
      requiresStreaming: info.catalog?.requiresStreaming === true,
      maxTokens: settings.maxTokens,
      modelMaxOutput: info.catalog?.maxOutput,
      enableSearch: meta.enableSearch && searchableOver(info, over) ? true : undefined,
      thinking: thinking(over),
      ...(cache ? { cache } : {}),
      signal: session.abort.signal,
      onQueued: () => host.link.port?.post({ type: 'queued', conversationId: id, messageId: message.id }),
    }).batches();
  };
  const switched = protocolSwitchHandler(host.services);
  return withProtocolFallback(
    info,
    r.protocol,
    run,
    async (change) => {
      message.protocol = change.to;
      await switched(change);
      await host.models.dropRefusedOverride(id, change.from);
    },
    cacheFieldRetry(host.services, info.id, (over) => cacheOver(over)),
  );
}

/** What the answer's end leaves: the final post, the bill, the log, and a fresh model list after `model_not_found`. */
function finishAnswer(
  host: AnsweringHost,
  id: string,
  end: { info: ModelInfo; protocol: ChatProtocol; final: StoredMessage; usageBefore: StoredMessage['usage'] },
): void {
  const { info, protocol, final, usageBefore } = end;
  postFinal(host, id, final);
  if (final.usage || final.text)
    host.services.billing.recordSidebarAnswer(final.usage, usageBefore, info.catalog?.cost);
  if (final.error) host.services.log.warn(`Chat answer from ${info.id} over ${protocol} ended: ${final.error.message}`);
  // The gateway no longer serves the model to this key (`model_not_found`): reading the key's list
  // again lets the conversation take the model-gone path, where the user picks the model to go on with.
  if (final.error?.kind === 'modelUnavailable')
    host.services.registry
      .refresh()
      .catch((err: unknown) => host.services.log.warn(`Model refresh after a refusal failed: ${String(err)}`));
}

/** The answer's final state was not stored: the user is told (the view showed it as finished). */
function unsaved(host: AnsweringHost, id: string, reason: string): void {
  host.services.log.warn(`The answer in conversation ${id} could not be saved: ${reason}`);
  void vscode.window.showWarningMessage(vscode.l10n.t('The answer could not be saved: {0}', reason));
}

/** Part of the answer streamed so far was not stored: said once per answer (the next checkpoint stores it whole). */
function checkpointFailed(host: AnsweringHost, id: string, reason: string): void {
  host.services.log.warn(`A checkpoint of the answer in conversation ${id} could not be saved: ${reason}`);
  void vscode.window.showWarningMessage(
    vscode.l10n.t(
      'Part of the answer being written could not be saved yet ({0}). It is saved whole at the next chance; until then a crash would lose it.',
      reason,
    ),
  );
}

/** What the posts need from the chat controller. */
export interface PostHost {
  /** The conversation the view shows now. */
  readonly shown: Shown;
  readonly sessions: ChatSessions;
  readonly link: ViewLink;
  sendSnapshot(): Promise<void>;
  messageView(m: StoredMessage): ChatMessageView;
}

/** The text that arrived since the last post, to the view only while it shows that conversation. */
export function postDelta(host: PostHost, session: AnswerSession): void {
  const { link, shown } = host;
  const m = session.message;
  const id = session.conversationId;
  if (!m || !id || shown.id !== id) return;
  if (!link.port || !inStep(link)) {
    // A hidden or resyncing view gets the text with its next snapshot.
    if (!link.port?.isLive()) link.needsSnapshot = true;
    return;
  }
  const reasoning = m.reasoning ?? '';
  if (m.text.length === session.sentText && reasoning.length === session.sentReasoning) return;
  link.port.post({
    type: 'append',
    conversationId: id,
    messageId: m.id,
    textFrom: session.sentText,
    text: m.text.slice(session.sentText),
    reasoningFrom: session.sentReasoning,
    reasoning: reasoning.slice(session.sentReasoning),
  });
  session.sentText = m.text.length;
  session.sentReasoning = reasoning.length;
}

/** The answer's final state (the stored message replaces the streamed one in the view). */
export function postFinal(host: PostHost, id: string, message: StoredMessage): void {
  const { link, shown } = host;
  if (shown.id !== id) return;
  if (link.port && inStep(link)) {
    link.port.post({ type: 'message', conversationId: id, message: host.messageView(message) });
  } else {
    link.needsSnapshot = true;
    void host.sendSnapshot();
  }
}

/** Whether the session's conversation is still answering (the view's Stop button follows it). */
export function postBusy(host: PostHost, session: AnswerSession): void {
  const { link, shown } = host;
  const id = session.conversationId;
  if (!id || shown.id !== id || !link.port?.isLive()) return;
  link.port.post({ type: 'busy', conversationId: id, busy: host.sessions.answerIn(id) !== undefined });
}
