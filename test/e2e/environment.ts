/**
 * Everything a UI scenario runs against: the extension packaged and installed from its .vsix (as a
 * user installs it), the gateway double, code-server pointed at the double by user settings only,
 * and one Chromium page on the workbench. Shared by the test runner and the screenshot script.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { GatewayDouble } from '../gateway';
import { launchBrowser, LIMITS, openWorkbench } from '../vscode/browser';
import { packageExtension } from '../vscode/builds';
import {
  ensureCodeServer,
  startCodeServer,
  workbenchUrl,
  type CodeServer,
  type CodeServerBuild,
} from '../vscode/codeServer';

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
  /**
   * A second, separate workbench whose VS Code runs in another display language (code-server
   * `--locale`): the same .vsix, settings and gateway double, its own profile and workspace, a page
   * of the same browser. The caller stops it (stop() stops any left running).
   */
  openInLanguage(locale: string): Promise<LocalisedWorkbench>;
  /** Idempotent; never rejects, so it is safe in `finally` blocks. */
  stop(): Promise<void>;
}

export interface LocalisedWorkbench {
  page: Page;
  codeServer: CodeServer;
  /** Idempotent; never rejects. */
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
 * A language pack for `locale` that translates none of VS Code's own words. VS Code (and
 * code-server's `--locale`) only switches its display language, and so `vscode.env.language` and
 * the extensions' `package.nls.<locale>.json` and `l10n/bundle.l10n.<locale>.json`, when a pack
 * for it is installed; the real packs come only from the marketplace, which is not reachable here.
 */
export async function packageLanguagePack(locale: string, dir: string): Promise<string> {
  await fsp.mkdir(path.join(dir, 'translations'), { recursive: true });
  const manifest = {
    name: `test-language-pack-${locale}`,
    displayName: `Test language pack (${locale})`,
    description: 'Switches the display language without translating VS Code itself; for tests only.',
    publisher: 'model-gateway-tests',
    version: '0.0.1',
    license: 'MIT',
    engines: { vscode: '^1.100.0' },
    categories: ['Language Packs'],
    contributes: {
      localizations: [
        {
          languageId: locale,
          languageName: locale,
          localizedLanguageName: locale,
          translations: [{ id: 'vscode', path: './translations/main.i18n.json' }],
        },
      ],
    },
  };
  await fsp.writeFile(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  await fsp.writeFile(path.join(dir, 'README.md'), '# Test language pack\n');
  // No translations: every VS Code string falls back to its English.
  await fsp.writeFile(
    path.join(dir, 'translations', 'main.i18n.json'),
    JSON.stringify({ version: '1.0.0', contents: {} }),
  );
  const vsix = path.join(dir, `language-pack-${locale}.vsix`);
  // The repo's pinned vsce, run in the pack's folder (npx there would not find it).
  await execFileAsync(
    path.join(REPO_ROOT, 'node_modules', '.bin', 'vsce'),
    ['package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', vsix],
    { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
  );
  return vsix;
}

/**
 * Lists the installed pack in the user data's `languagepacks.json`, where the server looks for the
 * pack of `--locale` when it serves the workbench. VS Code writes that file when it installs a pack
 * itself; a pack installed from the command line before the server starts is not listed yet.
 */
export async function registerLanguagePack(
  locale: string,
  dirs: { userData: string; extensions: string },
): Promise<void> {
  const id = `model-gateway-tests.test-language-pack-${locale}`;
  const folder = (await fsp.readdir(dirs.extensions)).find((name) => name.startsWith(`${id}-`));
  if (!folder) throw new Error(`the language pack ${id} was not installed in ${dirs.extensions}`);
  const version = folder.slice(id.length + 1);
  const entry = {
    hash: createHash('md5').update(id).update(version).digest('hex'),
    extensions: [{ extensionIdentifier: { id }, version }],
    translations: { vscode: path.join(dirs.extensions, folder, 'translations', 'main.i18n.json') },
    label: locale,
  };
  await fsp.writeFile(path.join(dirs.userData, 'languagepacks.json'), JSON.stringify({ [locale]: entry }, null, 2));
}

export interface EnvironmentOptions {
  /** Which VS Code; the harness default (1.100, the extension's minimum) when absent. */
  build?: CodeServerBuild;
  /** More user settings, merged over the suite's own. */
  settings?: Record<string, unknown>;
}

/**
 * Starts everything; on any failure stops what already started and rethrows, so a caller that
 * gets no environment has nothing to clean up.
 */
export async function startEnvironment(opts: EnvironmentOptions = {}): Promise<E2eEnvironment> {
  const scratch = await fsp.mkdtemp(path.join(os.tmpdir(), 'mg-e2e-'));
  let double: GatewayDouble | undefined;
  let codeServer: CodeServer | undefined;
  let browser: Browser | undefined;
  let stopped = false;
  const localised = new Set<LocalisedWorkbench>();
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const other of localised) await other.stop();
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
    await timed('code-server ready', () => ensureCodeServer(opts.build));

    const workspace = path.join(scratch, 'workspace');
    await fsp.mkdir(workspace);
    await fsp.writeFile(
      path.join(workspace, 'README.md'),
      '# Scratch project\n\nA folder for trying the Model Gateway extension.\n',
    );
    const gateway = double;
    // Only addresses: the key is typed into the UI like a user would, never written to settings.
    const settings = {
      'modelGateway.baseUrl': gateway.url,
      'modelGateway.catalogUrl': gateway.catalogUrl,
      'workbench.tips.enabled': false,
      // code-server offers to forward every port it sees opened (the double's among them); noise in screenshots.
      'remote.autoForwardPorts': false,
      ...opts.settings,
    };
    codeServer = await timed('code-server started', () =>
      startCodeServer({
        workspace,
        scratchDir: path.join(scratch, 'code-server'),
        vsixPaths: [vsix],
        settings,
        ...(opts.build && { build: opts.build }),
      }),
    );

    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: VIEWPORT });
    // Every step waits for a condition; on a busy machine a condition may take a while to hold.
    context.setDefaultTimeout(LIMITS.stepMs);
    context.setDefaultNavigationTimeout(LIMITS.workbenchMs);
    const url = workbenchUrl(codeServer.url, workspace);
    const page = await openWindow(context, url, 'first window');
    const openInLanguage = async (locale: string): Promise<LocalisedWorkbench> => {
      const root = await fsp.mkdtemp(path.join(scratch, `locale-${locale}-`));
      const folder = path.join(root, 'workspace');
      await fsp.mkdir(folder);
      await fsp.writeFile(path.join(folder, 'README.md'), '# Scratch project\n');
      const pack = await timed(`language pack for ${locale} packaged`, () =>
        packageLanguagePack(locale, path.join(root, 'language-pack')),
      );
      const server = await timed(`code-server (--locale ${locale}) started`, () =>
        startCodeServer({
          workspace: folder,
          scratchDir: path.join(root, 'code-server'),
          vsixPaths: [pack, vsix],
          settings,
          args: ['--locale', locale],
          beforeStart: (dirs) => registerLanguagePack(locale, dirs),
          ...(opts.build && { build: opts.build }),
        }),
      );
      let other: LocalisedWorkbench | undefined;
      try {
        const nls = JSON.parse(
          await fsp.readFile(path.join(REPO_ROOT, `package.nls.${locale}.json`), 'utf8'),
        ) as Record<string, string>;
        const page = await openWindow(
          context,
          workbenchUrl(server.url, folder),
          `window in ${locale}`,
          nls['viewsContainer.modelGateway.title'],
        );
        let done = false;
        other = {
          page,
          codeServer: server,
          stop: async () => {
            if (done) return;
            done = true;
            localised.delete(other as LocalisedWorkbench);
            await page.close().catch(() => undefined);
            await server
              .stop()
              .catch((error: unknown) => log(`stopping code-server (--locale ${locale}): ${String(error)}`));
          },
        };
        localised.add(other);
        return other;
      } catch (error) {
        await server.stop().catch(() => undefined);
        throw error;
      }
    };
    return {
      page,
      browser,
      double,
      codeServer,
      workspace,
      scratch,
      stop,
      openWindow: () => openWindow(context, url, 'another window'),
      openInLanguage,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * A new page on the workbench, returned once the extension's contributions are registered in it
 * (its activity-bar entry, named `activityTitle` in the workbench's language, is there).
 */
async function openWindow(
  context: BrowserContext,
  url: string,
  what: string,
  activityTitle = 'Model Gateway',
): Promise<Page> {
  const page = await context.newPage();
  try {
    await timed(`${what}: workbench loaded`, () => openWorkbench(page, url));
    // The palette lists the extension's commands only once its contributions are registered,
    // which is also when its activity-bar entry appears.
    await timed(`${what}: extension contributions registered`, () =>
      page
        .locator(`.part.activitybar .action-item a[aria-label^="${activityTitle}"]`)
        .waitFor({ timeout: LIMITS.contributionsMs }),
    );
    return page;
  } catch (error) {
    await page.close().catch(() => undefined);
    throw error;
  }
}
