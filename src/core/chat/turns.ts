/**
 * The turns a retry, a regenerate or a continue acts on: the last question or answer past the
 * notices after it, and the request that continues an answer cut at the token limit.
 */
import type { StoredMessage } from './store/log';
import type { ChatMessage } from './events';
import type { ThinkingRequest } from './thinking';
import type { ChatProtocol } from '../models/types';

/** The user turn that asks a model to go on with an answer cut at the max tokens limit. */
export const CONTINUE_INSTRUCTION = 'Continue exactly where you stopped.';

/**
 * The request that continues a cut answer; `history` ends with the partial answer.
 *
 * Messages (Anthropic) treats a trailing assistant turn as a prefill: the model's reply goes on
 * from its last character, which is exactly a continuation. Anthropic refuses a final assistant
 * turn that ends in whitespace, so that is trimmed (the model writes it again), and refuses a
 * prefill while extended thinking is on, so then the instruction turn is used as elsewhere.
 * Chat Completions and Responses do not continue a trailing assistant turn (the model answers it
 * afresh), so the partial answer stays as an assistant turn and a short user turn asks for the rest.
 * The instruction is sent to the model, not shown to the user, so it is not localised.
 */
export function continuationMessages(
  history: ChatMessage[],
  protocol: ChatProtocol,
  thinking: (over: ChatProtocol) => ThinkingRequest | undefined,
): ChatMessage[] {
  const last = history.at(-1);
  const thinks = thinking(protocol);
  if (protocol === 'messages' && last?.role === 'assistant' && (!thinks || thinks.level === 'off')) {
    return [...history.slice(0, -1), { ...last, content: last.content.trimEnd() }];
  }
  return [...history, { role: 'user', content: CONTINUE_INSTRUCTION }];
}

/** The last question or answer of `messages` and the notices after it. */
export function lastSpoken(messages: StoredMessage[]): { last?: StoredMessage; after: StoredMessage[] } {
  let at = messages.length - 1;
  while (at >= 0 && messages[at]?.role === 'notice') at--;
  return at < 0 ? { after: [] } : { last: messages[at], after: messages.slice(at + 1) };
}
