import { GatewayError } from './errors';
import { words } from '../shared/words';

/** The key of today, for callers that do not name one. */
export const DEFAULT_KEY_ID = 'default';

/** A place in the queue, held until the request is over; releasing twice is harmless. */
export interface KeySlot {
  release(): void;
}

interface Waiter {
  grant(): void;
  signal?: AbortSignal;
}

interface Gate {
  inFlight: number;
  /** The concurrency the gateway allows this key; undefined until a refusal taught it. */
  limit?: number;
  /** The limit came from the gateway's own words (not estimated from what was running). */
  stated: boolean;
  waiting: Waiter[];
  /** How to make each running background request give up its place (see acquireBackground). */
  background: Set<() => void>;
}

/**
 * Holds the requests of one key so that no more run at once than the gateway allows it. Gateways
 * of the new-api kind refuse a request past a key's concurrency limit with HTTP 429 (they never
 * queue it themselves), so a burst from several front ends of one window (the sidebar chat, VS
 * Code's chat, agent and document tools) would fail all but the first few. Until the gateway has
 * refused one, nothing is held; the limit it then states, or failing that the number that were
 * running when it refused, holds later requests in order until one of the running ones ends.
 * Keys are opaque identifiers chosen by the caller (never the key itself).
 */
export class KeyQueue {
  private readonly gates = new Map<string, Gate>();

  /**
   * Resolves once the request may go; rejects with a cancellation when `signal` aborts first.
   * `onWait` is told when the request has to wait for a free slot (the caller may say so).
   */
  acquire(keyId: string = DEFAULT_KEY_ID, signal?: AbortSignal, onWait?: () => void): Promise<KeySlot> {
    const gate = this.gate(keyId);
    if (signal?.aborted) return Promise.reject(cancelled());
    if (!gate.waiting.length && hasRoom(gate)) return Promise.resolve(this.take(gate));
    // A request that must wait never waits for a background one: those give up their place.
    for (const giveUp of [...gate.background]) giveUp();
    onWait?.();
    return new Promise<KeySlot>((resolve, reject) => {
      const onAbort = () => {
        gate.waiting = gate.waiting.filter((w) => w !== waiter);
        reject(cancelled());
        // Whoever queued behind this one may fit now.
        this.pump(gate);
      };
      const waiter: Waiter = {
        signal,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.take(gate));
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      gate.waiting.push(waiter);
    });
  }

  /**
   * The lowest place in the queue, for requests nobody waits for (inline completions): a place only
   * when nothing of the key waits and there is room, else undefined (the caller skips the request
   * rather than queue it). While it runs, a request of the key that has to wait calls `giveUp`, which
   * must end it (abort it), so that it never delays a chat answer or an agent's request.
   */
  acquireBackground(keyId: string = DEFAULT_KEY_ID, giveUp: () => void): KeySlot | undefined {
    const gate = this.gate(keyId);
    if (gate.waiting.length || !hasRoom(gate)) return undefined;
    gate.background.add(giveUp);
    const slot = this.take(gate);
    return {
      release: () => {
        gate.background.delete(giveUp);
        slot.release();
      },
    };
  }

  /**
   * The gateway refused a request of this key for concurrency while `running` of this window's
   * requests (the refused one included) were out. A limit the gateway stated wins; otherwise the
   * others that were running are taken as the limit (at least one), never raising a lower one.
   */
  learn(keyId: string = DEFAULT_KEY_ID, running: number, stated?: number): number {
    const gate = this.gate(keyId);
    if (stated !== undefined && stated >= 1) {
      gate.limit = Math.floor(stated);
      gate.stated = true;
    } else if (!gate.stated) {
      const estimate = Math.max(1, running - 1);
      gate.limit = gate.limit === undefined ? estimate : Math.min(gate.limit, estimate);
    }
    return gate.limit ?? 1;
  }

  /** What is known about a key: its limit (undefined while none was learnt), how many run and wait. */
  state(keyId: string = DEFAULT_KEY_ID): { limit?: number; stated: boolean; inFlight: number; waiting: number } {
    const gate = this.gates.get(keyId);
    return {
      ...(gate?.limit !== undefined ? { limit: gate.limit } : {}),
      stated: gate?.stated ?? false,
      inFlight: gate?.inFlight ?? 0,
      waiting: gate?.waiting.length ?? 0,
    };
  }

  private gate(keyId: string): Gate {
    let gate = this.gates.get(keyId);
    if (!gate) this.gates.set(keyId, (gate = { inFlight: 0, stated: false, waiting: [], background: new Set() }));
    return gate;
  }

  private take(gate: Gate): KeySlot {
    gate.inFlight++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        gate.inFlight--;
        this.pump(gate);
      },
    };
  }

  private pump(gate: Gate): void {
    while (gate.waiting.length && hasRoom(gate)) {
      const next = gate.waiting.shift() as Waiter;
      if (next.signal?.aborted) continue;
      next.grant();
    }
  }
}

function hasRoom(gate: Gate): boolean {
  return gate.limit === undefined || gate.inFlight < gate.limit;
}

function cancelled(): GatewayError {
  return new GatewayError('cancelled', words('The request was cancelled.'));
}
