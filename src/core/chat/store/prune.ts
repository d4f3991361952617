import { promises as fs, type Stats } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import type { StoreProblem } from './core';
import { describe, isMissing } from './files';

/**
 * What image pruning reads of the store: every image id in the files that may refer to one, read
 * in passes, each pass reading only what changed since the one before (see
 * ConversationStore.pruneImages, which runs the last pass under the lock).
 */

/** What pruning read of a file of the store (see readImageRefs). */
export interface SeenFile {
  ino: number;
  dev: number;
  size: number;
  mtimeMs: number;
  /** Bytes from the start that were read and will not change while the file keeps its inode. */
  end: number;
}

/** Files of the store that may refer to an image (see pruneImages). */
const REFERRING_FILE = /^[A-Za-z0-9-]+\.(?:log|meta\.json|json)(?:\.damaged-.*)?$/;
/** How many bytes of changes pruning reads while holding the lock, and how often it tries. */
export const PRUNE_LOCKED_READ_MAX = 256 * 1024;
export const PRUNE_ROUNDS = 4;

/**
 * A file's bytes from `from` on (whole when `from` is 0), where `from` is where a line ended: if
 * the byte before it is not a newline the file is not the one read before, and it is read whole.
 */
async function readFrom(file: string, from: number): Promise<{ bytes: Buffer; at: number }> {
  if (from === 0) return { bytes: await fs.readFile(file), at: 0 };
  const handle = await fs.open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const bytes = Buffer.alloc(Math.max(0, size - from + 1));
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, from - 1);
    if (bytesRead === 0 || bytes[0] !== 0x0a) return { bytes: await handle.readFile(), at: 0 };
    return { bytes: bytes.subarray(1, bytesRead), at: from };
  } finally {
    await handle.close();
  }
}

/**
 * Adds to `used` every image id in the files of the store that may refer to one and changed
 * since `seen` (where it notes what it read): a log that grew is read from where it was read to,
 * any other change is read whole. `tooMuch` (nothing read) when that is over `budget` bytes;
 * `failed` (said to the user) when a file cannot be read.
 */
export async function readImageRefs(
  dir: string,
  seen: Map<string, SeenFile>,
  used: Set<string>,
  budget: number,
  report: (problem: StoreProblem) => void,
): Promise<'done' | 'tooMuch' | 'failed'> {
  const failed = (name: string, err: unknown): 'failed' => {
    report({
      kind: 'io',
      message: l10n.t('Stored images were not cleaned up: {0} could not be read ({1}).', name, describe(err)),
    });
    return 'failed';
  };
  const plan: Array<{ name: string; stat: Stats; from: number }> = [];
  let bytes = 0;
  for (const name of await fs.readdir(dir)) {
    // Logs, metadata, files in the old format and files set aside: anything that may refer to an image.
    if (!REFERRING_FILE.test(name)) continue;
    let stat: Stats;
    try {
      stat = await fs.stat(path.join(dir, name));
    } catch (err) {
      if (isMissing(err)) continue;
      return failed(name, err);
    }
    const before = seen.get(name);
    const same = before !== undefined && before.ino === stat.ino && before.dev === stat.dev;
    if (same && before.size === stat.size && before.mtimeMs === stat.mtimeMs) continue;
    const from = same && name.endsWith('.log') && stat.size >= before.end ? before.end : 0;
    plan.push({ name, stat, from });
    bytes += Math.max(0, stat.size - from);
  }
  if (bytes > budget) return 'tooMuch';
  for (const { name, stat, from } of plan) {
    let read: { bytes: Buffer; at: number };
    try {
      read = await readFrom(path.join(dir, name), from);
    } catch (err) {
      if (isMissing(err)) continue;
      return failed(name, err);
    }
    // Every image id anywhere in any file (old records, set-aside files included) is kept:
    // cheaper than parsing, and an extra kept image costs little while a lost one is lost.
    for (const match of read.bytes.toString('latin1').matchAll(/[0-9a-f]{64}/g)) used.add(match[0]);
    // Up to its last newline a log is never changed again; after it, a write may be under way.
    const end = name.endsWith('.log') ? read.at + read.bytes.lastIndexOf(0x0a) + 1 : read.at + read.bytes.length;
    seen.set(name, {
      ino: stat.ino,
      dev: stat.dev,
      size: stat.size,
      mtimeMs: stat.mtimeMs,
      end: Math.max(end, read.at),
    });
  }
  return 'done';
}
