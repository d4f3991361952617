/**
 * `npm start`: the extension running in a real VS Code (code-server in the browser) against the
 * gateway double, ready to try.
 *
 *   1. builds and packages the extension into .cache/demo/model-gateway.vsix
 *   2. starts the gateway double (GATEWAY_PORT / CATALOG_PORT, else free ports)
 *   3. installs code-server once (or reuses an install), installs the .vsix into a scratch profile
 *      whose settings point at the double, and serves a workspace of sample files (PORT, else 8080)
 *   4. prints the address to open and the demo key to paste into "Model Gateway: Set API Key"
 *
 * The VS Code is the newest that runs here (code-server 4.139, VS Code 1.139, whose built-in Chat
 * view and agent mode take the gateway's models); `npm start -- --vscode 1.100` (or VSCODE=1.100)
 * runs the oldest VS Code the extension supports instead. Each has its own profile folder.
 * `npm start -- --locale zh-cn` (or LOCALE=zh-cn) shows the extension in Chinese: VS Code's own
 * words stay English (its language packs come only from the marketplace), the extension's menus,
 * messages, chat and Media Studio are Chinese, as in a Chinese VS Code.
 *
 * Everything it writes lives under the repository's git-ignored .cache/: the profile is kept between
 * runs (code-server keeps secrets in the browser's storage for its address, encrypted with a key in
 * the profile, so a key set once survives a restart on the same port), the samples are regenerated
 * only when missing. Ctrl-C or SIGTERM stops the double, code-server and everything they started.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { GatewayDouble } from '../gateway';
import { ensureSampleWorkspace } from '../fixtures/samples';
import {
  codeServerDir,
  ensureCodeServer,
  startCodeServer,
  VSCODE_1_100,
  VSCODE_1_139,
  workbenchUrl,
  type CodeServer,
  type CodeServerBuild,
} from '../vscode/codeServer';
import { packageLanguagePack, registerLanguagePack } from '../e2e/environment';
import {
  box,
  DEMO_TRY_LIST,
  demoLocale,
  portFromEnv,
  portIsFree,
  readSettings,
  run,
  stopDescendants,
  watchAncestors,
} from './support';

const ROOT = path.resolve(__dirname, '..', '..');
const CACHE_DIR = path.join(ROOT, '.cache');
const DEMO_DIR = path.join(CACHE_DIR, 'demo');
const WORKSPACE_DIR = path.join(DEMO_DIR, 'workspace');
const VSIX = path.join(DEMO_DIR, 'model-gateway.vsix');
/** Fixed so the browser origin, and with it the stored key, stays the same from one start to the next. */
const DEFAULT_PORT = 8080;
const INSTALL_MARKER = '.install-complete';

/** The VS Codes the demo can open, by the version a user names. */
const BUILDS: Record<string, { build: CodeServerBuild; vscode: string; firstInstall: string }> = {
  '1.139': {
    build: VSCODE_1_139,
    vscode: '1.139.1',
    firstInstall: 'about 9 minutes measured on a busy two-core machine, see the README',
  },
  '1.100': { build: VSCODE_1_100, vscode: '1.100.3', firstInstall: 'about 45 s' },
};

function chooseLocale(): string | undefined {
  try {
    return demoLocale(process.argv, process.env);
  } catch (error) {
    throw new StartError(error instanceof Error ? error.message : String(error));
  }
}

/** `--vscode 1.100` or VSCODE=1.100; the newest by default. */
function chooseBuild(): (typeof BUILDS)[string] {
  const flag = process.argv.indexOf('--vscode');
  const asked = (flag >= 0 ? process.argv[flag + 1] : undefined) ?? process.env.VSCODE ?? '1.139';
  const choice = BUILDS[asked.replace(/^(\d+\.\d+).*$/, '$1')];
  if (!choice) throw new StartError(`no demo for VS Code ${asked}; choose one of ${Object.keys(BUILDS).join(', ')}`);
  return choice;
}

const started = Date.now();
let double: GatewayDouble | undefined;
let server: CodeServer | undefined;
let stopping = false;

