import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { readPixelSize } from '../../core/media/mediaFiles';
import type { PixelSize } from '../../shared/mediaSize';

const itemSchema = z.object({
  id: z.string(),
  kind: z.enum(['image', 'video']),
  /** Absolute path of the saved file. */
  file: z.string(),
  prompt: z.string(),
  model: z.string(),
  size: z.string(),
  createdAt: z.number(),
  route: z.optional(z.enum(['images', 'responses', 'video'])),
  taskId: z.optional(z.string()),
  /** The saved file's real size in pixels, read from its header; null when the header does not say. Absent on entries saved before it was measured. */
  pixels: z.optional(z.nullable(z.object({ width: z.number(), height: z.number() }))),
});
export type GalleryItem = z.infer<typeof itemSchema>;

const KEY = 'media.gallery';
const MAX_ITEMS = 500;

/** What was generated in this workspace, newest first, kept in the workspace's storage. */
export class Gallery {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private measuring = false;

  constructor(private readonly memento: vscode.Memento) {}

  list(): GalleryItem[] {
    const raw = this.memento.get<unknown>(KEY);
    if (!Array.isArray(raw)) return [];
    const items: GalleryItem[] = [];
    for (const entry of raw) {
      const parsed = z.safeParse(itemSchema, entry);
      if (parsed.success) items.push(parsed.data);
    }
    return items;
  }

  find(id: string): GalleryItem | undefined {
    return this.list().find((i) => i.id === id);
  }

  async add(items: Array<Omit<GalleryItem, 'id'>>): Promise<GalleryItem[]> {
    const added = items.map((i) => ({ id: randomUUID(), ...i }));
    const known = new Set(added.map((i) => i.file));
    const rest = this.list().filter((i) => !known.has(i.file));
    await this.memento.update(KEY, [...added, ...rest].slice(0, MAX_ITEMS));
    this.changed.fire();
    return added;
  }

  /**
   * Reads the real size of entries saved before sizes were measured, once each (the answer, known
   * or not, is kept), so their cards stop showing only the size that was asked for.
   */
  async measureMissing(): Promise<void> {
    if (this.measuring) return;
    const missing = this.list().filter((i) => i.pixels === undefined);
    if (missing.length === 0) return;
    this.measuring = true;
    try {
      const found = new Map<string, PixelSize | null>();
      for (const item of missing) found.set(item.id, (await readPixelSize(item.file, item.kind)) ?? null);
      // Read again: entries may have been added or removed while the files were read.
      await this.memento.update(
        KEY,
        this.list().map((i) =>
          i.pixels === undefined && found.has(i.id) ? { ...i, pixels: found.get(i.id) ?? null } : i,
        ),
      );
      this.changed.fire();
    } finally {
      this.measuring = false;
    }
  }

  /** Removes the entry only; the file stays. */
  async remove(id: string): Promise<void> {
    await this.memento.update(
      KEY,
      this.list().filter((i) => i.id !== id),
    );
    this.changed.fire();
  }

  dispose(): void {
    this.changed.dispose();
  }
}
