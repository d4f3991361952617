import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import * as z from 'zod/mini';

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
});
export type GalleryItem = z.infer<typeof itemSchema>;

const KEY = 'media.gallery';
const MAX_ITEMS = 500;

/** What was generated in this workspace, newest first, kept in the workspace's storage. */
export class Gallery {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

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
