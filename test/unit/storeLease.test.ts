/**
 * The store's lock is a lease that cannot be held twice: staleness is judged by what a waiter
 * itself saw on its monotonic clock, never by another process's file time against its own clock,
 * and a holder fences every write. Two lock instances on one file stand for two windows; injected
 * clocks, heartbeats and a hook inside the fence make freezes and clock steps deterministic.
 */
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import { type StoredMessage } from '../../src/core/chat/store/log';
import { ConversationClaims } from '../../src/core/chat/store/claims';
import { FileLock, LEASE_LOST } from '../../src/core/chat/store/lock';
import type { Schedule } from '../../src/core/chat/store/lease';

const user = (id: string): StoredMessage => ({ id, role: 'user', text: `text of ${id}`, status: 'done', createdAt: 1 });

/** A monotonic clock the test moves, and a heartbeat that beats only when the test says. */
class Manual {
  now = 1_000_000;
  private readonly ticks = new Set<() => void>();
  readonly clock = (): number => this.now;
  readonly schedule: Schedule = (tick) => {
    this.ticks.add(tick);
    return () => this.ticks.delete(tick);
  };
  beat(): void {
    for (const tick of this.ticks) tick();
  }
}

/** Yields to the event loop `n` times (real timers: another instance's polling runs meanwhile). */
const turns = async (n = 1): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 5));
};

/**
 * Beats until a beat's write is in the file. A beat asked for while the last one still writes is
 * skipped, and on a busy machine a write can outlast a turn, or its end reach this process a moment
 * after its bytes are in the file: so the beat is asked for again until one has landed.
 */
async function beatLanded(clock: Manual, file: string): Promise<void> {
  const before = readFileSync(file, 'utf8');
  for (let round = 0; round < 4000; round++) {
    clock.beat();
    await turns();
    if (readFileSync(file, 'utf8') !== before) return;
  }
}

/** Keeps moving `clock` by `stepMs` (and giving turns) until `done` says so; fails after many rounds. */
async function advanceUntil(clock: Manual, stepMs: number, done: () => boolean, what: string): Promise<void> {
  for (let round = 0; round < 4000; round++) {
    if (done()) return;
    clock.now += stepMs;
    await turns();
  }
  throw new Error(`never happened: ${what}`);
}

function settled<T>(promise: Promise<T>): { done: () => boolean; promise: Promise<T> } {
  let done = false;
  const tracked = promise.finally(() => (done = true));
  tracked.catch(() => undefined);
  return { done: () => done, promise: tracked };
}

