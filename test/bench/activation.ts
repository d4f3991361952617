/**
 * Row 2: activation in a real extension host (code-server's, VS Code 1.100), a fresh one per start.
 *
 * The extension is loaded from a scratch copy whose `main` is a small shim around the production
 * entry (dist/extension.js as `node esbuild.js --production` builds it, with dist/features.js,
 * dist/http.js and dist/undici.js beside it, which the entry loads on first use). The shim times
 * `require(bundle)` (code loading) and the `activate()` call; the tests module also times
 * `vscode.extensions.getExtension(id).activate()` as the API caller sees it (host bookkeeping,
 * ExtensionContext creation, storage). "activate()" in the goal = code loading + the activate() call:
 * what the extension itself controls.
 *
 * One more start uses an instrumented build of the same bundle, in which every node_modules module
 * records itself when it is initialised, to show what activation loads (nothing heavy may be).
 */
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runExtensionTests } from '../vscode/runInExtensionHost';
import { bytes, median, ms, max, ROOT, runProcess, type BenchContext, type Row } from './lib';

interface ProbeResult {
  wasActive: boolean;
  apiMs: number;
  shim?: { requireMs: number; activateMs: number };
  loaded?: string[];
  requireCache: string[];
  /** The extension's JavaScript files that activation loaded, with their sizes. */
  files?: { file: string; bytes: number }[];
  /** The files of dist/ that activation must not load (features, HTTP client, undici) but did. */
  lazyLoaded?: string[];
}

/** esbuild.js's host build (the entry and the files it loads on first use), so that the bench measures what ships. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the project's build script is CommonJS JavaScript
const { buildHost } = require('../../esbuild.js') as {
  buildHost: (o: {
    production: boolean;
    outdir: string;
    absWorkingDir: string;
    plugins: esbuild.Plugin[];
    logLevel: esbuild.LogLevel;
  }) => Promise<unknown>;
};

/** The host files a production build writes to dist/: the entry and what it loads on first use (esbuild.js). */
const HOST_FILES = ['extension.js', 'features.js', 'http.js', 'undici.js'] as const;

