/**
 * The mocha run inside a VS Code extension host, shared by the suites that run there (integration,
 * VS Code's own chat): each suite's index.ts exports a `run()` that calls this with its own folder
 * (test-electron contract: `run()` settles when the tests finish). Every `*.test.js` of the folder
 * runs; MODEL_GATEWAY_TEST_GREP narrows them. Counts go to MODEL_GATEWAY_TEST_RESULTS so the runner
 * outside can add them to the summary line.
 */
import Mocha from 'mocha';
import { readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export function runMochaIn(folder: string, suiteName: string): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 30_000, color: false, reporter: 'spec' });
  const grep = process.env.MODEL_GATEWAY_TEST_GREP;
  if (grep) mocha.grep(grep);
  const files = readdirSync(folder).filter((f) => f.endsWith('.test.js')).sort();
  for (const f of files) mocha.addFile(path.join(folder, f));
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const s = runner.stats;
      const out = process.env.MODEL_GATEWAY_TEST_RESULTS;
      if (out) writeFileSync(out, JSON.stringify({ passed: s?.passes ?? 0, failed: s?.failures ?? 0, skipped: s?.pending ?? 0 }));
      if (failures > 0) reject(new Error(`${failures} ${suiteName} tests failed`));
      else resolve();
    });
  });
}
