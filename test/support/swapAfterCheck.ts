import assert from 'node:assert/strict';
import * as fsModule from 'node:fs';
import * as path from 'node:path';

/**
 * Runs `swap` once, right after the workspace-file policy resolved `target`'s links and judged it:
 * the moment between the check of a path and the read of the file, where another process (a build
 * script, a tool the model ran) can put a link in its place.
 */
export async function withSwapAfterCheck<T>(target: string, swap: () => void, run: () => Promise<T>): Promise<T> {
  // The module's own promises object: what the policy calls `fs.realpath` on at call time.
  const fsp = fsModule.promises as unknown as { realpath: (p: string) => Promise<string> };
  const realpath = fsp.realpath;
  let swapped = false;
  fsp.realpath = async (p: string) => {
    const real = await realpath(p);
    if (!swapped && path.resolve(p) === target) {
      swapped = true;
      swap();
    }
    return real;
  };
  try {
    return await run();
  } finally {
    fsp.realpath = realpath;
    assert.ok(swapped, 'the swap happened');
  }
}
