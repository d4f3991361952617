import { randomAlphanumeric } from '../requestId';
import { isRecord } from '../values';

/**
 * The double's stand-in for a model: it answers the last user message deterministically, so tests
 * can predict replies, and counts tokens crudely but repeatably.
 */

/** Text of a message `content`: a string, or the text parts of an array (Chat and Messages alike). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** The last user message that is not only tool results (a Messages `tool_result` turn answers calls; the prompt is before it). */
export function lastUserText(messages: unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isRecord(m) || m.role !== 'user') continue;
    const onlyResults =
      Array.isArray(m.content) &&
      m.content.length > 0 &&
      m.content.every((b) => isRecord(b) && b.type === 'tool_result');
    if (!onlyResults) return contentText(m.content);
  }
  return '';
}

export function allText(messages: unknown[]): string {
  return messages.map((m) => (isRecord(m) ? contentText(m.content) : '')).join('\n');
}

/** About four characters per token, at least one. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

export function echoReply(model: string, userText: string): string {
  return `Echo from ${model}: ${userText}`;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function randomId(prefix: string, length = 24): string {
  return prefix + randomAlphanumeric(length);
}
