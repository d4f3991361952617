import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { syncDirectory, writeFileAtomic } from '../../atomicFile';
import type { StoreProblem } from './core';
import { describe, isMissing, setAside, type MetaFile } from './files';
import { encodeRecord, metaSchema, storedMessageSchema, type LogRecord } from './log';

/**
 * The first release kept each conversation in one `<id>.json` (every message inside) and a list in
 * `index.json`. On first use each such file becomes a log and a metadata file; a file that cannot be
 * read is set aside and reported, never dropped.
 */

const oldConversationSchema = z.extend(metaSchema, { messages: z.array(storedMessageSchema) });

export interface MigrationTarget {
  dir: string;
  logFile(id: string): string;
  writeMeta(file: MetaFile): Promise<void>;
  report(problem: StoreProblem): void;
}

function isOldFormat(name: string): boolean {
  return name !== 'index.json' && /^[A-Za-z0-9-]+\.json$/.test(name);
}

/** Whether a file of the folder belongs to the old format (a conversation or the old index). */
export function hasOldFormat(name: string): boolean {
  return isOldFormat(name) || name === 'index.json';
}

export async function migrateOldFormat(target: MigrationTarget): Promise<void> {
  for (const name of await fs.readdir(target.dir)) {
    if (!isOldFormat(name)) continue;
    const old = path.join(target.dir, name);
    const id = name.slice(0, -'.json'.length);
    let conversation: z.infer<typeof oldConversationSchema>;
    try {
      const result = z.safeParse(oldConversationSchema, JSON.parse(await fs.readFile(old, 'utf8')));
      if (!result.success || result.data.id !== id)
        throw new Error(l10n.t('it does not have the shape of a conversation'));
      conversation = result.data;
    } catch (err) {
      if (isMissing(err)) continue;
      const aside = await setAside(old);
      target.report({
        kind: 'damaged',
        id,
        message: l10n.t(
          'A stored conversation could not be read ({0}); it was set aside as {1} in the chat history folder.',
          describe(err),
          aside,
        ),
        setAsideAs: aside,
      });
      continue;
    }
    const { messages, ...meta } = conversation;
    const records: LogRecord[] = [
      { k: 'm', at: meta.updatedAt, meta },
      ...messages.map((m, i): LogRecord => ({ k: 'a', at: meta.updatedAt, i, m })),
    ];
    const text = records.map(encodeRecord).join('');
    let existed = false;
    try {
      // Written whole under its final name in one step: a log that exists is complete, so a
      // migration cut short is finished (or redone) by the next start.
      await writeFileAtomic(target.logFile(id), text, { overwrite: false });
    } catch (err) {
      if ((await fs.stat(target.logFile(id)).catch(() => undefined)) === undefined) throw err;
      existed = true;
    }
    // A log migrated before may have changed since: its metadata is kept, or rebuilt from it when missing.
    if (!existed)
      await target.writeMeta({ v: 1, meta, messageCount: messages.length, logSize: Buffer.byteLength(text) });
    await fs.rm(old, { force: true });
  }
  await fs.rm(path.join(target.dir, 'index.json'), { force: true });
  await syncDirectory(target.dir);
}
