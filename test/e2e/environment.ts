/**
 * Everything a UI scenario runs against: the extension packaged and installed from its .vsix (as a
 * user installs it), the gateway double, code-server pointed at the double by user settings only,
 * and one Chromium page on the workbench. Shared by the test runner and the screenshot script.
 */
import { execFile } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { GatewayDouble } from '../gateway';
import { launchBrowser, LIMITS, openWorkbench } from '../vscode/browser';
import { ensureCodeServer, startCodeServer, workbenchUrl, type CodeServer } from '../vscode/codeServer';

const execFileAsync = promisify(execFile);

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
/** Fixed so screenshots are comparable between runs and the sidebar layout does not depend on the host. */
export const VIEWPORT = { width: 1280, height: 800 } as const;

export interface E2eEnvironment {
  page: Page;
  browser: Browser;
  double: GatewayDouble;
  codeServer: CodeServer;
  /** The folder the workbench has open (holds a README.md). */
  workspace: string;
  /** Temporary folder owned by this run: .vsix, workspace, code-server's home and user data. */
  scratch: string;
  /**
   * Opens another window on the same workspace and profile: a second page of the same browser
   * (same browser storage) on the same code-server, so it gets its own extension host sharing
   * the profile's global storage with the first. Returns it once the extension's contributions
   * are registered in it; the caller closes it (stop() closes any left open).
   */
  openWindow(): Promise<Page>;
  /** Idempotent; never rejects, so it is safe in `finally` blocks. */
  stop(): Promise<void>;
}

function log(message: string): void {
  console.log(`[e2e] ${message}`);
}

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await fn();
  log(`${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return result;
}

/**
 * Production bundle, then the .vsix into `outDir`. Only esbuild writes into dist/ (vsce's own
 * prepublish step runs the same production build again), so the repo is left as a build leaves it.
 */
export async function packageExtension(outDir: string): Promise<string> {
  const vsix = path.join(outDir, 'model-gateway.vsix');
  await execFileAsync(process.execPath, ['esbuild.js', '--production'], { cwd: REPO_ROOT });
  // `npx` as the brief's recipe says; it resolves the repo's pinned devDependency without a download.
  await execFileAsync('npx', ['--no-install', '@vscode/vsce', 'package', '--no-dependencies', '--no-rewrite-relative-links', '--out', vsix], {
    cwd: REPO_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  return vsix;
}

/**
 * Starts everything; on any failure stops what already started and rethrows, so a caller that
 * gets no environment has nothing to clean up.
 */
export async function startEnvironment(): Promise<E2eEnvironment> {
  const scratch = await fsp.mkdtemp(path.join(os.tmpdir(), 'mg-e2e-'));
  let double: GatewayDouble | undefined;
  let codeServer: CodeServer | undefined;
  let browser: Browser | undefined;
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // Each step is guarded on its own: a browser that crashed must not keep code-server running.
    await browser?.close().catch((error: unknown) => log(`closing the browser: ${String(error)}`));
    await codeServer?.stop().catch((error: unknown) => log(`stopping code-server: ${String(error)}`));
    await double?.stop().catch((error: unknown) => log(`stopping the gateway double: ${String(error)}`));
    await fsp.rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  };
  try {
    const vsix = await timed('packaged the extension', () => packageExtension(scratch));
    double = new GatewayDouble();
    await double.start();
    log(`gateway double at ${double.url}, catalog at ${double.catalogUrl}`);
    await timed('code-server ready', () => ensureCodeServer());

    const workspace = path.join(scratch, 'workspace');
    await fsp.mkdir(workspace);
    await fsp.writeFile(path.join(workspace, 'README.md'), '# Scratch project\n\nA folder for trying the Model Gateway extension.\n');
    const gateway = double;
    codeServer = await timed('code-server started', () =>
      startCodeServer({
        workspace,
        scratchDir: path.join(scratch, 'code-server'),
        vsixPaths: [vsix],
        // Only addresses: the key is typed into the UI like a user would, never written to settings.
        settings: {
          'modelGateway.baseUrl': gateway.url,
          'modelGateway.catalogUrl': gateway.catalogUrl,
          'workbench.tips.enabled': false,
          // code-server offers to forward every port it sees opened (the double's among them); noise in screenshots.
          'remote.autoForwardPorts': false,
        },
      }),
    );

    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: VIEWPORT });
    // Every step waits for a condition; on a busy machine a condition may take a while to hold.
    context.setDefaultTimeout(LIMITS.stepMs);
    context.setDefaultNavigationTimeout(LIMITS.workbenchMs);
    const url = workbenchUrl(codeServer.url, workspace);
    const page = await openWindow(context, url, 'first window');
    return { page, browser, double, codeServer, workspace, scratch, stop, openWindow: () => openWindow(context, url, 'another window') };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A new page on the workbench, returned once the extension's contributions are registered in it. */
async function openWindow(context: BrowserContext, url: string, what: string): Promise<Page> {
  const page = await context.newPage();
  try {
    await timed(`${what}: workbench loaded`, () => openWorkbench(page, url));
    // The palette lists the extension's commands only once its contributions are registered,
    // which is also when its activity-bar entry appears.
    await timed(`${what}: extension contributions registered`, () =>
      page.locator('.part.activitybar .action-item a[aria-label^="Model Gateway"]').waitFor({ timeout: LIMITS.contributionsMs }),
    );
    return page;
  } catch (error) {
    await page.close().catch(() => undefined);
    throw error;
  }
}
