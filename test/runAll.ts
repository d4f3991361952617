/**
 * `npm test`: runs every suite (unit, then the real-VS-Code suites as they exist) and ends with the
 * one line CI reads: `N passed, N failed, N skipped`, summed over all suites.
 * `npm test -- --only unit` runs a subset while developing.
 */
import Mocha from 'mocha';
import { runChecksSuite } from './checks/run';
import { runUiSuite } from './e2e/run';
import { reportNotRun, tallyRun, type SuiteResult } from './support/mochaResults';
import { runIntegrationSuite } from './integration/run';
import { runLmSuite } from './lm/run';
import { runNativeSuite } from './native/run';
import { ensureCodeServer, VSCODE_1_100, VSCODE_1_139, type CodeServerBuild } from './vscode/codeServer';
import { runWebviewSuite } from './webview/chatView.webtest';
import * as path from 'node:path';
import { readdirSync } from 'node:fs';

export type { SuiteResult };

interface Suite {
  name: string;
  run(): Promise<SuiteResult>;
  /** The real VS Code the suite starts, if any. */
  vscode?: CodeServerBuild;
}

const root = path.resolve(__dirname, '..');

/** Files under `dir` whose names end with `suffix`, sorted (Node 20 has no fs.globSync). */
export function findFiles(dir: string, suffix: string): string[] {
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** Runs mocha files in this process (tsx is already loaded, so .ts files load directly). */
export function runMochaFiles(files: string[], options: Mocha.MochaOptions = {}): Promise<SuiteResult> {
  const mocha = new Mocha({ timeout: 20_000, reporter: 'spec', ...options });
  for (const file of files) mocha.addFile(file);
  return new Promise((resolve, reject) => {
    mocha
      .loadFilesAsync()
      .then(() => {
        const runner = mocha.run(() => {
          const tally = tallyRun(runner, mocha.suite);
          reportNotRun(tally);
          resolve({ passed: tally.passed, failed: tally.failed, skipped: tally.skipped });
        });
      })
      .catch(reject);
  });
}

const suites: Suite[] = [
  {
    // Type check, lint and format: a change that fails any of them fails CI like a failing test.
    name: 'checks',
    run: () => runChecksSuite(),
  },
  {
    name: 'unit',
    run: () => runMochaFiles(findFiles(path.join(root, 'test/unit'), '.test.ts')),
  },
  {
    // The gateway double and the fixtures on their own: they test the test doubles, not src/.
    name: 'double',
    run: () => runMochaFiles(findFiles(path.join(root, 'test/double'), '.test.ts')),
  },
  {
    name: 'webview',
    run: () => runWebviewSuite(),
  },
  {
    name: 'integration',
    run: () => runIntegrationSuite(),
    vscode: VSCODE_1_100,
  },
  {
    // VS Code's own chat (the language model provider, API stable from 1.104) in VS Code 1.139.
    name: 'lm',
    run: () => runLmSuite(),
    vscode: VSCODE_1_139,
  },
  {
    name: 'ui',
    run: () => runUiSuite(),
    vscode: VSCODE_1_100,
  },
  {
    // VS Code's own Chat view and agent mode in VS Code 1.139, driven in the browser.
    name: 'native',
    run: () => runNativeSuite(),
    vscode: VSCODE_1_139,
  },
];

async function main(): Promise<void> {
  const onlyIndex = process.argv.indexOf('--only');
  const only = onlyIndex >= 0 ? process.argv[onlyIndex + 1]?.split(',') : undefined;
  const total: SuiteResult = { passed: 0, failed: 0, skipped: 0 };
  installAhead(suites.filter((suite) => !only || only.includes(suite.name)));
  for (const suite of suites) {
    if (only && !only.includes(suite.name)) continue;
    console.log(`\n=== ${suite.name} tests ===`);
    let result: SuiteResult;
    try {
      result = await suite.run();
    } catch (err) {
      // A suite that cannot even start counts as one failure, never as silently skipped.
      console.error(`The ${suite.name} suite could not run:`, err);
      result = { passed: 0, failed: 1, skipped: 0 };
    }
    console.log(`--- ${suite.name}: ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped`);
    total.passed += result.passed;
    total.failed += result.failed;
    total.skipped += result.skipped;
  }
  console.log(`\n${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
  // Exit explicitly: a server a failed test left open must not keep CI waiting.
  process.exit(total.failed > 0 || total.passed === 0 ? 1 : 0);
}

/**
 * Starts the installs of the VS Codes the chosen suites need (once per machine; minutes on a fresh
 * one) while the suites before them run. A suite that comes to its VS Code first waits for the
 * install under its lock; an install that fails here is tried again, and reported, by that suite.
 */
function installAhead(chosen: Suite[]): void {
  const builds = [...new Set(chosen.flatMap((suite) => (suite.vscode ? [suite.vscode] : [])))];
  void builds.reduce<Promise<unknown>>(
    (previous, build) =>
      previous.then(() =>
        ensureCodeServer(build).catch((error: unknown) =>
          console.error(`Installing code-server ${build.version} ahead failed; its suites try again: ${String(error)}`),
        ),
      ),
    Promise.resolve(),
  );
}

if (require.main === module) void main();
