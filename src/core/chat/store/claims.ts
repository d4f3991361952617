/**
 * Which window is writing an answer into which conversation, visible to every window of the
 * profile: one small claim file per conversation in the store's `.claims` folder, taken and given
 * back under the store's cross-process lock (lock.ts), so of two windows claiming one conversation
 * exactly one wins.
 *
 * A claim is a lease like the lock (lease.ts): its window rewrites a beat counter in it through the
 * handle it keeps open — no store lock needed, so a window waiting for the lock still keeps its
 * claims — and another window counts it free only once it has itself seen it unchanged for
 * `expiryMs` on its monotonic clock, or at once when its owner was a process of this machine that
 * no longer exists. A claim outlives the longest lock hold (`expiryMs` is longer than the lock's
 * lease), so a window paused within its lock lease keeps its claims too. A claim is lost only when
 * its file was replaced or removed (another window took it, or the conversation was deleted).
 * No `vscode` import.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { writeFileAtomic } from '../../atomicFile';
import { checkId, isMissing, STORE_LOCK } from './files';
import { Beat, monotonicNow, pidIsGone, watchTimer, type Schedule } from './lease';
import { FileLock, type FileLockOptions } from './lock';

/** How often a window refreshes its claims. */
export const CLAIM_HEARTBEAT_MS = 5000;
/** A claim not seen refreshed for this many heartbeats is free (its window died or hangs)… */
export const CLAIM_EXPIRY_HEARTBEATS = 4;
/** …and never before the lock's lease (store/lock.ts) and two heartbeats have passed. */
const DEFAULT_LOCK_STALE_MS = 30_000;

/** In a folder of its own, so that claiming leaves the conversations folder's time alone. */
const CLAIMS_DIR = '.claims';

const claimSchema = z.object({
  v: z.literal(1),
  owner: z.string(),
  pid: z.number(),
  host: z.string(),
  since: z.number(),
});
/** A claim as read: `owner` and `pid` are undefined for a claim this version cannot read (a newer window's): it counts as another window's. */
interface SeenClaim {
  owner?: string;
  pid?: number;
  host?: string;
  /** Identity, size, time and content: what must stay the same for the claim to be seen unrefreshed. */
  look: string;
}

/** What a window sees of a conversation's claim. */
export type ClaimState = 'mine' | 'elsewhere' | 'free';

export interface ClaimOptions {
  heartbeatMs?: number;
  /** Default: CLAIM_EXPIRY_HEARTBEATS heartbeats, and at least the lock's lease and two heartbeats. */
  expiryMs?: number;
  /** See FileLockOptions.staleMs. */
  lockStaleMs?: number;
  /** Told when a claim this window held was found taken over or removed (the conversation was deleted). */
  onLost?: (id: string) => void;
  /** See FileLockOptions.clock and .schedule (tests). */
  clock?: () => number;
  schedule?: Schedule;
  /** Options of the store lock the claims are taken under (tests). */
  lock?: Omit<FileLockOptions, 'staleMs'>;
}

interface HeldClaim {
  handle: fs.FileHandle;
  ino: bigint;
  dev: bigint;
  beat: Beat;
}

/** One window's claims on the conversations of a store folder. */
export class ConversationClaims {
  /** This window, as its claim files name it. */
  readonly owner = randomUUID();
  private readonly lock: FileLock;
  private readonly folder: string;
  private readonly heartbeatMs: number;
  private readonly expiryMs: number;
  private readonly clock: () => number;
  private readonly held = new Map<string, HeldClaim>();
  /** Other windows' claims as this window last saw them, and since when (monotonic) unchanged. */
  private readonly watching = new Map<string, { look: string; since: number }>();
  private stopTimer: (() => void) | undefined;

  constructor(
    dir: string,
    private readonly options: ClaimOptions = {},
  ) {
    const lockStaleMs = options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS;
    this.lock = new FileLock(path.join(dir, STORE_LOCK), { ...options.lock, staleMs: lockStaleMs });
    this.folder = path.join(dir, CLAIMS_DIR);
    this.heartbeatMs = options.heartbeatMs ?? CLAIM_HEARTBEAT_MS;
    this.expiryMs =
      options.expiryMs ?? Math.max(this.heartbeatMs * CLAIM_EXPIRY_HEARTBEATS, lockStaleMs + 2 * this.heartbeatMs);
    this.clock = options.clock ?? monotonicNow;
  }

  /**
   * Claims conversation `id` for this window: true when it is now this window's, false when
   * another window holds a live claim on it. Throws when the lock or the disk fails.
   */
  async take(id: string): Promise<boolean> {
    if (this.held.has(id)) return true;
    return this.lock.run(async () => {
      const current = await this.read(id);
      if (current && current.owner !== this.owner && !this.isFree(id, current)) return false;
      await fs.mkdir(this.folder, { recursive: true });
      const since = this.clock();
      const before = JSON.stringify({
        v: 1,
        owner: this.owner,
        pid: process.pid,
        host: os.hostname(),
        since: Date.now(),
      });
      // The beat counter is one more field, rewritten in place: `{…,"beat":"0000…"}`.
      const head = `${before.slice(0, -1)},"beat":"`;
      const file = this.file(id);
      await writeFileAtomic(file, `${head}${'0'.repeat(16)}"}`, {
        overwrite: true,
        durable: false,
        beforeRename: () => this.lock.fence(),
      });
      const handle = await fs.open(file, 'r+');
      const { ino, dev } = await handle.stat({ bigint: true });
      const beat = new Beat(
        handle,
        head,
        {
          clock: this.clock,
          schedule: this.options.schedule ?? watchTimer,
          everyMs: this.heartbeatMs,
          // A late beat does not lose a claim by itself: only a claim file replaced or removed does (see check).
          validMs: Number.POSITIVE_INFINITY,
          since,
        },
        '"}',
      );
      this.held.set(id, { handle, ino, dev, beat });
      this.watching.delete(id);
      this.startChecks();
      return true;
    });
  }

