import * as assert from 'node:assert/strict';
import { isGatewayError } from '../../src/core/errors';
import { KeyQueue } from '../../src/core/keyQueue';

/** Whether a promise has settled, without waiting for it. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  // Two turns of the microtask queue let an already settled promise's handlers run.
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

describe('Key queue (concurrency per key)', () => {
  it('holds nothing until a limit is learnt', async () => {
    const queue = new KeyQueue();
    const slots = await Promise.all([queue.acquire('a'), queue.acquire('a'), queue.acquire('a')]);
    assert.equal(queue.state('a').inFlight, 3);
    for (const s of slots) s.release();
    assert.equal(queue.state('a').inFlight, 0);
  });

  it('learns the limit from what ran when the gateway refused, and holds later requests in order', async () => {
    const queue = new KeyQueue();
    const [a, b, refused] = await Promise.all([queue.acquire('k'), queue.acquire('k'), queue.acquire('k')]);
    // Three were out when the gateway refused the third: the two others are the limit.
    assert.equal(queue.learn('k', queue.state('k').inFlight), 2);
    refused?.release();
    const order: string[] = [];
    const first = queue.acquire('k').then((s) => (order.push('first'), s));
    const second = queue.acquire('k').then((s) => (order.push('second'), s));
    assert.equal(await settled(first), false, 'held while two run');
    assert.equal(queue.state('k').waiting, 2);
    a?.release();
    assert.equal(await settled(first), true);
    assert.equal(await settled(second), false);
    b?.release();
    await second;
    assert.deepEqual(order, ['first', 'second']);
    assert.equal(queue.state('k').inFlight, 2);
  });

  it('takes the limit the gateway stated over its own estimate, and keys apart', async () => {
    const queue = new KeyQueue();
    assert.equal(queue.learn('k', 5, 3), 3);
    assert.equal(queue.learn('k', 2), 3, 'an estimate never overrides a stated limit');
    assert.equal(queue.state('other').limit, undefined);
    assert.equal(queue.learn('solo', 1), 1, 'at least one always runs');
  });

  it('tells a request that it waits for a free slot, and only one that waits', async () => {
    const queue = new KeyQueue();
    queue.learn('k', 2, 1);
    const told: string[] = [];
    const running = await queue.acquire('k', undefined, () => told.push('first'));
    const queued = queue.acquire('k', undefined, () => told.push('second'));
    assert.deepEqual(told, ['second'], 'told at once, while it waits');
    running.release();
    (await queued).release();
    assert.deepEqual(told, ['second']);
  });

  it('gives up a queued request when its signal aborts, and lets the next one through', async () => {
    const queue = new KeyQueue();
    const running = await queue.acquire('k');
    queue.learn('k', 2);
    const controller = new AbortController();
    const cancelled = queue.acquire('k', controller.signal);
    const next = queue.acquire('k');
    controller.abort();
    await assert.rejects(cancelled, (e: unknown) => isGatewayError(e, 'cancelled'));
    assert.equal(queue.state('k').waiting, 1);
    running.release();
    const slot = await next;
    assert.equal(queue.state('k').inFlight, 1);
    slot.release();
    slot.release();
    assert.equal(queue.state('k').inFlight, 0, 'releasing twice counts once');
    await assert.rejects(queue.acquire('k', AbortSignal.abort()), (e: unknown) => isGatewayError(e, 'cancelled'));
  });

  it('gives a background request (a completion) the lowest place: only when free, and gives it up to one that must wait', async () => {
    const queue = new KeyQueue();
    let gaveUp = 0;
    const bg = queue.acquireBackground('k', () => gaveUp++);
    assert.ok(bg, 'free: it goes');
    const [a] = await Promise.all([queue.acquire('k')]);
    // The gateway refused a third: the two running are the limit.
    queue.learn('k', 3);
    assert.equal(
      queue.acquireBackground('k', () => undefined),
      undefined,
      'no room: skipped, not queued',
    );
    const waiting = queue.acquire('k');
    assert.equal(await settled(waiting), false);
    assert.equal(gaveUp, 1, 'the background request was told to give up its place');
    bg?.release();
    assert.equal(await settled(waiting), true);
    assert.equal(
      queue.acquireBackground('k', () => undefined),
      undefined,
      'full again',
    );
    a?.release();
    (await waiting).release();
    const later = queue.acquireBackground('k', () => undefined);
    assert.ok(later);
    later?.release();
    assert.equal(queue.state('k').inFlight, 0);
  });
});
