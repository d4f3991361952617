/** User-facing words for protocol values: protocol names, error actions, token usage. */
import type { ChatMessageView, ImageRef, WebviewMessage, WireProtocol } from '../../shared/protocol';
import { formatBytes } from '../../shared/format';

type Action = Extract<WebviewMessage, { type: 'action' }>['action'];

export const PROTOCOL_SHORT: Record<WireProtocol, string> = {
  chatCompletions: 'CC',
  responses: 'Resp',
  messages: 'Msg',
};

/** The button offered under a failed answer, by error kind. */
export function errorAction(kind: string): { action: Action; label: string } | undefined {
  switch (kind) {
    case 'auth':
      return { action: 'setKey', label: 'Set API Key' };
    case 'modelUnavailable':
      return { action: 'pickModel', label: 'Pick another model' };
    case 'network':
    case 'timeout':
    case 'server':
    case 'rateLimited':
    case 'protocol':
      return { action: 'retry', label: 'Retry' };
    default:
      return undefined;
  }
}

/**
 * The badge of an answer that did not end normally: stopped by the user, cut off after some text,
 * or an error that produced no text at all (which is not "cut off": nothing was there to cut).
 */
export function statusLabel(message: Pick<ChatMessageView, 'status' | 'text' | 'error'>): string | undefined {
  if (message.status === 'stopped') return 'Stopped';
  if (message.status === 'cut') return message.text || !message.error ? 'Cut off' : 'Error';
  return undefined;
}

const number = new Intl.NumberFormat();

export function usageLine(usage: ChatMessageView['usage']): string {
  if (!usage) return '';
  const parts: string[] = [];
  if (usage.inputTokens !== undefined) parts.push(`${number.format(usage.inputTokens)} in`);
  if (usage.outputTokens !== undefined) parts.push(`${number.format(usage.outputTokens)} out`);
  if (usage.reasoningTokens !== undefined) parts.push(`${number.format(usage.reasoningTokens)} reasoning`);
  if (usage.totalTokens !== undefined) parts.push(`${number.format(usage.totalTokens)} total`);
  return parts.length ? `Tokens: ${parts.join(' · ')}` : '';
}

export function formatChars(chars: number): string {
  return chars >= 1000 ? `${(chars / 1000).toFixed(chars >= 10_000 ? 0 : 1)}k chars` : `${chars} chars`;
}

const IMAGE_FORMATS: Record<ImageRef['mediaType'], string> = { 'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/gif': 'GIF', 'image/webp': 'WebP' };

/** "PNG 48×48, 2.1 KB" */
export function imageDetail(image: Pick<ImageRef, 'mediaType' | 'bytes' | 'width' | 'height'>): string {
  const size = image.width && image.height ? ` ${image.width}×${image.height}` : '';
  return `${IMAGE_FORMATS[image.mediaType]}${size}, ${formatBytes(image.bytes)}`;
}
