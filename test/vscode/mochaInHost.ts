/**
 * The mocha run inside a VS Code extension host, shared by the suites that run there (integration,
 * VS Code's own chat): each suite's index.ts exports a `run()` that calls this with its own folder
 * (test-electron contract: `run()` settles when the tests finish). Every `*.test.js` of the folder
 * runs; MODEL_GATEWAY_TEST_GREP narrows them. Counts go to MODEL_GATEWAY_TEST_RESULTS so the runner
 * outside can add them to the summary line; tests a failed hook kept from running count as failed.
 */
import Mocha from 'mocha';
import { appendFileSync, readdirSync, writeFileSync } from 'node:fs';
import { format } from 'node:util';
import * as path from 'node:path';
import { reportNotRun, tallyRun } from '../support/mochaResults';

export function runMochaIn(folder: string, suiteName: string): Promise<void> {
  // Generous: the extension host shares two busy cores with other work; a hung step still fails.
  const mocha = new Mocha({ ui: 'bdd', timeout: 120_000, slow: 10_000, color: false, reporter: 'spec' });
  // Where no workbench page relays the extension host's console (tests run from installed
  // extensions), the report also goes to this file.
  const logFile = process.env.MODEL_GATEWAY_TEST_LOG;
  if (logFile) {
    const consoleLog = Mocha.reporters.Base.consoleLog;
    Mocha.reporters.Base.consoleLog = (...args: unknown[]) => {
      appendFileSync(logFile, format(...args) + '\n');
      consoleLog(...args);
    };
  }
  const grep = process.env.MODEL_GATEWAY_TEST_GREP;
  if (grep) mocha.grep(grep);
  const files = readdirSync(folder)
    .filter((f) => f.endsWith('.test.js'))
    .sort();
  for (const f of files) mocha.addFile(path.join(folder, f));
  return new Promise((resolve, reject) => {
    const out = process.env.MODEL_GATEWAY_TEST_RESULTS;
    const runner = mocha.run(() => {
      const tally = tallyRun(runner, mocha.suite);
      reportNotRun(tally);
      const { passed, failed, skipped } = tally;
      if (out) writeFileSync(out, JSON.stringify({ passed, failed, skipped, total: runner.total, done: true }));
      if (failed > 0) reject(new Error(`${failed} ${suiteName} tests failed or did not run`));
      else resolve();
    });
    // Written after every test too: if the window dies or the run is cut off by the runner's time
    // limit, the counts so far and how many tests never ran are still known outside.
    if (out) {
      runner.on('test end', () => {
        const s = runner.stats;
        writeFileSync(
          out,
          JSON.stringify({
            passed: s?.passes ?? 0,
            failed: s?.failures ?? 0,
            skipped: s?.pending ?? 0,
            total: runner.total,
            done: false,
          }),
        );
      });
    }
  });
}
