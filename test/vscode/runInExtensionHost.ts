/**
 * The @vscode/test-electron contract (load a development extension, call the tests module's run(),
 * exit 0 or 1) on code-server: the payload goes in the workbench URL and the exit code comes from
 * the page's window.codeAutomationExit, because the server log reports 0 even when tests fail.
 */
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { format } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { launchBrowser, LIMITS, saveFailureArtifacts } from './browser';
import { packageExtension } from './builds';
import { startCodeServer, workbenchUrl, type CodeServer, type CodeServerBuild } from './codeServer';

const execFileAsync = promisify(execFile);
const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface ExtensionTestsOptions {
  /** Folder of the extension under test (its package.json). */
  devPath: string;
  /** Module whose exported run() runs the tests inside the extension host. */
  testsPath: string;
  workspace: string;
  /** Reaches the extension host through the server's environment. */
  env?: Record<string, string>;
  settings?: Record<string, unknown>;
  /** Which VS Code runs the tests; 1.100 by default. */
  build?: CodeServerBuild;
  timeoutMs?: number;
  /** Runs after the server stopped and before its scratch profile is deleted (e.g. to scan it). */
  inspectProfile?: (scratchDir: string) => Promise<void>;
}

export interface ExtensionTestsResult {
  exitCode: number;
  /** Extension-host console output, one entry per call. */
  log: string[];
}

/**
 * The same channel carries the workbench's own start-up messages; these say nothing about the tests.
 * (The gallery one is the harness's doing: it disables the unreachable gallery.)
 */
const WORKBENCH_NOISE = [
  /^Resolv(ing|ed) connection token/,
  /^Creating a socket/,
  /^\[Service Worker\] registered/,
  /^ChatSessionStore: Migrating/,
  /additional builtin extensions/,
];

/** What `timeout(1)` exits with, so a hung run is told apart from failing tests. */
export const TIMEOUT_EXIT_CODE = 124;

export async function runExtensionTests(opts: ExtensionTestsOptions): Promise<ExtensionTestsResult> {
  // A watchdog for a run that hangs, not a limit on a slow one: each test has its own mocha limit,
  // and on two cores shared with other work the whole integration run can take many minutes.
  const timeoutMs = opts.timeoutMs ?? 30 * 60_000;
  const scratchDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mg-vscode-'));
  const browserLog = path.join(scratchDir, 'browser-console.log');
  const log: string[] = [];
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  let exitCode = TIMEOUT_EXIT_CODE;
  const installed = opts.build?.ignoresDevelopmentPayload ? await installedTests(opts, scratchDir) : undefined;
  try {
    server = await startCodeServer({
      workspace: opts.workspace,
      scratchDir,
      ...(opts.env && { env: opts.env }),
      ...(opts.settings && { settings: opts.settings }),
      ...(opts.build && { build: opts.build }),
      ...(installed && { vsixPaths: installed.vsixPaths, env: { ...opts.env, ...installed.env } }),
    });
    browser = await launchBrowser();
    const context = await browser.newContext();

    let reportExit: (code: number) => void = () => undefined;
    const exited = new Promise<number>((resolve) => (reportExit = resolve));
    await context.exposeFunction('codeAutomationExit', (code: unknown) => {
      reportExit(typeof code === 'number' ? code : 1);
    });
    await context.exposeFunction('codeAutomationLog', (type: unknown, args: unknown) => {
      const line = formatLogEntry(type, args);
      if (type === 'info' && WORKBENCH_NOISE.some((pattern) => pattern.test(line))) return;
      log.push(line);
      console.log(line);
    });

    page = await context.newPage();
    // A crashed renderer never reports an exit code; without this the run would sit out the watchdog.
    page.once('crash', () => {
      console.error('the workbench page crashed before the extension tests reported their exit code');
      reportExit(1);
    });
    // Kept in memory and written only for a failure report: the page keeps logging while it closes.
    const browserLines: string[] = [];
    page.on('console', (message) => browserLines.push(`[${message.type()}] ${message.text()}`));
    page.on('pageerror', (error) => browserLines.push(`[pageerror] ${error.stack ?? error.message}`));

    if (installed) void installed.finished.then(reportExit);
    const url = installed
      ? workbenchUrl(server.url, opts.workspace)
      : workbenchUrl(server.url, opts.workspace, { devPath: opts.devPath, testsPath: opts.testsPath });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<number>(
      (resolve) => (timer = setTimeout(() => resolve(TIMEOUT_EXIT_CODE), timeoutMs)),
    );
    try {
      // Playwright's default 30 s is too short for a workbench load on a busy two-core machine.
      await page.goto(url, { timeout: LIMITS.workbenchMs });
      exitCode = await Promise.race([exited, timedOut]);
    } finally {
      clearTimeout(timer);
    }
    if (installed) {
      const output = await fsp.readFile(installed.env.MODEL_GATEWAY_TEST_LOG ?? '', 'utf8').catch(() => '');
      for (const line of output.split('\n')) {
        log.push(line);
        console.log(line);
      }
    }
    if (exitCode === TIMEOUT_EXIT_CODE) console.error(`extension tests did not finish within ${timeoutMs / 1000} s`);
    if (exitCode !== 0) {
      await fsp.writeFile(browserLog, browserLines.join('\n') + '\n');
      await saveFailureArtifacts(page, `extension-tests-${path.basename(opts.devPath)}`, [
        server.logFile,
        browserLog,
        ...(await listFiles(path.join(scratchDir, 'ud', 'logs'))),
      ]);
    }
    return { exitCode, log };
  } finally {
    await browser?.close();
    await server?.stop();
    try {
      await opts.inspectProfile?.(scratchDir);
    } finally {
      await fsp.rm(scratchDir, { recursive: true, force: true });
    }
  }
}

