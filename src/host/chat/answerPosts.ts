/**
 * What an answer tells the view: the text that arrived since the last post, the final message, and
 * whether its conversation is still busy. Each post names the conversation and goes out only while
 * the view shows it; a view that is hidden or out of step gets a snapshot instead.
 */
import type { StoredMessage } from '../../core/chat/store/log';
import type { ChatMessageView } from '../../shared/protocol';
import type { AnswerSession, ChatSessions, Shown } from './sessions';
import { inStep, type ViewLink } from './snapshot';

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
  link.port.post({ type: 'busy', conversationId: id, busy: host.sessions.get(id) !== undefined });
}
