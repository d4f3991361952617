import { randomBytes } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { GatewayError } from './errors';

/**
 * Every file the extension writes goes through here: a temporary file in the target folder, fsync'd,
 * then given its name, then the folder fsync'd. A crash never leaves half a file, and where a name
 * must be new, an existing file is never replaced, not even by a concurrent writer in another window.
 */

/**
 * Writes through a temporary file in the same folder so a crash never leaves half a file.
 * Without `overwrite`, the final step is a hard link, which fails if the name exists: an existing
 * file is never replaced, even by a race with another writer.
 *
 * Durable as well as atomic: the temporary file is fsync'd before it gets its name (otherwise a
 * power cut after the rename can leave an empty file under the new name on ext4/XFS with delayed
 * allocation), and the folder is fsync'd after, so the new name itself survives a crash.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, opts: { overwrite: boolean; durable?: boolean }): Promise<void> {
  // `durable: false` is for files that can be rebuilt from others (a cache): atomic, not fsync'd.
  const durable = opts.durable ?? true;
  const tmp = tempPath(path.dirname(file), path.basename(file));
  const handle = await fs.open(tmp, 'wx');
  try {
    await handle.writeFile(data);
    if (durable) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    if (opts.overwrite) {
      await fs.rename(tmp, file);
    } else {
      if (!(await linkNew(tmp, file))) {
        throw new GatewayError('badRequest', l10n.t('{0} already exists; it was not overwritten.', path.basename(file)), { code: 'EEXIST' });
      }
    }
  } finally {
    await fs.rm(tmp, { force: true });
  }
  if (durable) await syncDirectory(path.dirname(file));
}

/**
 * Makes a folder's entries (names created, renamed or removed in it) durable. Windows cannot open
 * a folder for fsync, and some file systems refuse it; there the rename is as durable as the
 * platform allows, so such refusals are not errors.
 */
export async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EPERM' && code !== 'EISDIR' && code !== 'ENOTSUP' && code !== 'EBADF') throw err;
  } finally {
    await handle?.close();
  }
}

function tempPath(dir: string, base: string): string {
  return path.join(dir, `.${base}.${randomBytes(6).toString('hex')}.part`);
}

/**
 * Gives a finished temporary file a name that must not exist yet: a hard link, which fails when the
 * name exists. Where the file system has no hard links, an exclusive copy does the same.
 * Returns false when the name is taken.
 */
async function linkNew(tmp: string, target: string): Promise<boolean> {
  try {
    await fs.link(tmp, target);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV' && code !== 'ENOSYS') throw err;
  }
  try {
    await fs.copyFile(tmp, target, fsConstants.COPYFILE_EXCL);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

const MAX_NAME_ATTEMPTS = 1000;

/** `base.ext`, else `base_2.ext`, `base_3.ext`…: the first free one. */
async function publishUnique(tmp: string, dir: string, base: string, ext: string): Promise<string> {
  for (let attempt = 1; attempt <= MAX_NAME_ATTEMPTS; attempt++) {
    const target = path.join(dir, attempt === 1 ? `${base}.${ext}` : `${base}_${attempt}.${ext}`);
    if (await linkNew(tmp, target)) {
      await syncDirectory(dir);
      return target;
    }
  }
  throw new GatewayError('badRequest', l10n.t('No free file name for {0} in {1}.', `${base}.${ext}`, dir));
}

/** A folder the user chose for output cannot be written: say so and name the setting. */
async function writeFailure(err: unknown, dir: string): Promise<never> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOSPC') {
    throw new GatewayError('badRequest', l10n.t('Could not write to {0} ({1}). Choose another output folder ("modelGateway.outputFolder").', dir, code ?? ''), { cause: err });
  }
  throw err;
}

/** Writes bytes under a new name in `dir` (created if missing): `base.ext` or the next free `base_N.ext`. */
export async function writeFileUnique(dir: string, base: string, ext: string, data: Uint8Array): Promise<string> {
  return streamToFileUnique(dir, base, ext, [data]);
}

/**
 * Streams chunks to a temporary file in `dir`, runs `verify` on the complete file, and only then
 * gives it its unique final name. A failure anywhere (the stream, the check) leaves no file behind.
 */
export async function streamToFileUnique(
  dir: string,
  base: string,
  ext: string,
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  verify?: (tmpFile: string) => Promise<void>,
  onBytes?: (total: number) => void,
): Promise<string> {
  await fs.mkdir(dir, { recursive: true }).catch((err: unknown) => writeFailure(err, dir));
  const tmp = tempPath(dir, base);
  try {
    const handle = await fs.open(tmp, 'wx').catch((err: unknown) => writeFailure(err, dir));
    let total = 0;
    try {
      for await (const chunk of chunks) {
        await handle.write(chunk).catch((err: unknown) => writeFailure(err, dir));
        total += chunk.length;
        onBytes?.(total);
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (verify) await verify(tmp);
    return await publishUnique(tmp, dir, base, ext);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}
