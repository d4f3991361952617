/**
 * The builds the real-VS-Code suites run: the packaged extension (a production `dist/` in a .vsix)
 * and the development build (`dist/` with source maps, tests transpiled into `out/`). Both write
 * `dist/`, so when suites run side by side (`npm test`) the runner makes both once, in that order,
 * before any suite starts, and tells the suites through the environment; a suite run on its own
 * builds what it needs itself.
 */
import { execFile, execFileSync } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** A .vsix of the extension already made by the runner (its path). */
export const PACKAGED_VSIX_ENV = 'MODEL_GATEWAY_TEST_VSIX';
/** Set to 1 by the runner once `esbuild.js --tests` has run. */
export const TESTS_BUILT_ENV = 'MODEL_GATEWAY_TESTS_BUILT';

/**
 * Production bundle, then the .vsix into `outDir` (or a copy of the runner's .vsix). Only esbuild
 * writes into dist/ (vsce's own prepublish step runs the same production build again), so the repo
 * is left as a build leaves it.
 */
export async function packageExtension(outDir: string): Promise<string> {
  const vsix = path.join(outDir, 'model-gateway.vsix');
  const packaged = process.env[PACKAGED_VSIX_ENV];
  if (packaged) {
    await fsp.copyFile(packaged, vsix);
    return vsix;
  }
  await execFileAsync(process.execPath, ['esbuild.js', '--production'], { cwd: REPO_ROOT });
  // The repository's pinned vsce, run directly: what `npx @vscode/vsce` resolves, without a download.
  await execFileAsync(
    path.join(REPO_ROOT, 'node_modules', '.bin', 'vsce'),
    ['package', '--no-dependencies', '--no-rewrite-relative-links', '--allow-missing-repository', '--out', vsix],
    { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
  return vsix;
}

/** The development build the extension-host suites load (`dist/`) and their tests (`out/`). */
export function buildForTests(): void {
  if (process.env[TESTS_BUILT_ENV] === '1') return;
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'esbuild.js'), '--tests'], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
}

/**
 * Both builds, in the order that leaves the development build in `dist/` (the .vsix keeps the
 * production one), and the environment that hands them to the suites: `vsix` once the .vsix is
 * made, `all` once the development build is made too.
 */
export function buildOnceForSuites(
  outDir: string,
  needs: { vsix: boolean; tests: boolean },
): { vsix: Promise<Record<string, string>>; all: Promise<Record<string, string>> } {
  const vsix = needs.vsix
    ? packageExtension(outDir).then((file) => ({ [PACKAGED_VSIX_ENV]: file }))
    : Promise.resolve<Record<string, string>>({});
  const all = vsix.then(async (env) => {
    if (!needs.tests) return env;
    await execFileAsync(process.execPath, [path.join(REPO_ROOT, 'esbuild.js'), '--tests'], { cwd: REPO_ROOT });
    return { ...env, [TESTS_BUILT_ENV]: '1' };
  });
  // Each suite awaits what it needs and reports a failure as its own; none may go unhandled meanwhile.
  vsix.catch(() => undefined);
  all.catch(() => undefined);
  return { vsix, all };
}
