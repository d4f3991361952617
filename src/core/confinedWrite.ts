import { constants as fsConstants, promises as fs, type BigIntStats } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { GatewayError } from './errors';
import { isInside, pathForm, realPathOf } from './workspacePaths';

/**
 * Output writes (generated media, saved results) land in the folder that was approved, even when
 * something changes the folder between the approval and the write: a folder replaced by a link to
 * elsewhere, a link planted at the temporary or the final name. The folder is judged by its text
 * first, then with its links resolved; the temporary file is created exclusively and without
 * following a link, and the file created is the one checked (its identity, device and inode, and
 * the identity of its folder) before it is written and again before and after it gets its name.
 */

/** For tests: moments at which a test can change the folder, as another process could. */
export interface WriteHooks {
  /** After the folder was judged and before the temporary file is created. */
  afterCheck?: () => Promise<void>;
  /** After the data is written and before the file gets its name. */
  beforePublish?: () => Promise<void>;
}

export interface Confinement {
  /** The folder the file must stay in (the workspace folder, a folder the user chose); the target folder itself when absent. */
  within?: string;
  hooks?: WriteHooks;
}

/** A folder judged fit for a write: its real path and its identity when judged. */
export interface CheckedFolder {
  dir: string;
  dev: bigint;
  ino: bigint;
  hooks?: WriteHooks;
}

/**
 * Where a write folder lies by its text alone, before any file system call may touch it: a device
 * path (`\\?\`, `\\.\`) is never written; a folder outside `within` (`..`, another drive, a UNC
 * path when `within` is not on that share) is outside. `pathApi` is injectable for Windows rules.
 */
export function writeFolderPlace(
  dir: string,
  within: string,
  pathApi: path.PlatformPath = path,
): 'device' | 'inside' | 'outside' {
  if (pathForm(dir, pathApi) === 'device' || pathForm(within, pathApi) === 'device') return 'device';
  return isInside(dir, within, pathApi) ? 'inside' : 'outside';
}

/**
 * Judges `dir` for a write (creating it when missing): by its text, then with links resolved,
 * before and after it is made, so that making it never creates a folder behind a link that leads
 * out of `within`.
 */
export async function checkFolder(dir: string, opts: Confinement = {}): Promise<CheckedFolder> {
  const within = opts.within ?? dir;
  const place = writeFolderPlace(dir, within);
  if (place !== 'inside') throw refusal(dir, place === 'device' ? 'device' : 'outside');
  const realWithin = await realPathOf(within);
  if (!isInside(await realPathOf(dir), realWithin)) throw refusal(dir, 'linkOut');
  await fs.mkdir(dir, { recursive: true });
  const real = await fs.realpath(dir);
  if (!isInside(real, realWithin)) throw refusal(dir, 'linkOut');
  const st = await fs.stat(real, { bigint: true });
  return { dir: real, dev: st.dev, ino: st.ino, ...(opts.hooks ? { hooks: opts.hooks } : {}) };
}

/** Exclusive, never through a link at the name (O_NOFOLLOW does not exist on Windows, where O_EXCL alone refuses an existing link). */
const CREATE_FLAGS =
  fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_EXCL | ((fsConstants.O_NOFOLLOW as number | undefined) ?? 0);

/** A temporary file created in a checked folder, open for reading and writing, and its identity. */
export interface CheckedTemp {
  file: string;
  handle: fs.FileHandle;
  id: BigIntStats;
}

/** Creates `name` in the checked folder and checks that the file created is there, in that same folder. */
export async function createChecked(folder: CheckedFolder, name: string): Promise<CheckedTemp> {
  await folder.hooks?.afterCheck?.();
  const file = path.join(folder.dir, name);
  const handle = await fs.open(file, CREATE_FLAGS, 0o666);
  try {
    const id = await handle.stat({ bigint: true });
    try {
      await ensureInPlace(folder, file, id);
    } catch (err) {
      // Created through a folder that was swapped: the file is elsewhere; remove it there if it is still ours.
      await removeIfSame(file, id);
      throw err;
    }
    return { file, handle, id };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * Gives the checked temporary file its final name with `step` (a rename or a link in the same
 * folder): the folder and the file are checked just before, and the folder again after; a name
 * that landed elsewhere (the folder swapped during the step) is removed and the write refused.
 */
export async function publishChecked<T>(
  folder: CheckedFolder,
  temp: { file: string; id: BigIntStats },
  target: string,
  step: () => Promise<T>,
): Promise<T> {
  await folder.hooks?.beforePublish?.();
  await ensureInPlace(folder, temp.file, temp.id);
  const result = await step();
  try {
    await ensureSameFolder(folder);
  } catch (err) {
    await removeIfSame(target, temp.id);
    throw err;
  }
  return result;
}

/** Fails unless the folder is still the one judged, under its real path (no link put in its place or above it). */
async function ensureSameFolder(folder: CheckedFolder): Promise<void> {
  const real = await fs.realpath(folder.dir).catch(() => undefined);
  const st = await fs.lstat(folder.dir, { bigint: true }).catch(() => undefined);
  if (real !== folder.dir || !st?.isDirectory() || st.dev !== folder.dev || st.ino !== folder.ino)
    throw refusal(folder.dir, 'changed');
}

/** Fails unless `file` is, in the judged folder, the very file `id` describes (not a link, not another file). */
async function ensureInPlace(folder: CheckedFolder, file: string, id: BigIntStats): Promise<void> {
  await ensureSameFolder(folder);
  const st = await fs.lstat(file, { bigint: true }).catch(() => undefined);
  if (!st?.isFile() || st.dev !== id.dev || st.ino !== id.ino) throw refusal(folder.dir, 'changed');
}

/** Removes `file` if it is still the file `id` describes (never a file someone else put there). */
async function removeIfSame(file: string, id: BigIntStats): Promise<void> {
  const st = await fs.lstat(file, { bigint: true }).catch(() => undefined);
  if (st && st.dev === id.dev && st.ino === id.ino) await fs.rm(file, { force: true }).catch(() => undefined);
}

function refusal(dir: string, why: 'device' | 'outside' | 'linkOut' | 'changed'): GatewayError {
  const message = {
    device: () => l10n.t('{0} is a device path; nothing is written there.', dir),
    outside: () => l10n.t('{0} is outside the folder approved for this file; nothing was written there.', dir),
    linkOut: () =>
      l10n.t('{0} leads through a symbolic link outside the folder approved for this file; nothing was written.', dir),
    changed: () =>
      l10n.t(
        '{0} was replaced or moved while a file was being written to it; the file was not saved, so that it cannot land elsewhere.',
        dir,
      ),
  }[why]();
  return new GatewayError('badRequest', message, { code: why === 'changed' ? 'ECHANGED' : 'EOUTSIDE' });
}
