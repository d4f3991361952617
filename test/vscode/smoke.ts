/**
 * Proves the real-VS-Code harness end to end with a throwaway extension:
 * extension-host tests pass and fail as they should (directly and through test-electron with the
 * shim), and the packaged .vsix shows its command in the workbench's command palette.
 *
 *   npx tsx test/vscode/smoke.ts
 */
import { execFile } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openWorkbench, runCommand, saveFailureArtifacts, waitForNotification } from './browser';
import { ensureCodeServer, startCodeServer, workbenchUrl, type CodeServer } from './codeServer';
import { runExtensionTests } from './runInExtensionHost';
import { runWithTestElectron } from './testElectronEntry';

const execFileAsync = promisify(execFile);

const FIXTURES = path.join(__dirname, 'fixtures');
const DEV_PATH = path.join(FIXTURES, 'smoke-extension');
const TESTS_PATH = path.join(FIXTURES, 'smoke-suite', 'index.js');
const COMMAND_LABEL = 'Harness Smoke: Say Hello';
const NOTIFICATION = 'Hello from the harness smoke extension';

const timings: Array<{ step: string; seconds: number; ok: boolean }> = [];

async function step(name: string, fn: () => Promise<void>): Promise<void> {
  console.log(`\n=== ${name}`);
  const started = Date.now();
  let ok = false;
  try {
    await fn();
    ok = true;
  } catch (error) {
    console.error(`FAILED: ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
  timings.push({ step: name, seconds: (Date.now() - started) / 1000, ok });
}

function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

async function main(): Promise<number> {
  const scratch = await fsp.mkdtemp(path.join(os.tmpdir(), 'mg-smoke-'));
  const workspace = path.join(scratch, 'workspace');
  await fsp.mkdir(workspace);
  try {
    await step('install or reuse code-server', async () => {
      await ensureCodeServer();
    });

    await step('extension tests that pass (exit 0)', async () => {
      const { exitCode, log } = await runExtensionTests({ devPath: DEV_PATH, testsPath: TESTS_PATH, workspace });
      expect(exitCode === 0, `exit code ${exitCode}, expected 0`);
      expect(
        log.some((line) => line.includes('1 passing')),
        'no "1 passing" in the extension-host output',
      );
    });

    await step('extension tests with SMOKE_FAIL=1 (exit 1)', async () => {
      const { exitCode, log } = await runExtensionTests({
        devPath: DEV_PATH,
        testsPath: TESTS_PATH,
        workspace,
        env: { SMOKE_FAIL: '1' },
      });
      expect(exitCode === 1, `exit code ${exitCode}, expected 1`);
      expect(
        log.some((line) => line.includes('1 failing')),
        'no "1 failing" in the extension-host output',
      );
    });

    await step('test-electron entry point with the code-server shim (exit 0)', async () => {
      const exitCode = await runWithTestElectron({ devPath: DEV_PATH, testsPath: TESTS_PATH, workspace });
      expect(exitCode === 0, `exit code ${exitCode}, expected 0`);
    });

    const vsix = path.join(scratch, 'smoke-extension.vsix');
    await step('package the .vsix', async () => {
      // vsce from the repo's devDependencies: npx would look for it in the fixture's own package.json.
      const vsce = path.join(path.dirname(require.resolve('@vscode/vsce/package.json')), 'vsce');
      await execFileAsync(process.execPath, [vsce, 'package', '--no-dependencies', '--out', vsix], { cwd: DEV_PATH });
    });

    await step('installed .vsix: command in the palette, runs, notifies', async () => {
      let server: CodeServer | undefined;
      let browser: Browser | undefined;
      let page: Page | undefined;
      try {
        server = await startCodeServer({ workspace, scratchDir: path.join(scratch, 'ui'), vsixPaths: [vsix] });
        browser = await launchBrowser();
        page = await browser.newPage();
        await openWorkbench(page, workbenchUrl(server.url, workspace));
        // Fails unless the palette lists the command under its contributed category and title.
        await runCommand(page, COMMAND_LABEL);
        await waitForNotification(page, NOTIFICATION);
      } catch (error) {
        if (page) await saveFailureArtifacts(page, 'smoke-ui', server ? [server.logFile] : []);
        throw error;
      } finally {
        await browser?.close();
        await server?.stop();
      }
    });
  } finally {
    await fsp.rm(scratch, { recursive: true, force: true });
  }

  console.log('\n=== timings');
  for (const { step: name, seconds, ok } of timings)
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${seconds.toFixed(1).padStart(6)} s  ${name}`);
  return timings.every((t) => t.ok) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
