/**
 * Which window is writing an answer into which conversation, visible to every window of the
 * profile: one small claim file per conversation in the store's `.claims` folder, taken and given
 * back under the store's cross-process lock (lock.ts), so of two windows claiming one conversation
 * exactly one wins. A window refreshes the time of its claims every heartbeat; a claim not
 * refreshed for a few heartbeats belongs to a window that crashed or hung and is free again.
 * No `vscode` import.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { writeFileAtomic } from '../../atomicFile';
import { checkId, isMissing, STORE_LOCK } from './files';
import { FileLock } from './lock';

/** How often a window refreshes its claims. */
export const CLAIM_HEARTBEAT_MS = 5000;
/** A claim not refreshed for this many heartbeats is free (its window died or hangs). */
export const CLAIM_EXPIRY_HEARTBEATS = 4;

/** In a folder of its own, so that claiming leaves the conversations folder's time alone. */
const CLAIMS_DIR = '.claims';

const claimSchema = z.object({
  v: z.literal(1),
  owner: z.string(),
  pid: z.number(),
  host: z.string(),
  since: z.number(),
});
type ClaimFile = z.infer<typeof claimSchema>;
/** A claim as read: `owner` is undefined for a claim this version cannot read (a newer window's): it counts as another window's. */
interface SeenClaim {
  owner: string | undefined;
  mtimeMs: number;
}

export interface ClaimOptions {
  heartbeatMs?: number;
  /** Default: CLAIM_EXPIRY_HEARTBEATS heartbeats. */
  expiryMs?: number;
  /** See FileLockOptions.staleMs. */
  lockStaleMs?: number;
  /** Told when a claim this window held was found taken over or removed (the conversation was deleted). */
  onLost?: (id: string) => void;
}

/** One window's claims on the conversations of a store folder. */
export class ConversationClaims {
  /** This window, as its claim files name it. */
  readonly owner = randomUUID();
  private readonly lock: FileLock;
  private readonly folder: string;
  private readonly heartbeatMs: number;
  private readonly expiryMs: number;
  private readonly held = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    dir: string,
    private readonly options: ClaimOptions = {},
  ) {
    this.lock = new FileLock(path.join(dir, STORE_LOCK), { staleMs: options.lockStaleMs });
    this.folder = path.join(dir, CLAIMS_DIR);
    this.heartbeatMs = options.heartbeatMs ?? CLAIM_HEARTBEAT_MS;
    this.expiryMs = options.expiryMs ?? this.heartbeatMs * CLAIM_EXPIRY_HEARTBEATS;
  }

  /**
   * Claims conversation `id` for this window: true when it is now this window's, false when
   * another window holds a live claim on it. Throws when the lock or the disk fails.
   */
  async take(id: string): Promise<boolean> {
    const taken = await this.lock.run(async () => {
      const current = await this.read(id);
      if (current && current.owner !== this.owner && !this.expired(current.mtimeMs)) return false;
      await fs.mkdir(this.folder, { recursive: true });
      const claim: ClaimFile = { v: 1, owner: this.owner, pid: process.pid, host: os.hostname(), since: Date.now() };
      await writeFileAtomic(this.file(id), JSON.stringify(claim), { overwrite: true, durable: false });
      return true;
    });
    if (taken) {
      this.held.add(id);
      this.startHeartbeat();
    }
    return taken;
  }

  /** Gives the claim back (only this window's own claim is removed). */
  async release(id: string): Promise<void> {
    this.held.delete(id);
    if (!this.held.size) this.stopHeartbeat();
    await this.lock.run(async () => {
      const current = await this.read(id);
      if (current?.owner === this.owner) await fs.rm(this.file(id), { force: true });
    });
  }

  /** Removes any window's claim on a conversation that was deleted; its writer learns at its next heartbeat. */
  async forget(id: string): Promise<void> {
    await this.lock.run(() => fs.rm(this.file(id), { force: true }));
  }

  /** Whether another window holds a live claim on `id` (read without the lock: a hint for the view). */
  async heldElsewhere(id: string): Promise<boolean> {
    const current = await this.read(id).catch(() => undefined);
    return current !== undefined && current.owner !== this.owner && !this.expired(current.mtimeMs);
  }

  dispose(): void {
    this.stopHeartbeat();
  }

  /** Refreshes every claim still this window's; one taken over or removed meanwhile is reported lost. */
  private async beat(): Promise<void> {
    for (const id of [...this.held]) {
      const mine = await this.lock
        .run(async () => {
          const current = await this.read(id);
          if (current?.owner !== this.owner) return false;
          const now = new Date();
          await fs.utimes(this.file(id), now, now);
          return true;
        })
        // A lock or disk failure is tried again next beat; the claim stays this window's meanwhile.
        .catch(() => true);
      if (!mine && this.held.delete(id)) this.options.onLost?.(id);
    }
    if (!this.held.size) this.stopHeartbeat();
  }

  private startHeartbeat(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.beat(), this.heartbeatMs);
    // The heartbeat must never keep a process (a test, a closing extension host) alive.
    this.timer.unref();
  }

  private stopHeartbeat(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private expired(mtimeMs: number): boolean {
    return Date.now() - mtimeMs > this.expiryMs;
  }

  /** The claim on `id` and when it was last refreshed; undefined when there is none. */
  private async read(id: string): Promise<SeenClaim | undefined> {
    const file = this.file(id);
    let text: string;
    let mtimeMs: number;
    try {
      [text, mtimeMs] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file).then((s) => s.mtimeMs)]);
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    let owner: string | undefined;
    try {
      const parsed = z.safeParse(claimSchema, JSON.parse(text));
      if (parsed.success) owner = parsed.data.owner;
    } catch {
      // Not JSON: a claim is written whole (renamed into place), so another version wrote it.
    }
    return { owner, mtimeMs };
  }

  private file(id: string): string {
    return path.join(this.folder, `${checkId(id)}.json`);
  }
}
