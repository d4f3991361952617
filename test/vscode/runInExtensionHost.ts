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
import { launchBrowser, LIMITS, saveFailureArtifacts } from './browser';
import { startCodeServer, workbenchUrl, type CodeServer, type CodeServerBuild } from './codeServer';

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
  try {
    server = await startCodeServer({
      workspace: opts.workspace,
      scratchDir,
      ...(opts.env && { env: opts.env }),
      ...(opts.settings && { settings: opts.settings }),
      ...(opts.build && { build: opts.build }),
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

    const url = workbenchUrl(server.url, opts.workspace, { devPath: opts.devPath, testsPath: opts.testsPath });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<number>((resolve) => (timer = setTimeout(() => resolve(TIMEOUT_EXIT_CODE), timeoutMs)));
    try {
      // Playwright's default 30 s is too short for a workbench load on a busy two-core machine.
      await page.goto(url, { timeout: LIMITS.workbenchMs });
      exitCode = await Promise.race([exited, timedOut]);
    } finally {
      clearTimeout(timer);
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

/** The workbench forwards each console call as (level, [format, ...args]), the format still unapplied. */
function formatLogEntry(type: unknown, args: unknown): string {
  const text = Array.isArray(args) ? format(...(args as unknown[])) : String(args);
  return type === 'error' || type === 'warn' ? `[${String(type)}] ${text}` : text;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}
