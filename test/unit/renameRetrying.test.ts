import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { renameRetrying } from '../../src/core/atomicFile';

/** A rename that fails with `code` the first `failures` times, then does the real rename. */
function flakyRename(
  code: string,
  failures: number,
): { rename: (from: string, to: string) => Promise<void>; calls: () => number } {
  let calls = 0;
  return {
    rename: async (from, to) => {
      calls++;
      if (calls <= failures)
        throw Object.assign(new Error(`${code}: operation not permitted, rename '${from}' -> '${to}'`), { code });
      await fs.rename(from, to);
    },
    calls: () => calls,
  };
}

describe('renameRetrying: a rename Windows refuses while another window reads the file', () => {
  let dir: string;
  const waits: number[] = [];
  const sleep = async (ms: number) => void waits.push(ms);

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rename-retry-'));
    waits.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const files = () => {
    const from = path.join(dir, '.chat.json.part');
    const to = path.join(dir, 'chat.json');
    writeFileSync(from, 'new');
    writeFileSync(to, 'old');
    return { from, to };
  };

  for (const code of ['EPERM', 'EBUSY', 'EACCES']) {
    it(`on Windows, succeeds once a rename failing with ${code} goes through, waiting longer each time`, async () => {
      const { from, to } = files();
      const flaky = flakyRename(code, 4);
      await renameRetrying(from, to, { rename: flaky.rename, platform: 'win32', sleep });
      assert.equal(readFileSync(to, 'utf8'), 'new');
      assert.equal(flaky.calls(), 5);
      assert.deepEqual(waits, [10, 20, 30, 40]);
    });
  }

  it('on Windows, waits at most 100 ms between tries', async () => {
    const { from, to } = files();
    await renameRetrying(from, to, { rename: flakyRename('EBUSY', 14).rename, platform: 'win32', sleep });
    assert.equal(Math.max(...waits), 100);
    assert.equal(waits.length, 14);
  });

  it('on Windows, gives up with the last error once the time allowed is over', async () => {
    const { from, to } = files();
    // Each wait really passes, 100 ms at a time at most, so the bound is met in well under a minute.
    const failing = flakyRename('EPERM', Number.POSITIVE_INFINITY);
    await assert.rejects(
      renameRetrying(from, to, { rename: failing.rename, platform: 'win32' }),
      (e: unknown) => (e as NodeJS.ErrnoException).code === 'EPERM',
    );
    assert.ok(failing.calls() > 5, `${failing.calls()} tries`);
    assert.equal(readFileSync(to, 'utf8'), 'old', 'the old file is left as it was');
  });

  it('does not retry other failures, nor these codes where they are not transient (Linux, macOS)', async () => {
    const { from, to } = files();
    const missing = flakyRename('ENOENT', 1);
    await assert.rejects(
      renameRetrying(from, to, { rename: missing.rename, platform: 'win32', sleep }),
      (e: unknown) => (e as NodeJS.ErrnoException).code === 'ENOENT',
    );
    assert.equal(missing.calls(), 1);
    for (const platform of ['linux', 'darwin'] as const) {
      const denied = flakyRename('EACCES', 1);
      await assert.rejects(
        renameRetrying(from, to, { rename: denied.rename, platform, sleep }),
        (e: unknown) => (e as NodeJS.ErrnoException).code === 'EACCES',
      );
      assert.equal(denied.calls(), 1, platform);
    }
    assert.deepEqual(waits, []);
  });
});
