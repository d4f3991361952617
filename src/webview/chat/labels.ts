/** User-facing words for protocol values: error actions, statuses, token usage, sizes. */
import * as l10n from '@vscode/l10n';
import type { ChatMessageView, ImageRef, WebviewMessage } from '../../shared/protocol';
import { formatBytes, formatCompactNumber, formatNumber } from '../../shared/format';

type Action = Extract<WebviewMessage, { type: 'action' }>['action'];

/** The button offered under a failed answer, by error kind. */
export function errorAction(kind: string): { action: Action; label: string } | undefined {
  switch (kind) {
    case 'auth':
      return { action: 'setKey', label: l10n.t('Set API Key') };
    case 'modelUnavailable':
      return { action: 'pickModel', label: l10n.t('Pick another model') };
    case 'network':
    case 'timeout':
    case 'server':
    case 'rateLimited':
    case 'protocol':
      return { action: 'retry', label: l10n.t('Retry') };
    default:
      return undefined;
  }
}

/**
 * The badge of an answer that did not end normally: stopped by the user, cut off after some text,
 * or an error that produced no text at all (which is not "cut off": nothing was there to cut), or a
 * status a newer version stored that this one cannot name.
 */
export function statusLabel(message: Pick<ChatMessageView, 'status' | 'text' | 'error'>): string | undefined {
  if (message.status === 'stopped') return l10n.t('Stopped');
  if (message.status === 'unknown') return l10n.t('Status unknown to this version');
  if (message.status === 'cut') return message.text || !message.error ? l10n.t('Cut off') : l10n.t('Error');
  return undefined;
}

export function usageLine(usage: ChatMessageView['usage']): string {
  if (!usage) return '';
  const parts: string[] = [];
  if (usage.inputTokens !== undefined)
    parts.push(
      usage.cachedInputTokens
        ? l10n.t('{0} in ({1} from the cache)', formatNumber(usage.inputTokens), formatNumber(usage.cachedInputTokens))
        : l10n.t('{0} in', formatNumber(usage.inputTokens)),
    );
  if (usage.outputTokens !== undefined) parts.push(l10n.t('{0} out', formatNumber(usage.outputTokens)));
  if (usage.reasoningTokens !== undefined) parts.push(l10n.t('{0} reasoning', formatNumber(usage.reasoningTokens)));
  if (usage.totalTokens !== undefined) parts.push(l10n.t('{0} total', formatNumber(usage.totalTokens)));
  return parts.length ? l10n.t('Tokens: {0}', parts.join(' · ')) : '';
}

/**
 * "746 characters", "12K characters" (the display language's short form of a large number: "1.2万"):
 * the same word as the notices of the host that count characters.
 */
export function formatChars(chars: number): string {
  return l10n.t('{0} characters', formatCompactNumber(chars));
}

const IMAGE_FORMATS: Record<ImageRef['mediaType'], string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/gif': 'GIF',
  'image/webp': 'WebP',
};

/** "PNG 48×48, 2.1 KiB": a format, pixels and a size, the same words in every language. */
export function imageDetail(image: Pick<ImageRef, 'mediaType' | 'bytes' | 'width' | 'height'>): string {
  const size = image.width && image.height ? ` ${image.width}×${image.height}` : '';
  return `${IMAGE_FORMATS[image.mediaType]}${size}, ${formatBytes(image.bytes)}`;
}
