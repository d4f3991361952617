import { watch, promises as fs, type FSWatcher } from 'node:fs';
import * as path from 'node:path';

export type StoreChange = { ids: string[] | 'all' };

const DEBOUNCE_MS = 75;

/** The conversation a file of the store belongs to (its log or its metadata), if any. */
export function conversationIdOf(name: string): string | undefined {
  return /^([A-Za-z0-9-]+)\.(?:log|meta\.json)$/.exec(name)?.[1];
}

/**
 * Tells which conversations changed on disk, whoever changed them (this window or another).
 * The truth is a snapshot of the files' sizes and mtimes: `fs.watch` on the folder only says
 * "look now" (it is prompt on local disks but may miss events, e.g. on network shares, and is
 * unavailable on some), and a poll every `intervalMs` looks anyway. Looks are debounced, so a
 * burst of writes is one event. Nothing here keeps the process alive.
 */
export class ChangeWatcher {
  private watcher?: FSWatcher;
  private poll?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;
  private snapshot?: Map<string, string>;
  private looking = false;
  private again = false;
  private disposed = false;

  constructor(
    private readonly dir: string,
    private readonly intervalMs: number,
    private readonly emit: (change: StoreChange) => void,
    private readonly useFsWatch = true,
  ) {}

  async start(): Promise<void> {
    this.snapshot = await this.take();
    if (this.disposed) return;
    try {
      if (!this.useFsWatch) throw new Error('polling only');
      this.watcher = watch(this.dir, { persistent: false }, (_event, name) => {
        const file = typeof name === 'string' ? name : undefined;
        if (file === undefined || conversationIdOf(file) !== undefined) this.schedule();
      });
      this.watcher.on('error', () => {
        // The folder went away or the watch broke: the poll carries on alone, at full pace.
        this.watcher?.close();
        this.watcher = undefined;
        this.startPoll();
      });
    } catch {
      // No fs.watch here: the poll alone.
    }
    this.startPoll();
  }

  private startPoll(): void {
    if (this.poll) clearInterval(this.poll);
    if (this.disposed) return;
    // With a working fs.watch the poll is only a safety net for missed events, so it looks less often.
    this.poll = setInterval(() => this.schedule(), this.watcher ? this.intervalMs * 5 : this.intervalMs);
    this.poll.unref();
  }

  dispose(): void {
    this.disposed = true;
    this.watcher?.close();
    if (this.poll) clearInterval(this.poll);
    if (this.debounce) clearTimeout(this.debounce);
  }

  private schedule(): void {
    if (this.disposed || this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      void this.look();
    }, DEBOUNCE_MS);
    this.debounce.unref();
  }

  private async look(): Promise<void> {
    if (this.looking) {
      this.again = true;
      return;
    }
    this.looking = true;
    try {
      const next = await this.take();
      const before = this.snapshot ?? new Map<string, string>();
      this.snapshot = next;
      const ids = new Set<string>();
      for (const [name, stamp] of next) if (before.get(name) !== stamp) ids.add(conversationIdOf(name) ?? '');
      for (const name of before.keys()) if (!next.has(name)) ids.add(conversationIdOf(name) ?? '');
      ids.delete('');
      if (ids.size && !this.disposed) this.emit({ ids: [...ids].sort() });
    } catch {
      // A failed look (the folder is being replaced) is retried by the next poll.
    } finally {
      this.looking = false;
      if (this.again) {
        this.again = false;
        this.schedule();
      }
    }
  }

  private async take(): Promise<Map<string, string>> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const snapshot = new Map<string, string>();
    await Promise.all(
      names
        .filter((name) => conversationIdOf(name) !== undefined)
        .map(async (name) => {
          const stat = await fs.stat(path.join(this.dir, name)).catch(() => undefined);
          if (stat) snapshot.set(name, `${stat.size}:${stat.mtimeMs}:${stat.ino}`);
        }),
    );
    return snapshot;
  }
}
