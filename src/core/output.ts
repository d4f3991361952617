import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { GatewayError } from './errors';

/**
 * Writes through a temporary file in the same folder so a crash never leaves half a file.
 * Without `overwrite`, the final step is a hard link, which fails if the name exists: an existing
 * file is never replaced, even by a race with another writer.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, opts: { overwrite: boolean }): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  await fs.writeFile(tmp, data);
  try {
    if (opts.overwrite) {
      await fs.rename(tmp, file);
      return;
    }
    try {
      await fs.link(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new GatewayError('badRequest', `${path.basename(file)} already exists; it was not overwritten.`);
      }
      throw err;
    }
  } finally {
    await fs.rm(tmp, { force: true });
  }
}