describe('the store lease', function () {
  this.timeout(60_000);
  let dir: string;
  let file: string;
  const stores: ConversationStore[] = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'store-lease-'));
    file = path.join(dir, 'test.lock');
  });
  afterEach(() => {
    for (const s of stores.splice(0)) s.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a holder frozen inside the critical section past the lease writes nothing after another took over, and reports the loss', async () => {
    const staleMs = 30_000;
    const a = new Manual();
    const b = new Manual();
    let freeze: Promise<void> | undefined;
    let frozen = false;
    const storeA = new ConversationStore(dir, {
      lockStaleMs: staleMs,
      watch: 'poll',
      lock: {
        clock: a.clock,
        schedule: a.schedule,
        beforeFence: async () => {
          if (!freeze) return;
          frozen = true;
          await freeze;
        },
      },
    });
    const storeB = new ConversationStore(dir, {
      lockStaleMs: staleMs,
      watch: 'poll',
      lock: { clock: b.clock, schedule: b.schedule },
    });
    stores.push(storeA, storeB);
    const c = await storeA.create({ title: 'shared' });
    await storeA.append(c.id, user('a0'));

    let resume!: () => void;
    freeze = new Promise((resolve) => (resume = resolve));
    // A computes where to append, then stops (a laptop sleeping) just before its write.
    const writeA = settled(storeA.append(c.id, user('a1')));
    while (!frozen) await turns();
    const writeB = settled(storeB.append(c.id, user('b1')));
    await turns(5);
    assert.equal(writeB.done(), false, 'B waits while A holds a lease it has not seen go stale');
    await advanceUntil(b, 1000, writeB.done, 'B takes the lock over once it saw it unchanged for the lease');
    assert.equal(await writeB.promise, true);
    assert.equal(await storeB.append(c.id, user('b2')), true);

    // A's own clock moved on while it was frozen; it resumes inside its critical section.
    a.now += staleMs * 2;
    freeze = undefined;
    resume();
    await assert.rejects(writeA.promise, (err: { code?: string }) => err.code === LEASE_LOST);
    const texts = (await storeB.load(c.id))?.messages.map((m) => m.id);
    assert.deepEqual(texts, ['a0', 'b1', 'b2'], 'every acknowledged message of B is there, and nothing of the stale A');
    assert.ok(!readFileSync(path.join(dir, `${c.id}.log`), 'utf8').includes('"a1"'), 'A wrote nothing');
    // A's next change takes the lock afresh and works.
    assert.equal(await storeA.append(c.id, user('a2')), true);
    assert.deepEqual(
      (await storeB.load(c.id))?.messages.map((m) => m.id),
      ['a0', 'b1', 'b2', 'a2'],
    );
  });

  it('a holder that lost its lease leaves the new holder’s lock in place', async () => {
    const a = new Manual();
    const b = new Manual();
    let resume!: () => void;
    const freeze = new Promise<void>((resolve) => (resume = resolve));
    let frozen = false;
    const one = new FileLock(file, {
      staleMs: 30_000,
      clock: a.clock,
      schedule: a.schedule,
      beforeFence: async () => {
        frozen = true;
        await freeze;
      },
    });
    const two = new FileLock(file, { staleMs: 30_000, clock: b.clock, schedule: b.schedule });
    const stale = settled(one.run(() => one.fence()));
    while (!frozen) await turns();
    let inside = false;
    let leave!: () => void;
    const left = new Promise<void>((resolve) => (leave = resolve));
    const fresh = settled(
      two.run(async () => {
        inside = true;
        await two.fence();
        await left;
        await two.fence();
      }),
    );
    await advanceUntil(b, 1000, () => inside, 'two takes over');
    const held = statSync(file).ino;
    a.now += 60_000;
    resume();
    await assert.rejects(stale.promise, (err: { code?: string }) => err.code === LEASE_LOST);
    assert.equal(statSync(file).ino, held, 'the stale holder did not remove the new one’s lock');
    leave();
    await fresh.promise;
  });

  it('a holder whose own beat came too late (its process was paused) has lost the lease even if nobody took it', async () => {
    const a = new Manual();
    const lock = new FileLock(file, { staleMs: 30_000, clock: a.clock, schedule: a.schedule });
    await assert.rejects(
      lock.run(async () => {
        await lock.fence();
        a.now += 25_000;
        a.beat();
        await turns();
        await lock.fence();
      }),
      (err: { code?: string }) => err.code === LEASE_LOST,
    );
    // Beats in time keep it.
    assert.equal(
      await lock.run(async () => {
        for (let i = 0; i < 10; i++) {
          a.now += 4_000;
          await beatLanded(a, file);
        }
        await lock.fence();
        return 'kept';
      }),
      'kept',
    );
  });

  it('a live holder keeps its lock whatever its file time says (its clock stepped back, or the waiter’s forward)', async () => {
    // A lease far longer than the holder's loop takes on a busy machine: the waiter must not see the
    // holder unchanged for a whole lease while it is alive, whatever the file's times say.
    const one = new FileLock(file, { staleMs: 10_000 });
    const two = new FileLock(file, { staleMs: 10_000, timeoutMs: 60_000 });
    let inside = 0;
    let most = 0;
    let oneDone = false;
    let twoIn = false;
    const first = one.run(async () => {
      inside++;
      most = Math.max(most, inside);
      // The holder's heartbeat writes times from a clock an hour behind (or the waiter's is an hour ahead).
      for (let i = 0; i < 40; i++) {
        const old = new Date(Date.now() - 60 * 60_000);
        utimesSync(file, old, old);
        await turns();
      }
      assert.equal(twoIn, false);
      inside--;
      oneDone = true;
    });
    const second = two.run(async () => {
      twoIn = true;
      inside++;
      most = Math.max(most, inside);
      inside--;
      return oneDone;
    });
    await first;
    assert.equal(await second, true, 'the waiter got in only after the holder left');
    assert.equal(most, 1);
  });

  it('a dead holder’s lock is taken over whatever its file time says (its clock was ahead, or ours stepped back)', async () => {
    // Another machine's window (so its process cannot be looked up) left a lock dated an hour ahead.
    writeFileSync(file, '12345 another-host 0 dead\n0000000000000000');
    const ahead = new Date(Date.now() + 60 * 60_000);
    utimesSync(file, ahead, ahead);
    const lock = new FileLock(file, { staleMs: 300, timeoutMs: 30_000 });
    assert.equal(await lock.run(async () => 'taken'), 'taken');
  });

  it('a dead holder’s lock is not taken over before the waiter saw it unchanged for the lease, however old its file time', async () => {
    writeFileSync(file, '12345 another-host 0 dead\n0000000000000000');
    const long = new Date(Date.now() - 24 * 60 * 60_000);
    utimesSync(file, long, long);
    const b = new Manual();
    const lock = new FileLock(file, { staleMs: 30_000, clock: b.clock, schedule: b.schedule });
    const taking = settled(lock.run(async () => 'taken'));
    await turns(10);
    b.now += 29_000;
    await turns(10);
    assert.equal(taking.done(), false, 'not yet: seen unchanged for 29 s of its own clock');
    b.now += 2_000;
    await advanceUntil(b, 0, taking.done, 'taken over');
    assert.equal(await taking.promise, 'taken');
  });

  it('of three waiters on a dead lock, only one at a time passes the fence', async () => {
    for (let round = 0; round < 10; round++) {
      writeFileSync(file, '12345 another-host 0 dead\n0000000000000000');
      const long = new Date(Date.now() - 120_000);
      utimesSync(file, long, long);
      let inside = 0;
      let most = 0;
      const waiters = [0, 1, 2].map(() => new FileLock(file, { staleMs: 300, timeoutMs: 30_000 }));
      const results = await Promise.allSettled(
        waiters.map((lock) =>
          lock.run(async () => {
            await lock.fence();
            inside++;
            most = Math.max(most, inside);
            await turns(2);
            inside--;
          }),
        ),
      );
      assert.equal(most, 1, `round ${round}: two holders at once`);
      // A waiter whose fresh lock another moved aside learns it before it writes anything.
      for (const r of results)
        if (r.status === 'rejected') assert.equal((r.reason as { code?: string }).code, LEASE_LOST);
      assert.ok(results.some((r) => r.status === 'fulfilled'));
    }
  });

  it('an answer still marked as streaming shows as cut as soon as its window’s claim is free, not after a fixed time', async () => {
    const writer = new ConversationStore(dir, { watch: 'poll' });
    const reader = new ConversationStore(dir, { watch: 'poll' });
    stores.push(writer, reader);
    const writerClaims = new ConversationClaims(dir, { heartbeatMs: 60_000 });
    const readerClaims = new ConversationClaims(dir, { heartbeatMs: 60_000 });
    reader.useClaims(readerClaims);
    const c = await writer.create({ title: 'answering' });
    assert.equal(await writerClaims.take(c.id), true);
    await writer.append(c.id, { ...user('q'), role: 'user' });
    await writer.append(c.id, { id: 'a', role: 'assistant', text: 'half', status: 'streaming', createdAt: 1 });
    const status = async () => (await reader.open(c.id))?.messages.at(-1)?.status;
    assert.equal(await status(), 'streaming', 'its window holds the claim: still being written');
    // The writing window closes (or dies): its claim is free at once, and so is the answer shown as cut.
    writerClaims.dispose();
    assert.equal(await status(), 'cut');
    readerClaims.dispose();
  });
});
