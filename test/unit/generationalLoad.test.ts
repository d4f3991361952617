import { strict as assert } from 'node:assert';
import { GenerationalLoad } from '../../src/core/generationalLoad';

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('GenerationalLoad', () => {
  it('shares one load between concurrent callers of the same generation', async () => {
    const loads = new GenerationalLoad<number>();
    const gate = deferred<number>();
    let started = 0;
    const load = (): Promise<number> => {
      started++;
      return gate.promise;
    };
    const a = loads.run(load);
    const b = loads.run(load);
    assert.equal(started, 1);
    assert.equal(loads.busy, true);
    gate.resolve(7);
    assert.deepEqual(await Promise.all([a, b]), [7, 7]);
    assert.equal(loads.busy, false);
  });

  it('starts a fresh load after invalidate, and the older one learns it is stale', async () => {
    const loads = new GenerationalLoad<string>();
    const first = deferred<void>();
    const seen: boolean[] = [];
    const older = loads.run(async (generation) => {
      await first.promise;
      seen.push(loads.isCurrent(generation));
      return 'old';
    });
    loads.invalidate();
    const newer = loads.run(async (generation) => {
      seen.push(loads.isCurrent(generation));
      return 'new';
    });
    assert.equal(await newer, 'new');
    first.resolve();
    assert.equal(await older, 'old');
    assert.deepEqual(seen, [true, false]);
  });

  it('a failed load is not shared with the next caller', async () => {
    const loads = new GenerationalLoad<number>();
    await assert.rejects(
      loads.run(() => Promise.reject(new Error('down'))),
      /down/,
    );
    assert.equal(await loads.run(() => Promise.resolve(1)), 1);
  });
});
