/**
 * UI end-to-end tests: the packaged extension installed into a real VS Code (code-server) and
 * driven through headless Chromium with the keyboard, the palette and the mouse, against the
 * gateway double. One workbench for all `test/e2e/*.e2e.ts` files, which run in this process.
 *
 *   npx tsx test/e2e/run.ts [--grep <pattern>]
 */
import Mocha from 'mocha';
import { readdirSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { reportNotRun, tallyRun } from '../support/mochaResults';
import { saveFailureArtifacts } from '../vscode/browser';
import type { CodeServer } from '../vscode/codeServer';
import { setUiContext, ui } from './context';
import { startEnvironment, type E2eEnvironment, type EnvironmentOptions } from './environment';
import { clearNotifications, dismissInputs, parkMouse } from './workbench';

export interface UiSuiteResult {
  passed: number;
  failed: number;
  skipped: number;
}

export interface UiSuiteOptions {
  grep?: string;
  /** The folder of the scenario files; this one (`*.e2e.ts`) when absent. */
  dir?: string;
  /** Which VS Code and what more settings the workbench gets. */
  environment?: EnvironmentOptions;
}

/** Starts the environment, runs every `*.e2e.ts` file of the suite's folder in it, and stops it again, also on failure. */
export async function runUiSuite(opts: UiSuiteOptions = {}): Promise<UiSuiteResult> {
  const dir = opts.dir ?? __dirname;
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.e2e.ts'))
    .sort()
    .map((name) => path.join(dir, name));
  if (files.length === 0) throw new Error(`no *.e2e.ts files in ${dir}`);

  let env: E2eEnvironment | undefined;
  try {
    env = await startEnvironment(opts.environment);
    setUiContext({
      page: env.page,
      double: env.double,
      codeServer: env.codeServer,
      workspace: env.workspace,
      openWindow: env.openWindow,
      openInLanguage: env.openInLanguage,
    });
    return await runMocha(files, opts.grep);
  } finally {
    setUiContext(undefined);
    await env?.stop();
  }
}

function runMocha(files: string[], grep: string | undefined): Promise<UiSuiteResult> {
  const mocha = new Mocha({
    reporter: 'spec',
    // A scenario is a handful of palette round trips (about 1 s each on an idle machine, many times
    // that on two busy cores). Each step has its own limit (LIMITS in test/vscode/browser.ts); this
    // one only ends a scenario that is stuck as a whole, so it is well above a few step limits.
    timeout: 300_000,
    slow: 30_000,
    ...(grep !== undefined && { grep }),
    rootHooks: {
      async beforeEach(this: Mocha.Context) {
        const { page } = ui();
        // Scenarios share one workbench: start each from a closed palette and no leftover toasts.
        try {
          await dismissInputs(page);
          await clearNotifications(page);
          await parkMouse(page);
        } catch (error) {
          // A failed root beforeEach would make mocha skip every scenario after it. Fail this one
          // scenario with the reason instead; the next one starts over from its own beforeEach.
          const test = this.currentTest;
          if (!test) throw error;
          test.fn = () =>
            Promise.reject(
              new Error(`preparing the workbench for this scenario failed: ${String(error)}`, { cause: error }),
            );
        }
      },
      async afterEach(this: Mocha.Context) {
        const test = this.currentTest;
        if (test?.state !== 'failed') return;
        const { page, codeServer } = ui();
        await saveFailureArtifacts(page, test.fullTitle(), [codeServer.logFile, ...(await extensionLogs(codeServer))]);
      },
    },
  });
  for (const file of files) mocha.addFile(file);
  return new Promise<UiSuiteResult>((resolve, reject) => {
    mocha.loadFilesAsync().then(() => {
      const runner = mocha.run(() => {
        const tally = tallyRun(runner, mocha.suite);
        reportNotRun(tally);
        // Lets a second runUiSuite in the same process load the files afresh.
        mocha.dispose();
        resolve({ passed: tally.passed, failed: tally.failed, skipped: tally.skipped });
      });
    }, reject);
  });
}

/** The extension's own output channel and the extension host's log: where a failing step's cause usually is. */
async function extensionLogs(codeServer: CodeServer): Promise<string[]> {
  const logsDir = path.join(codeServer.scratchDir, 'ud', 'logs');
  const entries = await fsp.readdir(logsDir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter(
      (e) =>
        e.isFile() && (e.name.includes('Model Gateway') || e.name === 'exthost.log' || e.name === 'remoteexthost.log'),
    )
    .map((e) => path.join(e.parentPath, e.name));
}

/** A suite's command line (`--grep <pattern>`): runs it and exits with its outcome. */
export async function uiSuiteMain(name: string, opts: Omit<UiSuiteOptions, 'grep'> = {}): Promise<void> {
  const grepIndex = process.argv.indexOf('--grep');
  const grep = grepIndex >= 0 ? process.argv[grepIndex + 1] : undefined;
  const started = Date.now();
  let result: UiSuiteResult;
  try {
    result = await runUiSuite({ ...opts, ...(grep !== undefined && { grep }) });
  } catch (error) {
    // An environment that cannot start is one failure, never a silent "0 passed".
    console.error(`The ${name} suite could not run:`, error);
    result = { passed: 0, failed: 1, skipped: 0 };
  }
  console.log(`\n${name} suite took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped`);
  // Exit explicitly: a socket a failed test left open must not keep the run alive.
  process.exit(result.failed > 0 || result.passed === 0 ? 1 : 0);
}

if (require.main === module) void uiSuiteMain('UI');
