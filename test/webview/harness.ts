/**
 * A standalone page for a webview app (the chat, or the Media Studio): its bundle (built in memory
 * with the same esbuild options as esbuild.js, or dist/webview/<app>.js with WEBVIEW_BUNDLE=dist),
 * its stylesheet and the same CSP
 * the host serves (nonce'd script, no inline styles), on 127.0.0.1. A probe script injected before
 * the bundle fakes `acquireVsCodeApi`, records posted messages, dialogs, CSP violations and long
 * tasks, and lets a test deliver host messages. Driven by playwright-core and Debian's Chromium.
 */
import * as assert from 'node:assert/strict';
import * as esbuild from 'esbuild';
import * as fsp from 'node:fs/promises';
import * as http from 'node:http';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../vscode/browser';
import type { HostMessage, WebviewMessage } from '../../src/shared/protocol';
import { DARK, LIGHT } from './themes';
import { shellHtml } from '../../src/host/views/webviewShell';

const ROOT = path.resolve(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the project's build script is CommonJS JavaScript
const { workerText } = require('../../esbuild.js') as { workerText: esbuild.Plugin };

export type WebviewApp = 'chat' | 'media';

/** The chat bundle: built now from src (default), or the file `node esbuild.js` wrote. */
export function chatBundle(): Promise<string> {
  return appBundle('chat');
}

/** An app's bundle: built now from src (default), or the file `node esbuild.js` wrote. */
async function appBundle(app: WebviewApp): Promise<string> {
  if (process.env.WEBVIEW_BUNDLE === 'dist') return fsp.readFile(path.join(ROOT, `dist/webview/${app}.js`), 'utf8');
  const result = await esbuild.build({
    // Keep in step with the webview entries in esbuild.js.
    entryPoints: [path.join(ROOT, `src/webview/${app}/main.ts`)],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    ...(app === 'chat'
      ? { alias: { entities: path.join(ROOT, 'src/webview/chat/entities.ts') }, plugins: [workerText] }
      : {}),
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error(`esbuild produced no ${app} bundle`);
  return file.text;
}

export interface PageOptions {
  /** Which app the page runs (default: the chat). */
  app?: WebviewApp;
  theme?: 'light' | 'dark';
  /** What `acquireVsCodeApi().getState()` returns at start. */
  uiState?: unknown;
  viewport?: { width: number; height: number };
  /** VS Code's display language; `zh-cn` hands the page the Chinese bundle, as the host does. */
  language?: 'en' | 'zh-cn';
}

export interface CspViolation {
  directive: string;
  blocked: string;
  sample: string;
}

/** One webview page (the chat or the Media Studio) and the probe inside it. */
export class ChatPage {
  constructor(
    readonly page: Page,
    readonly context: BrowserContext,
    /** console.warn / console.error lines the page printed. */
    readonly console: string[],
    /** Dialogs the page tried to open (should stay empty). */
    readonly dialogs: string[],
  ) {}

  /** Evaluates `window.__probe.<name>(...args)` in the page. */
  probe<T>(name: string, ...args: unknown[]): Promise<T> {
    return this.page.evaluate<T>(`window.__probe.${name}(...${JSON.stringify(args)})`);
  }

  read<T>(name: string): Promise<T> {
    return this.page.evaluate<T>(`window.__probe.${name}`);
  }

  /** Delivers host messages, then waits for the frame that renders them. */
  async push(...messages: (HostMessage | Record<string, unknown>)[]): Promise<void> {
    // As a JSON string argument: Playwright sends a string as it is, where an object (or a script
    // with the message in it) costs the page a long parse that VS Code's delivery does not have.
    for (const message of messages)
      await this.page.evaluate(
        (json) =>
          (window as unknown as { __probe: { push(m: unknown): Promise<void> } }).__probe.push(JSON.parse(json)),
        JSON.stringify(message),
      );
    await this.frames();
  }

  frames(count = 2): Promise<void> {
    return this.probe('frames', count);
  }

  posted(): Promise<WebviewMessage[]> {
    return this.read('posted');
  }

  async clearPosted(): Promise<void> {
    await this.page.evaluate('window.__probe.posted.length = 0');
  }

  /**
   * Polls `expression` until it is truthy. (Playwright's waitForFunction evaluates string predicates
   * with eval inside the page, which the page's CSP rightly blocks.)
   */
  waitFor(expression: string, timeoutMs = 5000): Promise<void> {
    return pollPage(this.page, expression, timeoutMs);
  }

  /** Waits until a message of `type` was posted and returns the last one. */
  async waitForPosted<T extends WebviewMessage['type']>(
    type: T,
    timeoutMs = 5000,
  ): Promise<Extract<WebviewMessage, { type: T }>> {
    await this.waitFor(`window.__probe.posted.some((m) => m.type === ${JSON.stringify(type)})`, timeoutMs);
    const posted = await this.posted();
    return posted.filter((m) => m.type === type).pop() as Extract<WebviewMessage, { type: T }>;
  }

  violations(): Promise<CspViolation[]> {
    return this.read('violations');
  }

  alerts(): Promise<string[]> {
    return this.read('alerts');
  }

  uiState<T>(): Promise<T> {
    return this.read('state');
  }

  async close(): Promise<void> {
    await this.context.close();
  }
}

/** A browser and a local server for the webview pages; one per test suite. */
/**
 * Closes a test's page and fails the test on what it logged: every test doubles as a CSP check
 * (nothing the app does may be blocked by the host's policy) and an uncaught-error check.
 */
export async function closeAndCheck(page: ChatPage): Promise<void> {
  const violations = await page.violations().catch(() => []);
  const errors = await page.read<string[]>('errors').catch(() => []);
  await page.close();
  assert.deepEqual(violations, [], 'CSP violations');
  assert.deepEqual(errors, [], 'uncaught page errors');
}

export class WebviewHarness {
  private constructor(
    private readonly browser: Browser,
    private readonly server: http.Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<WebviewHarness> {
    const [bundle, mediaBundle, css, mediaCss, commonCss, probe] = await Promise.all([
      chatBundle(),
      appBundle('media'),
      fsp.readFile(path.join(ROOT, 'media/chat.css'), 'utf8'),
      fsp.readFile(path.join(ROOT, 'media/media.css'), 'utf8'),
      fsp.readFile(path.join(ROOT, 'media/common.css'), 'utf8'),
      fsp.readFile(path.join(__dirname, 'pageProbe.js'), 'utf8'),
    ]);
    WebviewHarness.probeSource = probe;
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const send = (type: string, body: string, status = 200): void => {
        res.writeHead(status, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' });
        res.end(body);
      };
      switch (url.pathname) {
        case '/chat.html':
          return send('text/html', pageHtml(origin, url.searchParams));
        case '/media.html':
          return send('text/html', pageHtml(origin, url.searchParams, 'media'));
        case '/dist/webview/chat.js':
          return send('text/javascript', bundle);
        case '/dist/webview/media.js':
          return send('text/javascript', mediaBundle);
        case '/media/chat.css':
          return send('text/css', css);
        case '/media/media.css':
          return send('text/css', mediaCss);
        case '/media/common.css':
          return send('text/css', commonCss);
        case '/test/theme-dark.css':
          return send('text/css', DARK);
        case '/test/theme-light.css':
          return send('text/css', LIGHT);
        default:
          return send('text/plain', 'not found', 404);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    // The shared launcher gives Chromium a throwaway profile and HOME, removed when it closes.
    try {
      return new WebviewHarness(await launchBrowser(), server, origin);
    } catch (error) {
      server.close();
      throw error;
    }
  }

  private static probeSource = '';

  /** Opens a fresh page (own context) and waits for the app's `ready`. */
  async open(options: PageOptions = {}): Promise<ChatPage> {
    const context = await this.browser.newContext({ viewport: options.viewport ?? { width: 420, height: 720 } });
    const page = await context.newPage();
    const consoleLines: string[] = [];
    const dialogs: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'warning' || message.type() === 'error')
        consoleLines.push(`${message.type()}: ${message.text()}`);
    });
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
    const seed = JSON.stringify({ uiState: options.uiState });
    await page.addInitScript({ content: `const __PROBE_SEED__ = ${seed};\n${WebviewHarness.probeSource}` });
    const query = new URLSearchParams({
      theme: options.theme ?? 'dark',
      lang: options.language ?? 'en',
    });
    await page.goto(`${this.origin}/${options.app ?? 'chat'}.html?${query}`);
    await pollPage(page, `window.__probe.posted.some((m) => m.type === 'ready')`, 10_000);
    return new ChatPage(page, context, consoleLines, dialogs);
  }

  async close(): Promise<void> {
    await this.browser.close().catch(() => undefined);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function pollPage(page: Page, expression: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<unknown>(expression))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The page exactly as the host serves it (the production shell, so a change of the CSP is tested
 * here), plus the theme's colour variables, which VS Code itself adds to every webview.
 */
function pageHtml(origin: string, params: URLSearchParams, app: WebviewApp = 'chat'): string {
  const theme = params.get('theme') === 'light' ? 'light' : 'dark';
  const html = shellHtml({
    nonce: randomBytes(16).toString('base64'),
    cspSource: origin,
    scriptUri: `${origin}/dist/webview/${app}.js`,
    styleUris: [`${origin}/media/common.css`, `${origin}/media/${app}.css`],
    title: app === 'chat' ? 'Chat' : 'Media Studio',
    language: params.get('lang') ?? 'en',
    ...(params.get('lang') === 'zh-cn'
      ? {
          bundle: JSON.parse(readFileSync(path.join(ROOT, 'l10n/bundle.l10n.zh-cn.json'), 'utf8')) as Record<
            string,
            string
          >,
        }
      : {}),
    blobWorkers: app === 'chat',
  });
  return html.replace(
    '<link rel="stylesheet"',
    `<link rel="stylesheet" href="${origin}/test/theme-${theme}.css">\n<link rel="stylesheet"`,
  );
}
