import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import * as z from 'zod/mini';
import { SharedJsonFile } from '../../core/sharedState';
import type { KimiFile } from '../../core/tools/kimi';

/** Where versions before the shared file kept the list: one window's global state. */
const LEGACY_KEY = 'kimi.files';
const KEPT_PER_KEY = 200;

const fileSchema = z.object({
  id: z.string(),
  filename: z.string(),
  bytes: z.optional(z.number()),
  createdAt: z.number(),
});
const listsSchema = z.record(z.string(), z.array(fileSchema));
type Lists = Record<string, KimiFile[]>;

function parseLists(raw: unknown): Lists | undefined {
  const parsed = z.safeParse(listsSchema, raw);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The second provider's files belong to the key that uploaded them, so the list is kept per key.
 * The key itself is never stored: only a one-way fingerprint of it names the list. Every window
 * adds to one file in the global storage (core/sharedState.ts), so two windows extracting at once
 * both keep their file.
 */
export class KimiFileList {
  private readonly doc: SharedJsonFile<Lists>;
  private migrated?: Promise<void>;

  constructor(private readonly context: { globalState: vscode.Memento; globalStorageUri: vscode.Uri }) {
    this.doc = new SharedJsonFile(
      path.join(context.globalStorageUri.fsPath, 'kimi-files.json'),
      parseLists,
      () => ({}),
    );
  }

  async add(key: string, file: KimiFile): Promise<void> {
    await this.ready();
    const id = fingerprint(key);
    await this.doc.update((all) => ({
      ...all,
      [id]: [file, ...(all[id] ?? []).filter((f) => f.id !== file.id)].slice(0, KEPT_PER_KEY),
    }));
  }

  async list(key: string): Promise<KimiFile[]> {
    await this.ready();
    return (await this.doc.read())[fingerprint(key)] ?? [];
  }

  async remove(key: string, fileId: string): Promise<void> {
    await this.ready();
    const id = fingerprint(key);
    await this.doc.update((all) => ({ ...all, [id]: (all[id] ?? []).filter((f) => f.id !== fileId) }));
  }

  /** Takes over the list an older version kept in the global state, once. */
  private ready(): Promise<void> {
    this.migrated ??= (async () => {
      const legacy = this.context.globalState.get<unknown>(LEGACY_KEY);
      if (legacy === undefined) return;
      await this.doc.migrate(
        () => parseLists(legacy),
        async () => void (await this.context.globalState.update(LEGACY_KEY, undefined)),
      );
    })().catch((err: unknown) => {
      // Tried again on the next use.
      this.migrated = undefined;
      throw err;
    });
    return this.migrated;
  }
}

function fingerprint(key: string): string {
  return createHash('sha256').update(`model-gateway:${key}`).digest('hex').slice(0, 16);
}
