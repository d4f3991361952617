/**
 * Loaded by a fresh VS Code extension host as its "tests" module (bundled to JavaScript by
 * activation.ts). Activates the extension through the public API, once, and writes what it cost to
 * MG_BENCH_OUT. The extension's `main` is a shim (written by activation.ts) that times the
 * `require` of the production bundle and the `activate()` call separately.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

const EXTENSION_ID = 'model-gateway.model-gateway';

interface ShimTimes {
  requireMs: number;
  activateMs: number;
}

export async function run(): Promise<void> {
  const out = process.env.MG_BENCH_OUT;
  if (!out) throw new Error('MG_BENCH_OUT is not set');
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not installed in this extension host`);
  const wasActive = ext.isActive;
  const t0 = performance.now();
  await ext.activate();
  const apiMs = performance.now() - t0;
  const g = globalThis as { __mgBenchShim?: ShimTimes; __mgBenchLoaded?: Set<string> };
  // Modules of the bundle that were initialised (only in the instrumented bundle), and anything
  // heavy the extension pulled in through Node's own loader (VS Code's own undici does not count).
  const ours = ext.extensionPath;
  const cached = Object.keys(require.cache).filter(
    (k) => k.startsWith(ours) && /node_modules[\\/](undici|zod|markdown-it|highlight\.js|dompurify)[\\/]/.test(k),
  );
  // Every JavaScript file of the extension that activation made Node load (the bench's shim aside):
  // the code activation reads and parses.
  const files = Object.keys(require.cache)
    .filter((k) => k.startsWith(ours) && k.endsWith('.js') && !k.endsWith('bench-shim.js'))
    .map((k) => ({ file: path.relative(ours, k).replace(/\\/g, '/'), bytes: fs.statSync(k).size }));
  // What the entry loads on first use only (src/extension.ts, esbuild.js): activation must not.
  const lazyLoaded = files
    .map((f) => f.file)
    .filter((f) => ['dist/features.js', 'dist/http.js', 'dist/undici.js'].includes(f));
  fs.writeFileSync(
    out,
    JSON.stringify({
      wasActive,
      apiMs,
      shim: g.__mgBenchShim,
      loaded: g.__mgBenchLoaded ? [...g.__mgBenchLoaded] : undefined,
      requireCache: cached,
      files,
      lazyLoaded,
    }),
  );
}
