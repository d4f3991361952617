/**
 * Headless Chromium (Debian's, never a Playwright download) driving code-server's web workbench.
 * Selectors are the ones seen working on VS Code 1.100.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type Browser, type FrameLocator, type Locator, type Page } from 'playwright-core';

const REPO_ROOT = path.resolve(__dirname, '..', '..');

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/**
 * `launch` gives every browser a fresh temporary profile and deletes it on close. Debian's wrapper
 * still puts crash reports under $HOME/.config, so HOME and XDG_* point at a throwaway folder too.
 */
export async function launchBrowser(): Promise<Browser> {
  const home = await fsp.mkdtemp(path.join(os.tmpdir(), 'mg-chromium-'));
  try {
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      headless: true,
      args: CHROMIUM_FLAGS,
      env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_CACHE_HOME: path.join(home, '.cache') },
    });
    // Synchronous, so the folder is gone by the time close() resolves even if the process exits right after.
    browser.once('disconnected', () => fs.rmSync(home, { recursive: true, force: true }));
    return browser;
  } catch (error) {
    await fsp.rm(home, { recursive: true, force: true });
    throw error;
  }
}

export async function openWorkbench(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.locator('.monaco-workbench .part.activitybar').waitFor({ timeout: 60_000 });
}

/** Runs a command as a user would: F1, type its palette label ("Category: Title"), pick the row. */
export async function runCommand(page: Page, label: string): Promise<void> {
  const row = await findCommand(page, label);
  await row.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

/** Opens the command palette filtered to `label` and returns its row, leaving the palette open. */
export async function findCommand(page: Page, label: string): Promise<Locator> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${label}`);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await row.waitFor({ timeout: 15_000 });
  return row;
}

export async function waitForNotification(page: Page, text: string, timeoutMs = 15_000): Promise<Locator> {
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  await toast.waitFor({ timeout: timeoutMs });
  return toast;
}

/** The content frame of a webview contributed by `extensionId` ("publisher.name"). */
export function webviewFrame(page: Page, extensionId: string): FrameLocator {
  return page.frameLocator(`iframe.webview.ready[src*="extensionId=${extensionId}"]`).frameLocator('#active-frame');
}

/** Screenshot plus copies of the given logs in test-results/<name>/ (git-ignored); returns that folder. */
export async function saveFailureArtifacts(page: Page | undefined, name: string, logFiles: string[]): Promise<string> {
  const dir = path.join(REPO_ROOT, 'test-results', name.replace(/[^\w.-]+/g, '-'));
  // Files left by an earlier failure would pass for this one's.
  await fsp.rm(dir, { recursive: true, force: true });
  await fsp.mkdir(dir, { recursive: true });
  if (page && !page.isClosed()) {
    await page.screenshot({ path: path.join(dir, 'screenshot.png'), fullPage: true }).catch((error: unknown) => {
      console.error(`no screenshot: ${String(error)}`);
    });
  }
  const used = new Set<string>();
  for (const [index, file] of logFiles.entries()) {
    // Different log folders hold files of the same name (exthost.log in each window).
    let target = path.basename(file);
    if (used.has(target)) target = `${index}-${target}`;
    used.add(target);
    // A log that was never written is not worth failing the report over.
    await fsp.copyFile(file, path.join(dir, target)).catch(() => undefined);
  }
  console.log(`failure artifacts: ${path.relative(process.cwd(), dir) || dir}`);
  return dir;
}
