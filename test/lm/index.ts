/**
 * Loaded by the VS Code extension host (test-electron contract): `run()` runs the integration
 * suites with mocha and settles when they finish. Counts go to MODEL_GATEWAY_TEST_RESULTS so the
 * runner outside can add them to the summary line.
 */
import Mocha from 'mocha';
import { readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 30_000, color: false, reporter: 'spec' });
  const grep = process.env.MODEL_GATEWAY_TEST_GREP;
  if (grep) mocha.grep(grep);
  const files = readdirSync(__dirname).filter((f) => f.endsWith('.test.js')).sort();
  for (const f of files) mocha.addFile(path.join(__dirname, f));
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const s = runner.stats;
      const out = process.env.MODEL_GATEWAY_TEST_RESULTS;
      if (out) writeFileSync(out, JSON.stringify({ passed: s?.passes ?? 0, failed: s?.failures ?? 0, skipped: s?.pending ?? 0 }));
      if (failures > 0) reject(new Error(`${failures} VS Code chat provider tests failed`));
      else resolve();
    });
  });
}
