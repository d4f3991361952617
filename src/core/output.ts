import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { GatewayError } from './errors';

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
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
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
      try {
        await fs.link(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
          throw new GatewayError('badRequest', `${path.basename(file)} already exists; it was not overwritten.`);
        }
        throw err;
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