  /** Gives the claim back (only this window's own claim is removed). */
  async release(id: string): Promise<void> {
    const claim = this.held.get(id);
    this.held.delete(id);
    claim?.beat.stop();
    if (!this.held.size) this.stopChecks();
    try {
      await this.lock.run(async () => {
        const current = await this.read(id);
        if (current?.owner === this.owner) {
          await this.lock.fence();
          await fs.rm(this.file(id), { force: true });
        }
      });
    } finally {
      await claim?.handle.close().catch(() => undefined);
    }
  }

  /** Removes any window's claim on a conversation that was deleted; its writer learns at its next heartbeat. */
  async forget(id: string): Promise<void> {
    await this.lock.run(async () => {
      await this.lock.fence();
      await fs.rm(this.file(id), { force: true });
    });
  }

  /** Whether another window holds a live claim on `id` (read without the lock: a hint for the view). */
  async heldElsewhere(id: string): Promise<boolean> {
    return (await this.state(id)) === 'elsewhere';
  }

  /**
   * Whose the claim on `id` is as this window sees it now (without the lock): `free` when there is
   * none, its owner process is gone, or this window has seen it unrefreshed for `expiryMs`.
   */
  async state(id: string): Promise<ClaimState> {
    if (this.held.has(id)) return 'mine';
    const current = await this.read(id).catch(() => undefined);
    if (!current) return 'free';
    if (current.owner === this.owner) return 'mine';
    return this.isFree(id, current) ? 'free' : 'elsewhere';
  }

  /**
   * Stops refreshing and gives back the claims still held (a closing window's answers end with it),
   * at once and without the lock: each file is removed only while it is still the one this window
   * wrote, and nobody replaces a claim that was refreshed until now.
   */
  dispose(): void {
    this.stopChecks();
    for (const [id, claim] of this.held) {
      claim.beat.stop();
      try {
        const now = statSync(this.file(id), { bigint: true });
        if (now.ino === claim.ino && now.dev === claim.dev) rmSync(this.file(id), { force: true });
      } catch {
        // Gone already, or unreadable: another window judges it by its owner's process and its watch.
      }
      void claim.handle.close().catch(() => undefined);
    }
    this.held.clear();
  }

  /** Every heartbeat: a claim whose beat came too late, or whose file is no longer the one this window wrote, is lost. */
  private async check(): Promise<void> {
    for (const [id, claim] of [...this.held]) {
      await claim.beat.tick();
      const now = await fs
        .stat(this.file(id), { bigint: true })
        .catch((err: unknown) => (isMissing(err) ? undefined : claim));
      const mine = now !== undefined && now.ino === claim.ino && now.dev === claim.dev;
      if (!mine && this.held.get(id) === claim) {
        this.held.delete(id);
        claim.beat.lose();
        await claim.handle.close().catch(() => undefined);
        this.options.onLost?.(id);
      }
    }
    if (!this.held.size) this.stopChecks();
  }

  private startChecks(): void {
    this.stopTimer ??= (this.options.schedule ?? watchTimer)(() => void this.check(), this.heartbeatMs);
  }

  private stopChecks(): void {
    this.stopTimer?.();
    this.stopTimer = undefined;
  }

  /** Another window's claim is free when its process is gone, or when this window has seen it unchanged for `expiryMs`. */
  private isFree(id: string, claim: SeenClaim): boolean {
    if (claim.host === os.hostname() && claim.pid !== undefined && pidIsGone(claim.pid)) return true;
    const now = this.clock();
    const watched = this.watching.get(id);
    if (watched?.look !== claim.look) {
      this.watching.set(id, { look: claim.look, since: now });
      return false;
    }
    return now - watched.since >= this.expiryMs;
  }

  /** The claim on `id`; undefined when there is none. */
  private async read(id: string): Promise<SeenClaim | undefined> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.file(id), 'r');
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    let text: string;
    let look: string;
    try {
      const stat = await handle.stat({ bigint: true });
      text = await handle.readFile('utf8');
      look = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}\n${text}`;
    } finally {
      await handle.close();
    }
    try {
      const parsed = z.safeParse(claimSchema, JSON.parse(text));
      if (parsed.success) return { owner: parsed.data.owner, pid: parsed.data.pid, host: parsed.data.host, look };
    } catch {
      // Not JSON: a claim is written whole (renamed into place), so another version wrote it.
    }
    return { look };
  }

  private file(id: string): string {
    return path.join(this.folder, `${checkId(id)}.json`);
  }
}
