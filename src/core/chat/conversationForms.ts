import * as l10n from '@vscode/l10n';
import { formatDate, formatWhen } from '../../shared/format';
import { noticeText } from '../../shared/notices';
import type { ChatMessageView, ImageRef } from '../../shared/protocol';
import { failureText, shownFailure } from './failures';
import { describeImage } from './images';
import type { Conversation } from './conversationStore';
import type { StoredMessage } from './store/log';

/** A stored conversation in the forms others read: its title, its Markdown export, and the view's messages. */

/**
 * A conversation's title from its first question: the first line with something to read, as plain
 * text (the Markdown marks a prompt may carry, `**bold**`, `# heading`, `[link](url)`, are left out),
 * at most 58 characters.
 */
export function titleFrom(text: string): string {
  const line =
    text
      .split('\n')
      .map(plainLine)
      .find((l) => l) ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || l10n.t('New chat');
}

/** One line of Markdown as the text a reader sees. */
function plainLine(line: string): string {
  // A code fence's own line says nothing: the title comes from the next line.
  if (/^\s*(?:```|~~~)/.test(line)) return '';
  return line
    .replace(/^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(^|[^\w*])[*_](?=\S)(.+?)(?<=\S)[*_](?![\w*])/g, '$1$2')
    .replace(/`+([^`]*)`+/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The title a conversation takes when its question `edited` is resent as `text`: a new one when
 * that question is the conversation's first and the title is still the one made from it (a title
 * the user gave is kept); undefined when the title stays. `page` holds the conversation's first
 * messages when `total` says they are all there.
 */
export function titleAfterEdit(
  page: { meta: { title: string }; messages: readonly Pick<StoredMessage, 'id' | 'role'>[]; total: number },
  edited: Pick<StoredMessage, 'id' | 'text'>,
  text: string,
): string | undefined {
  if (page.total > page.messages.length) return undefined;
  const first = page.messages.find((m) => m.role === 'user');
  if (first?.id !== edited.id || page.meta.title !== titleFrom(edited.text)) return undefined;
  const title = titleFrom(text);
  return title === page.meta.title ? undefined : title;
}

export function toMarkdown(c: Conversation): string {
  const now = Date.now();
  const lines = [`# ${c.title}`, '', `_${l10n.t('Exported {0}', `${formatDate(now)} ${formatWhen(now)}`)}_`, ''];
  for (const m of c.messages) {
    if (m.role === 'user') {
      lines.push(`## ${l10n.t('You')}`, '');
      for (const a of m.attachments ?? [])
        lines.push(
          `> ${a.truncated ? l10n.t('Attached: {0} (cut to fit)', a.label) : l10n.t('Attached: {0}', a.label)}`,
        );
      for (const image of m.images ?? [])
        lines.push(
          `> ${l10n.t('Image: {0} ({1}, sha256 {2})', image.name, describeImage(image), image.id.slice(0, 12))}`,
        );
      if (m.attachments?.length || m.images?.length) lines.push('');
      lines.push(m.text, '');
    } else if (m.role === 'notice') {
      if (m.notice) lines.push(`_${noticeText(m.notice)}_`, '');
    } else {
      lines.push(`## ${m.model ?? l10n.t('Assistant')}`, '');
      if (m.reasoning)
        lines.push(`<details><summary>${l10n.t('Thinking')}</summary>`, '', m.reasoning, '', '</details>', '');
      lines.push(m.text, '');
      if (m.searches?.length)
        lines.push(`_${l10n.t('Searched the web for: {0}', m.searches.map((q) => `“${q}”`).join(', '))}_`, '');
      if (m.citations?.length) {
        lines.push(`**${l10n.t('Sources')}**`, '');
        m.citations.forEach((c, i) =>
          lines.push(`${i + 1}. [${markdownLinkText(c.title || c.url)}](${markdownUrl(c.url)})`),
        );
        lines.push('');
      }
      if (m.status === 'stopped') lines.push(`_(${l10n.t('stopped')})_`, '');
      if (m.status === 'cut')
        lines.push(`_(${l10n.t('cut off: {0}', m.error ? failureText(m.error) : l10n.t('unknown reason'))})_`, '');
    }
  }
  return lines.join('\n');
}

function markdownLinkText(text: string): string {
  return text.replace(/[[\]\\]/g, '\\$&').replace(/\s+/g, ' ');
}

function markdownUrl(url: string): string {
  return url.replace(/[()<>\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/**
 * A stored message as the view gets it: a failure's message worded now, in the display language;
 * `imageSrc` gives each image the address the view loads it from.
 */
export function toView(m: StoredMessage, imageSrc?: (image: ImageRef) => string | undefined): ChatMessageView {
  const { context: _context, error, ...rest } = m;
  const view: ChatMessageView = error ? { ...rest, error: shownFailure(error) } : rest;
  if (!imageSrc || !view.images?.length) return view;
  return {
    ...view,
    images: view.images.map((image) => {
      const src = imageSrc(image);
      return src ? { ...image, src } : image;
    }),
  };
}
