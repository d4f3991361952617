import type { ChatMessageView, ImageRef } from '../../shared/protocol';
import { describeImage } from './images';
import type { Conversation } from './conversationStore';
import type { StoredMessage } from './store/log';

/** A stored conversation in the forms others read: its title, its Markdown export, and the view's messages. */

export function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0]?.trim() ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || 'New chat';
}

export function toMarkdown(c: Conversation): string {
  const lines = [`# ${c.title}`, '', `_Exported ${new Date().toISOString()}_`, ''];
  for (const m of c.messages) {
    if (m.role === 'user') {
      lines.push('## You', '');
      for (const a of m.attachments ?? []) lines.push(`> Attached: ${a.label}${a.truncated ? ' (cut to fit)' : ''}`);
      for (const image of m.images ?? []) lines.push(`> Image: ${image.name} (${describeImage(image)}, sha256 ${image.id.slice(0, 12)})`);
      if (m.attachments?.length || m.images?.length) lines.push('');
      lines.push(m.text, '');
    } else {
      lines.push(`## ${m.model ?? 'Assistant'}`, '');
      if (m.reasoning) lines.push('<details><summary>Thinking</summary>', '', m.reasoning, '', '</details>', '');
      lines.push(m.text, '');
      if (m.searches?.length) lines.push(`_Searched the web for: ${m.searches.map((q) => `“${q}”`).join(', ')}_`, '');
      if (m.citations?.length) {
        lines.push('**Sources**', '');
        m.citations.forEach((c, i) => lines.push(`${i + 1}. [${markdownLinkText(c.title || c.url)}](${markdownUrl(c.url)})`));
        lines.push('');
      }
      if (m.status === 'stopped') lines.push('_(stopped)_', '');
      if (m.status === 'cut') lines.push(`_(cut off: ${m.error?.message ?? 'unknown reason'})_`, '');
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

/** A stored message as the view gets it; `imageSrc` gives each image the address the view loads it from. */
export function toView(m: StoredMessage, imageSrc?: (image: ImageRef) => string | undefined): ChatMessageView {
  const { context: _context, ...view } = m;
  if (!imageSrc || !view.images?.length) return view;
  return {
    ...view,
    images: view.images.map((image) => {
      const src = imageSrc(image);
      return src ? { ...image, src } : image;
    }),
  };
}
