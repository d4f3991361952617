import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from './atomicFile';
import { FileLock } from './chat/store/lock';
import { GatewayError, isGatewayError } from './errors';
import { words } from '../shared/words';

/**
 * A small JSON document that every VS Code window of a profile reads and changes (refused
 * protocols, the second provider's file list). VS Code's global state is cached per window, so a
 * read-modify-write there by two windows at once loses one window's change; here each change reads
 * the file, changes it and writes it back (atomically) under a cross-process lock of its own (the
 * chat store's FileLock, on `<file>.lock`), and every read goes to the file, never to a copy one
 * window keeps.
 */
export class SharedJsonFile<T> {
  private readonly lock: FileLock;

  constructor(
    readonly file: string,
    /** The document from what was parsed; a value that does not fit gives the empty document. */
    private readonly parse: (raw: unknown) => T | undefined,
    private readonly empty: () => T,
  ) {
    this.lock = new FileLock(`${file}.lock`);
  }

  /** The document as it is on disk now (empty when there is none yet). */
  async read(): Promise<T> {
    return (await this.readRaw()) ?? this.empty();
  }

  /** Changes the document under the lock: no other window's change is lost in between. */
  update(change: (current: T) => T): Promise<T> {
    return this.locked(async () => {
      const next = change((await this.readRaw()) ?? this.empty());
      await writeFileAtomic(this.file, `${JSON.stringify(next)}\n`, { overwrite: true, durable: false });
      return next;
    });
  }

  /**
   * Moves a value kept elsewhere before (a window's global state) into the file, once: under the
   * lock, only when the file does not exist yet, so two windows starting together migrate once and
   * a later window's stale cached copy never overwrites what the file holds. `forget` then drops
   * the old copy, whichever window migrated.
   */
  async migrate(old: () => T | undefined, forget: () => Promise<void>): Promise<void> {
    await this.locked(async () => {
      const exists = await fs.stat(this.file).then(
        () => true,
        (err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return false;
          throw err;
        },
      );
      const value = exists ? undefined : old();
      if (value !== undefined)
        await writeFileAtomic(this.file, `${JSON.stringify(value)}\n`, { overwrite: true, durable: false });
    });
    await forget();
  }

  /** Runs `work` under the lock; waiting too long says which file, not the chat history the lock was made for. */
  private async locked<R>(work: () => Promise<R>): Promise<R> {
    let started = false;
    try {
      return await this.lock.run(() => {
        started = true;
        return work();
      });
    } catch (err) {
      if (started || !isGatewayError(err, 'timeout')) throw err;
      throw new GatewayError(
        'timeout',
        words(
          'Another VS Code window has held {0} for too long; the change was not saved. Try again, or reload the other windows.',
          path.basename(this.file),
        ),
        { cause: err },
      );
    }
  }

  private async readRaw(): Promise<T | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      return this.parse(JSON.parse(text));
    } catch {
      // Not JSON (a disk fault): these files hold remembered hints, rebuilt as they are met again.
      return undefined;
    }
  }
}
