import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { writeFileAtomic } from '../output';
import { chatMessageSchema, conversationSummarySchema, protocolSchema, type ChatMessageView, type ConversationSummary, type ImageRef } from '../../shared/protocol';
import { parseJsonText, parseWith } from '../validate';
import { describeImage, ImageStore } from './images';

/** A stored message also keeps the context text that was sent with it (shown only as a chip). */
const storedMessageSchema = z.extend(chatMessageSchema, { context: z.optional(z.string()) });
export type StoredMessage = z.infer<typeof storedMessageSchema>;

const conversationSchema = z.object({
  id: z.string(),
  title: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  model: z.optional(z.string()),
  protocolOverride: z.optional(protocolSchema),
  enableSearch: z.optional(z.boolean()),
  messages: z.array(storedMessageSchema),
});
export type Conversation = z.infer<typeof conversationSchema>;

const indexSchema = z.object({ version: z.literal(1), conversations: z.array(conversationSummarySchema) });

/**
 * Conversations as files in the extension's global storage: one JSON file each, plus an index of
 * titles, so that opening the view reads the index and one conversation, not everything stored.
 * Writes go through one queue and are atomic; nothing is lost to a crash mid-write.
 */
export class ConversationStore {
  private index?: ConversationSummary[];
  private queue: Promise<unknown> = Promise.resolve();
  /** Images of the conversations, stored once each next to them (`images/<sha256>.<ext>`). */
  readonly images: ImageStore;

  constructor(private readonly dir: string) {
    this.images = new ImageStore(path.join(dir, 'images'));
  }

  async list(): Promise<ConversationSummary[]> {
    return [...(await this.loadIndex())].sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async load(id: string): Promise<Conversation | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.file(id), 'utf8');
    } catch {
      return undefined;
    }
    const conversation = parseWith(conversationSchema, parseJsonText(text, `Conversation ${id}`), `Conversation ${id}`);
    return recoverInterrupted(conversation);
  }

  create(title = 'New chat'): Conversation {
    const now = Date.now();
    return { id: randomUUID(), title, createdAt: now, updatedAt: now, messages: [] };
  }

  save(conversation: Conversation): Promise<void> {
    return this.enqueue(async () => {
      await fs.mkdir(this.dir, { recursive: true });
      await writeFileAtomic(this.file(conversation.id), JSON.stringify(conversation, withoutImageSrc), { overwrite: true });
      const index = await this.loadIndex();
      const summary = summarise(conversation);
      const at = index.findIndex((c) => c.id === conversation.id);
      if (at >= 0) index[at] = summary;
      else index.push(summary);
      await this.writeIndex(index);
    });
  }

  delete(id: string): Promise<void> {
    return this.enqueue(async () => {
      await fs.rm(this.file(id), { force: true });
      const index = (await this.loadIndex()).filter((c) => c.id !== id);
      this.index = index;
      await this.writeIndex(index);
    });
  }

  /**
   * Removes stored images that no saved conversation refers to (after a delete), keeping `keep`
   * too (images attached to a message not sent yet). Returns how many files were removed.
   */
  pruneImages(keep: Iterable<string> = []): Promise<number> {
    return this.enqueue(async () => {
      const used = new Set(keep);
      for (const summary of await this.loadIndex()) {
        const c = await this.load(summary.id).catch(() => undefined);
        // An unreadable conversation may still refer to images: keep everything rather than guess.
        if (!c) return 0;
        for (const m of c.messages) for (const image of m.images ?? []) used.add(image.id);
      }
      return this.images.prune(used);
    });
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async loadIndex(): Promise<ConversationSummary[]> {
    if (this.index) return this.index;
    try {
      const text = await fs.readFile(path.join(this.dir, 'index.json'), 'utf8');
      this.index = parseWith(indexSchema, parseJsonText(text, 'The conversation index'), 'The conversation index').conversations;
    } catch (err) {
      // A missing or damaged index is rebuilt from the conversation files themselves.
      this.index = await this.rebuildIndex(err);
    }
    return this.index;
  }

  private async rebuildIndex(_reason: unknown): Promise<ConversationSummary[]> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const summaries: ConversationSummary[] = [];
    for (const name of names) {
      if (!name.endsWith('.json') || name === 'index.json') continue;
      const conversation = await this.load(name.slice(0, -5)).catch(() => undefined);
      if (conversation) summaries.push(summarise(conversation));
    }
    return summaries;
  }

  private async writeIndex(index: ConversationSummary[]): Promise<void> {
    this.index = index;
    await fs.mkdir(this.dir, { recursive: true });
    await writeFileAtomic(path.join(this.dir, 'index.json'), JSON.stringify({ version: 1, conversations: index }), { overwrite: true });
  }

  private file(id: string): string {
    if (!/^[A-Za-z0-9-]+$/.test(id)) throw new Error(`Invalid conversation id "${id}".`);
    return path.join(this.dir, `${id}.json`);
  }
}

/** The webview address of an image is worked out when a view is sent, never saved. */
function withoutImageSrc(key: string, value: unknown): unknown {
  return key === 'src' ? undefined : value;
}

function summarise(c: Conversation): ConversationSummary {
  return { id: c.id, title: c.title, updatedAt: c.updatedAt, messageCount: c.messages.length };
}

/** An answer still marked as streaming was cut by a reload or crash: keep its text, say so. */
function recoverInterrupted(c: Conversation): Conversation {
  for (const m of c.messages) {
    if (m.status === 'streaming') {
      m.status = 'cut';
      m.error = { kind: 'cancelled', message: 'The answer was interrupted when VS Code reloaded or closed; the text received until then is kept.' };
    }
  }
  return c;
}

/** A title from the first user message: its first line, shortened. */
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
