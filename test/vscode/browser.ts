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
      env: {
        ...process.env,
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, '.config'),
        XDG_CACHE_HOME: path.join(home, '.cache'),
      },
    });
    // Synchronous, so the folder is gone by the time close() resolves even if the process exits right after.
    browser.once('disconnected', () => fs.rmSync(home, { recursive: true, force: true }));
    return browser;
  } catch (error) {
    await fsp.rm(home, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Limits for what a busy machine (two cores shared with other work) may take. They bound waits for
 * conditions, so an idle machine never waits them out; only a step that is really stuck does.
 */
export const LIMITS = {
  /** From navigation to a workbench with its activity bar (loads and compiles megabytes of script). */
  workbenchMs: 180_000,
  /** Until an extension's contributions (palette commands, views) are registered in a new window. */
  contributionsMs: 120_000,
  /** Until the palette lists a command: reopened meanwhile, as a user would try again. */
  paletteMs: 90_000,
  /** Any other single step (a selector, a toast, a webview): Playwright's default for the page. */
  stepMs: 60_000,
} as const;

export async function openWorkbench(page: Page, url: string): Promise<void> {
  await page.goto(url, { timeout: LIMITS.workbenchMs });
  await page.locator('.monaco-workbench .part.activitybar').waitFor({ timeout: LIMITS.workbenchMs });
}

/** Runs a command as a user would: F1, type its palette label ("Category: Title"), pick the row. */
export async function runCommand(page: Page, label: string): Promise<void> {
  await pickCommand(page, label, (rows) => rows.filter({ hasText: label }).first());
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
}

/**
 * Opens the palette on `label` and clicks the row `choose` names among the listed rows. A palette
 * closed by a late focus change before the click (see findCommand) ran nothing, and is opened
 * again; a row missing from a palette still open is an error.
 */
export async function pickCommand(
  page: Page,
  label: string,
  choose: (rows: Locator) => Locator,
  timeoutMs: number = LIMITS.paletteMs,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const input = page.locator('.quick-input-widget input');
  const rows = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  for (;;) {
    await findCommand(page, label, Math.max(1, deadline - Date.now()));
    try {
      await choose(rows).click({ timeout: Math.max(1, Math.min(PALETTE_ATTEMPT_MS, deadline - Date.now())) });
      return;
    } catch (error) {
      if (Date.now() >= deadline || (await input.isVisible())) throw error;
    }
  }
}

/** How long one opening of the palette waits for the row before the palette is opened afresh. */
const PALETTE_ATTEMPT_MS = 10_000;

/**
 * Opens the command palette filtered to `label` and returns its row, leaving the palette open.
 * The palette lists the commands registered when it filters; a command an extension registers a
 * moment later (a new window, a reload, a busy extension host) appears only once the palette is
 * opened again. So this waits for the condition "the palette lists the command", reopening the
 * palette meanwhile, up to `timeoutMs`.
 */
export async function findCommand(page: Page, label: string, timeoutMs: number = LIMITS.paletteMs): Promise<Locator> {
  const deadline = Date.now() + timeoutMs;
  const widget = page.locator('.quick-input-widget');
  const input = page.locator('.quick-input-widget input');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    // On a busy machine F1 pressed while a webview has the focus (the chat's message box) can be
    // lost on its way to the workbench: the palette then stays closed, and F1 is pressed again.
    try {
      await input.waitFor({
        state: 'visible',
        timeout: Math.max(1, Math.min(PALETTE_ATTEMPT_MS, deadline - Date.now())),
      });
    } catch (error) {
      if (Date.now() >= deadline)
        throw new Error(`the command palette did not open within ${timeoutMs / 1000} s (F1 pressed ${attempt} times)`, {
          cause: error,
        });
      continue;
    }
    // A focus change that lands late can close the palette just opened: "Focus on Chat View" focuses
    // the webview when its frame reports ready, which on a busy machine is after the command has
    // returned. The palette then hides (it closes when it loses the focus), and is opened again.
    try {
      await input.fill(`>${label}`, { timeout: Math.max(1, Math.min(PALETTE_ATTEMPT_MS, deadline - Date.now())) });
    } catch (error) {
      if (Date.now() >= deadline)
        throw new Error(`the command palette closed before "${label}" could be typed (opened ${attempt} times)`, {
          cause: error,
        });
      continue;
    }
    try {
      await row.waitFor({ timeout: Math.max(1, Math.min(PALETTE_ATTEMPT_MS, deadline - Date.now())) });
      return row;
    } catch (error) {
      if (Date.now() >= deadline) {
        throw new Error(
          `the command palette did not list "${label}" within ${timeoutMs / 1000} s (opened ${attempt} times)`,
          { cause: error },
        );
      }
    }
    await page.keyboard.press('Escape');
    await widget.waitFor({ state: 'hidden', timeout: Math.max(1, deadline - Date.now()) });
  }
}

export async function waitForNotification(
  page: Page,
  text: string,
  timeoutMs: number = LIMITS.stepMs,
): Promise<Locator> {
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
    // The markup of every frame (webviews included): what a selector saw, beyond what is on screen.
    for (const [index, frame] of page.frames().entries()) {
      const html = await frame.content().catch(() => undefined);
      if (html !== undefined)
        await fsp.writeFile(
          path.join(dir, `frame-${index}.html`),
          `<!-- ${frame.url()} -->
${html}`,
        );
    }
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
