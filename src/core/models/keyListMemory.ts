import * as l10n from '@vscode/l10n';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { writeFileAtomic } from '../atomicFile';
import { lazySchema, parseJsonText, parseWith } from '../validate';
import type { KeyModel } from './types';

/**
 * Each key's last model list, per gateway, kept between sessions beside the cached catalog so that a
 * new window can answer at once with what was last seen while it reads the lists again. Keys are
 * named by their ids only (the key itself never leaves secret storage); a list is a hint that the
 * next read replaces, never the truth about availability.
 */
export interface KeyListMemory {
  /** The last lists of `keyIds` at `origin`; a key with none is left out. */
  load(origin: string, keyIds: readonly string[]): Promise<Map<string, KeyModel[]>>;
  /** Replaces what is kept for these keys at `origin`. */
  save(origin: string, lists: ReadonlyMap<string, KeyModel[]>): Promise<void>;
}

const keyModelSchema = lazySchema(() =>
  z.object({
    id: z.string(),
    ownedBy: z.optional(z.string()),
    endpointTypes: z.optional(z.array(z.string())),
    limits: z.optional(z.object({ contextWindow: z.optional(z.number()), maxOutput: z.optional(z.number()) })),
  }),
);

const fileSchema = lazySchema(() =>
  z.object({
    /** Origin → key id → that key's list. */
    origins: z.record(z.string(), z.record(z.string(), z.array(keyModelSchema()))),
  }),
);
type KeyListFile = z.infer<ReturnType<typeof fileSchema>>;

/** How many gateways' lists are kept: the newest saved win. */
const KEPT_ORIGINS = 8;

/** Keeps the lists as one JSON file (in VS Code's global storage folder, beside the catalog). */
export class FileKeyListMemory implements KeyListMemory {
  constructor(private readonly file: string) {}

  async load(origin: string, keyIds: readonly string[]): Promise<Map<string, KeyModel[]>> {
    const lists = (await this.read())?.origins[origin] ?? {};
    const found = new Map<string, KeyModel[]>();
    for (const id of keyIds) {
      const list = lists[id];
      if (list) found.set(id, list);
    }
    return found;
  }

  async save(origin: string, lists: ReadonlyMap<string, KeyModel[]>): Promise<void> {
    const file = (await this.read().catch(() => undefined)) ?? { origins: {} };
    const kept = { ...file.origins[origin], ...Object.fromEntries(lists) };
    // Re-inserted last, so the oldest gateways are the first to go.
    const others = Object.entries(file.origins).filter(([o]) => o !== origin);
    const origins = Object.fromEntries([...others.slice(-(KEPT_ORIGINS - 1)), [origin, kept]]);
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    await writeFileAtomic(this.file, JSON.stringify({ origins } satisfies KeyListFile), { overwrite: true });
  }

  /** The file's content; none when it does not exist yet. A damaged file fails with a clear error. */
  private async read(): Promise<KeyListFile | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch {
      return undefined;
    }
    const what = l10n.t("The keys' last model lists");
    return parseWith(fileSchema(), parseJsonText(text, what), what);
  }
}