const GOAL_MS = 30;
const LOADED_GOAL = 150 * 1024;
const HEAVY = [
  { name: 'undici', test: (m: string) => m.startsWith('undici/') },
  { name: 'zod classic', test: (m: string) => /^zod\/(v4\/classic|v3)\//.test(m) },
  { name: 'markdown-it', test: (m: string) => m.startsWith('markdown-it/') },
  { name: 'highlight.js', test: (m: string) => m.startsWith('highlight.js/') },
  { name: 'dompurify', test: (m: string) => m.startsWith('dompurify/') },
];

const SHIM = `'use strict';
// Written by test/bench/activation.ts: times loading the production bundle and its activate().
const t0 = performance.now();
const extension = require('./extension.js');
const requireMs = performance.now() - t0;
exports.activate = function (context) {
  const t1 = performance.now();
  const result = extension.activate(context);
  const record = () => (globalThis.__mgBenchShim = { requireMs, activateMs: performance.now() - t1 });
  if (result && typeof result.then === 'function') return result.then((value) => (record(), value));
  record();
  return result;
};
exports.deactivate = function () {
  return extension.deactivate ? extension.deactivate() : undefined;
};
`;

/** Marks each node_modules module as initialised when its body runs (instrumented build only). */
const markModules: esbuild.Plugin = {
  name: 'mark-modules',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.(c|m)?js$/ }, async (args) => {
      const source = await fs.promises.readFile(args.path, 'utf8');
      const id =
        args.path
          .split(/[\\/]node_modules[\\/]/)
          .pop()
          ?.replace(/\\/g, '/') ?? args.path;
      const mark = `;(globalThis.__mgBenchLoaded ??= new Set()).add(${JSON.stringify(id)});\n`;
      // After a 'use strict' directive, so that it stays a directive.
      const directive = /^(\s*(?:\/\/[^\n]*\n\s*)*(['"])use strict\2;?)/.exec(source);
      const contents = directive ? directive[0] + mark + source.slice(directive[0].length) : mark + source;
      return { contents, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

/** A copy of the extension folder whose main is the shim around the host files in `hostDir`. */
function extensionCopy(dir: string, hostDir: string): void {
  fs.mkdirSync(path.join(dir, 'dist'), { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  manifest.main = './dist/bench-shim.js';
  delete manifest.scripts;
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  fs.cpSync(path.join(ROOT, 'media'), path.join(dir, 'media'), {
    recursive: true,
    filter: (src) => !src.includes('screenshots'),
  });
  if (fs.existsSync(path.join(ROOT, 'dist', 'webview')))
    fs.cpSync(path.join(ROOT, 'dist', 'webview'), path.join(dir, 'dist', 'webview'), { recursive: true });
  for (const file of HOST_FILES) fs.copyFileSync(path.join(hostDir, file), path.join(dir, 'dist', file));
  fs.writeFileSync(path.join(dir, 'dist', 'bench-shim.js'), SHIM);
}

function bytesOf(file: string): string {
  return bytes(fs.statSync(file).size);
}

async function oneStart(
  ctx: BenchContext,
  devPath: string,
  testsPath: string,
  workspace: string,
  label: string,
): Promise<ProbeResult> {
  const out = path.join(ctx.work, `activation-${label}.json`);
  fs.rmSync(out, { force: true });
  // runExtensionTests echoes the extension host's console; the bench only wants its own lines.
  const log = console.log;
  console.log = () => undefined;
  let exitCode: number;
  try {
    ({ exitCode } = await runExtensionTests({
      devPath,
      testsPath,
      workspace,
      env: { MG_BENCH_OUT: out },
      timeoutMs: 120_000,
    }));
  } finally {
    console.log = log;
  }
  if (exitCode !== 0 || !fs.existsSync(out))
    throw new Error(`the activation probe failed in the extension host (exit ${exitCode}); see test-results/`);
  return JSON.parse(fs.readFileSync(out, 'utf8')) as ProbeResult;
}

export async function activationRows(ctx: BenchContext): Promise<Row[]> {
  const starts = ctx.quick ? 3 : 7;
  ctx.log('node esbuild.js --production');
  const build = await runProcess(process.execPath, ['esbuild.js', '--production'], { timeoutMs: 120_000 });
  if (build.code !== 0) throw new Error(`the production build failed: ${build.stderr}`);
  const productionDir = path.join(ctx.work, 'host-production');
  fs.mkdirSync(productionDir, { recursive: true });
  for (const file of HOST_FILES) fs.copyFileSync(path.join(ROOT, 'dist', file), path.join(productionDir, file));
  const production = path.join(productionDir, 'extension.js');

  // The instrumented twin: esbuild.js's production host build, every node_modules module marked.
  const instrumentedDir = path.join(ctx.work, 'host-instrumented');
  await buildHost({
    production: true,
    outdir: instrumentedDir,
    absWorkingDir: ROOT,
    plugins: [markModules],
    logLevel: 'silent',
  });

  const productionExt = path.join(ctx.work, 'ext-production');
  const instrumentedExt = path.join(ctx.work, 'ext-instrumented');
  extensionCopy(productionExt, productionDir);
  extensionCopy(instrumentedExt, instrumentedDir);
  const testsPath = path.join(ctx.work, 'activationProbe.js');
  await esbuild.build({
    entryPoints: [path.join(__dirname, 'activationProbe.ts')],
    outfile: testsPath,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    logLevel: 'silent',
  });
  const workspace = path.join(ctx.work, 'activation-workspace');
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, 'README.md'), '# Activation benchmark\n');

  const results: ProbeResult[] = [];
  for (let i = 0; i < starts; i++) {
    ctx.log(`activation: fresh extension host ${i + 1}/${starts}`);
    const r = await oneStart(ctx, productionExt, testsPath, workspace, `run${i}`);
    if (r.wasActive)
      throw new Error(
        'the extension was already active before the probe activated it; the timing would be meaningless',
      );
    results.push(r);
  }
  ctx.log('activation: instrumented bundle, to see which modules activation initialises');
  const probe = await oneStart(ctx, instrumentedExt, testsPath, workspace, 'instrumented');

  const own = results.map((r) => (r.shim ? r.shim.requireMs + r.shim.activateMs : NaN));
  const requireMs = median(results.map((r) => r.shim?.requireMs ?? NaN));
  const activateMs = median(results.map((r) => r.shim?.activateMs ?? NaN));
  const api = median(results.map((r) => r.apiMs));
  const total = median(own);
  const loaded = probe.loaded ?? [];
  const heavy = HEAVY.filter((h) => loaded.some(h.test)).map((h) => h.name);
  const files = results[0]?.files ?? [];
  const loadedBytes = files.reduce((sum, f) => sum + f.bytes, 0);
  const lazyLoaded = [...new Set(results.flatMap((r) => r.lazyLoaded ?? []))];
  const packages = [
    ...new Set(loaded.map((m) => (m.startsWith('@') ? m.split('/').slice(0, 2).join('/') : (m.split('/')[0] ?? m)))),
  ];
  const note = `median of ${starts} fresh extension hosts: code loading ${ms(requireMs)}, activate() ${ms(activateMs)}; ext.activate() as an API caller sees it (adds the host's own bookkeeping) ${ms(api)}, max ${ms(max(results.map((r) => r.apiMs)))}`;
  return [
    {
      id: '2',
      what: `Activation: activate() call, fresh extension host ×${starts}`,
      ours: ms(activateMs),
      reference: '—',
      ratio: '—',
      goal: `≤ ${GOAL_MS} ms`,
      pass: activateMs <= GOAL_MS,
      note,
      data: { starts: results },
    },
    {
      id: '2',
      what: 'Activation: require(bundle) + activate()',
      ours: ms(total),
      reference: '—',
      ratio: '—',
      goal: `≤ ${GOAL_MS} ms (incl. code loading)`,
      pass: total <= GOAL_MS,
      note: `code loading = parsing and running the top level of the ${bytesOf(production)} bundle`,
    },
    {
      id: '2',
      what: 'Activation: code loaded by require(bundle) + activate()',
      ours: bytes(loadedBytes),
      reference: '—',
      ratio: '—',
      goal: `≤ ${bytes(LOADED_GOAL)}`,
      pass: files.length > 0 && loadedBytes <= LOADED_GOAL && lazyLoaded.length === 0,
      note:
        `the extension's JavaScript files in Node's module cache after activation: ${files.map((f) => `${f.file} ${bytes(f.bytes)}`).join(', ') || 'none seen'}; ` +
        (lazyLoaded.length
          ? `activation loaded what must wait for first use: ${lazyLoaded.join(', ')}`
          : `dist/features.js (${bytesOf(path.join(productionDir, 'features.js'))}) is loaded by the first command or view, dist/http.js (${bytesOf(path.join(productionDir, 'http.js'))}) and dist/undici.js (${bytesOf(path.join(productionDir, 'undici.js'))}) by the first request`),
      data: { files, lazyLoaded },
    },
    {
      id: '2',
      what: 'Activation: heavy modules initialised by activate()',
      ours: heavy.length ? heavy.join(', ') : 'none',
      reference: '—',
      ratio: '—',
      goal: 'no undici, zod classic, markdown',
      pass: heavy.length === 0 && probe.requireCache.length === 0,
      note: `instrumented bundle: ${loaded.length} node_modules modules initialised (${packages.join(', ') || 'none'})${probe.requireCache.length ? `; also required from disk: ${probe.requireCache.join(', ')}` : ''}`,
      data: { loaded, requireCache: probe.requireCache },
    },
  ];
}