/**
 * For a VS Code that ignores the URL's development payload: the extension under test packaged and
 * installed as a user installs it, and beside it a small runner extension, made here, that calls
 * the tests module's run() once VS Code has started and writes its outcome to a file that the
 * returned promise waits for (0 when run() resolved, 1 when it rejected).
 */
async function installedTests(
  opts: ExtensionTestsOptions,
  scratchDir: string,
): Promise<{ vsixPaths: string[]; env: Record<string, string>; finished: Promise<number> }> {
  const vsce = path.join(REPO_ROOT, 'node_modules', '.bin', 'vsce');
  // The repository's own extension may come ready packaged from the runner (see builds.ts).
  const extensionVsix =
    path.resolve(opts.devPath) === REPO_ROOT
      ? await packageExtension(scratchDir)
      : await packageFolder(vsce, opts.devPath, path.join(scratchDir, 'extension-under-test.vsix'));
  const manifest = JSON.parse(await fsp.readFile(path.join(opts.devPath, 'package.json'), 'utf8')) as {
    name: string;
    publisher: string;
  };
  const runnerDir = path.join(scratchDir, 'test-runner');
  await fsp.mkdir(runnerDir, { recursive: true });
  await fsp.writeFile(
    path.join(runnerDir, 'package.json'),
    JSON.stringify(
      {
        name: 'extension-test-runner',
        displayName: 'Extension test runner',
        description: "Runs an extension's tests in the extension host; for tests only.",
        publisher: 'model-gateway-tests',
        version: '0.0.1',
        license: 'MIT',
        engines: { vscode: '^1.100.0' },
        main: './runner.js',
        activationEvents: ['onStartupFinished'],
        extensionDependencies: [`${manifest.publisher}.${manifest.name}`],
      },
      null,
      2,
    ),
  );
  await fsp.writeFile(
    path.join(runnerDir, 'runner.js'),
    [
      "const fs = require('fs');",
      'exports.activate = function () {',
      '  const done = process.env.MODEL_GATEWAY_TESTS_DONE;',
      '  const write = (code) => fs.writeFileSync(done, String(code));',
      '  Promise.resolve()',
      '    .then(() => require(process.env.MODEL_GATEWAY_TESTS_MODULE).run())',
      '    .then(() => write(0), (error) => { console.error(error); write(1); });',
      '};',
      '',
    ].join('\n'),
  );
  await fsp.writeFile(path.join(runnerDir, 'README.md'), '# Extension test runner\n');
  const runnerVsix = path.join(scratchDir, 'test-runner.vsix');
  await execFileAsync(
    vsce,
    ['package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', runnerVsix],
    { cwd: runnerDir, maxBuffer: 16 * 1024 * 1024 },
  );
  const doneFile = path.join(scratchDir, 'tests-done');
  const finished = (async (): Promise<number> => {
    for (;;) {
      const text = await fsp.readFile(doneFile, 'utf8').catch(() => undefined);
      if (text !== undefined && text.trim() !== '') return Number(text.trim()) === 0 ? 0 : 1;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  return {
    vsixPaths: [extensionVsix, runnerVsix],
    env: {
      MODEL_GATEWAY_TESTS_DONE: doneFile,
      MODEL_GATEWAY_TESTS_MODULE: path.resolve(opts.testsPath),
      MODEL_GATEWAY_TEST_LOG: `${doneFile}.log`,
    },
    finished,
  };
}

async function packageFolder(vsce: string, folder: string, vsix: string): Promise<string> {
  await execFileAsync(
    vsce,
    ['package', '--no-dependencies', '--no-rewrite-relative-links', '--allow-missing-repository', '--out', vsix],
    { cwd: folder, maxBuffer: 16 * 1024 * 1024 },
  );
  return vsix;
}

/** The workbench forwards each console call as (level, [format, ...args]), the format still unapplied. */
function formatLogEntry(type: unknown, args: unknown): string {
  const text = Array.isArray(args) ? format(...(args as unknown[])) : String(args);
  return type === 'error' || type === 'warn' ? `[${String(type)}] ${text}` : text;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}
