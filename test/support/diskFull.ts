/**
 * A full disk for the tests of the conversation store and the chat that writes to it: FileHandle
 * writes whose buffer `fails` picks reject with ENOSPC, as on a disk with no space left. The
 * prototype is reached through a handle opened in `dir`; `restore` puts the real write back.
 */
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';

export interface DiskFull {
  /** How many writes failed so far. */
  failed(): number;
  restore(): void;
}

export async function failWrites(
  dir: string,
  fails: (bytes: Buffer, failedSoFar: number) => boolean,
): Promise<DiskFull> {
  const probe = await fsp.open(path.join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> };
  await probe.close();
  const write = proto.write;
  let failed = 0;
  proto.write = function (this: unknown, ...args: unknown[]) {
    const bytes = args[0];
    if (Buffer.isBuffer(bytes) && fails(bytes, failed)) {
      failed++;
      return Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }));
    }
    return write.apply(this, args);
  };
  return { failed: () => failed, restore: () => (proto.write = write) };
}