function say(message: string): void {
  console.log(`[start] ${message}`);
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

function rel(file: string): string {
  const relative = path.relative(process.cwd(), file);
  // Paths outside the working folder read better in full than as ../../..
  return relative === '' ? '.' : relative.startsWith('..') ? file : relative;
}

class StartError extends Error {}

async function step<T>(label: string, fn: () => Promise<T>): Promise<T> {
  if (stopping) throw new StartError('stopped');
  say(`${label} ...`);
  const t = Date.now();
  const result = await fn();
  say(`${label}: done in ${seconds(t)}`);
  return result;
}

async function buildAndPackage(): Promise<void> {
  await step('building the extension (esbuild --production)', async () => {
    const result = await run(process.execPath, [path.join(ROOT, 'esbuild.js'), '--production'], ROOT);
    if (result.code !== 0) throw new StartError(`the build failed (exit ${result.code}):\n${result.output}`);
  });
  await step(`packaging ${rel(VSIX)}`, async () => {
    await fsp.mkdir(DEMO_DIR, { recursive: true });
    // The repository's pinned vsce, run directly: what `npx @vscode/vsce` would resolve, minus npx.
    const vsce = path.join(path.dirname(require.resolve('@vscode/vsce/package.json')), 'vsce');
    const result = await run(
      process.execPath,
      [vsce, 'package', '--no-dependencies', '--no-rewrite-relative-links', '--out', VSIX],
      ROOT,
    );
    if (result.code !== 0) throw new StartError(`vsce package failed (exit ${result.code}):\n${result.output}`);
  });
}

/**
 * Prefers the install in the repository's .cache; an install the test harness made in the user's
 * cache folder is reused as is (reading it writes nothing); only when neither exists is one made,
 * in .cache, so nothing lands in the home folder. MODEL_GATEWAY_CODE_SERVER_DIR overrides all this.
 */
function chooseCodeServerDir(build: CodeServerBuild): string {
  if (!process.env.MODEL_GATEWAY_CODE_SERVER_DIR) {
    const local = path.join(CACHE_DIR, `code-server-${build.version}`);
    const shared = codeServerDir(build);
    const installed = (dir: string): boolean => fs.existsSync(path.join(dir, INSTALL_MARKER));
    // The variable names the 1.100 build's folder; the others are found next to it.
    const chosen = !installed(local) && installed(shared) ? shared : local;
    process.env.MODEL_GATEWAY_CODE_SERVER_DIR = path.join(path.dirname(chosen), `code-server-${VSCODE_1_100.version}`);
  }
  return codeServerDir(build);
}

async function ensureCodeServerInstalled(choice: (typeof BUILDS)[string]): Promise<void> {
  const dir = chooseCodeServerDir(choice.build);
  if (fs.existsSync(path.join(dir, INSTALL_MARKER))) {
    say(`code-server ${choice.build.version} (VS Code ${choice.vscode}): using the install in ${rel(dir)}`);
    return;
  }
  await step(
    `installing code-server ${choice.build.version} (VS Code ${choice.vscode}) into ${rel(dir)} (first time only, ${choice.firstInstall})`,
    async () => {
      await ensureCodeServer(choice.build);
    },
  );
}

/** undefined lets the harness pick a free port. */
async function choosePort(): Promise<number | undefined> {
  const fromEnv = portFromEnv('PORT');
  if (fromEnv === 0) return undefined;
  if (fromEnv !== undefined) {
    if (!(await portIsFree(fromEnv))) throw new StartError(`PORT=${fromEnv} is already in use; choose another one`);
    return fromEnv;
  }
  if (await portIsFree(DEFAULT_PORT)) return DEFAULT_PORT;
  say(
    `port ${DEFAULT_PORT} is in use; using a free one (a key set on another port is not seen here: set PORT to keep one)`,
  );
  return undefined;
}

/**
 * The profile's settings as the user left them, with the extension pointed at this run's double.
 * The key is never part of them: it is pasted into the command and kept in secret storage.
 */
async function demoSettings(gateway: GatewayDouble, profileDir: string): Promise<Record<string, unknown>> {
  const file = path.join(profileDir, 'ud', 'User', 'settings.json');
  const existing = await readSettings(file);
  if (existing === undefined && fs.existsSync(file)) {
    const aside = `${file}.unreadable-${Date.now()}`;
    await fsp.copyFile(file, aside);
    say(`settings.json could not be read; a copy is kept as ${rel(aside)}`);
  }
  const settings: Record<string, unknown> = {
    // The workspace sits inside this repository; without this the git extension offers to open it.
    'git.openRepositoryInParentFolders': 'never',
    ...existing,
    'modelGateway.baseUrl': gateway.url,
    'modelGateway.catalogUrl': gateway.catalogUrl,
  };
  if (JSON.stringify(settings).includes(gateway.demoKey)) {
    throw new StartError(
      'refusing to write settings that contain the API key; remove it from the profile settings.json',
    );
  }
  return settings;
}

async function main(): Promise<void> {
  const choice = chooseBuild();
  const locale = chooseLocale();
  // 1.100 keeps the folder it always had, so an existing demo profile (and its key) stays.
  // Another language gets its own profile, so its language pack never lingers in the English one.
  const profileDir = path.join(
    DEMO_DIR,
    `${choice.build === VSCODE_1_100 ? 'profile' : `profile-${choice.vscode.split('.').slice(0, 2).join('.')}`}${locale ? `-${locale}` : ''}`,
  );
  console.log(
    `Model Gateway demo: the extension in VS Code ${choice.vscode} (code-server), against the gateway double. Ctrl-C stops it.`,
  );
  await buildAndPackage();

  double = await step('starting the gateway double', async () => {
    const gateway = new GatewayDouble({
      port: portFromEnv('GATEWAY_PORT') ?? 0,
      catalogPort: portFromEnv('CATALOG_PORT') ?? 0,
    });
    await gateway.start();
    return gateway;
  });
  say(`gateway double at ${double.url}, catalog at ${double.catalogUrl}`);

  await ensureCodeServerInstalled(choice);

  await step(`preparing the workspace ${rel(WORKSPACE_DIR)}`, async () => {
    const { written, kept } = await ensureSampleWorkspace(WORKSPACE_DIR);
    if (written.length > 0) say(`sample files written: ${written.join(', ')}`);
    if (kept.length > 0) say(`sample files kept: ${kept.join(', ')}`);
  });

  const port = await choosePort();
  const settings = await demoSettings(double, profileDir);
  // Only this run's server log is of interest; the previous one is kept beside it for comparison.
  const logFile = path.join(profileDir, 'code-server.log');
  if (fs.existsSync(logFile)) await fsp.rename(logFile, path.join(profileDir, 'code-server.previous.log'));

  const gatewayDouble = double;
  // A language pack that only switches the display language (see packageLanguagePack): code-server's
  // --locale then hands the extension its Chinese bundles.
  const pack = locale
    ? await step(`packaging a language pack for ${locale}`, () =>
        packageLanguagePack(locale, path.join(DEMO_DIR, `language-pack-${locale}`)),
      )
    : undefined;
  server = await step('installing the .vsix and starting code-server', () =>
    startCodeServer({
      workspace: WORKSPACE_DIR,
      scratchDir: profileDir,
      settings,
      vsixPaths: pack ? [pack, VSIX] : [VSIX],
      port,
      build: choice.build,
      ...(locale
        ? {
            args: ['--locale', locale],
            beforeStart: (dirs: { userData: string; extensions: string }) => registerLanguagePack(locale, dirs),
          }
        : {}),
    }),
  );
  if (stopping) return;

  const url = workbenchUrl(server.url, WORKSPACE_DIR);
  console.log(
    '\n' +
      box([
        `Model Gateway demo is ready (started in ${seconds(started)}).`,
        ...(locale ? [`The extension speaks ${locale}; VS Code's own words stay English.`] : []),
        '',
        'Open in a browser:',
        `  ${url}`,
        '',
        'Then run "Model Gateway: Set API Key" (F1) and paste the demo key:',
        `  ${gatewayDouble.demoKey}`,
        'The settings already point the extension at the gateway double. The key stays',
        'in that browser for this address, so the next start on the same port has it.',
        ...(choice.build === VSCODE_1_100
          ? []
          : [
              '',
              "VS Code's own Chat view: after the key is set, accept the offer to open",
              '"Chat: Manage Language Models" (or run it from F1) once; then pick a gateway',
              'model in the Chat view and chat in Ask or Agent mode. No sign-in is needed.',
            ]),
        '',
        ...DEMO_TRY_LIST,
        '',
        `Gateway double:  ${gatewayDouble.url}   (catalog ${gatewayDouble.catalogUrl})`,
        `Profile and log: ${rel(profileDir)}`,
        'Press Ctrl-C to stop everything.',
      ]) +
      '\n',
  );
}

async function shutdown(reason: string, exitCode: number): Promise<never> {
  stopping = true;
  say(`${reason}: stopping ...`);
  const t = Date.now();
  // Every stop below is bounded, but a hung one must not keep the terminal.
  setTimeout(() => {
    say('stopping took too long; exiting');
    process.exit(exitCode || 1);
  }, 20_000).unref();
  // Each part gets stopped even if another one fails to.
  await server?.stop().catch((error: unknown) => say(`code-server: ${String(error)}`));
  await double?.stop().catch((error: unknown) => say(`gateway double: ${String(error)}`));
  // Whatever is still below this process: a build tool, an interrupted install, a vsix install.
  await stopDescendants(3000);
  say(`stopped in ${seconds(t)}`);
  process.exit(exitCode);
}

let firstSignalAt = 0;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    // Ctrl-C reaches this process both from the terminal and relayed by tsx: one press, two signals.
    if (stopping && Date.now() - firstSignalAt < 1000) return;
    if (stopping) {
      // A second Ctrl-C while stopping: no more waiting. Process groups are killed by the harness on exit.
      say('stopping now');
      void stopDescendants(0).then(() => process.exit(1));
      return;
    }
    firstSignalAt = Date.now();
    void shutdown(signal, 0);
  });
}
// tsx, sh and npm: see watchAncestors for why their exit has to be noticed here.
watchAncestors(3, () => {
  if (!stopping) void shutdown('npm start ended', 0);
});

main().catch((error: unknown) => {
  if (stopping) return;
  console.error(
    `\n[start] failed: ${error instanceof StartError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  void shutdown('start failed', 1);
});
