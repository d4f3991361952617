/**
 * The static checks as a suite of `npm test`: the type check of the host and tests and of the
 * webview apps, ESLint (layers, line and function lengths, file sizes), Prettier's format check and
 * the import-cycle check (cycles.ts).
 * Each is one test: it passes when the tool exits 0 and fails with the tool's output otherwise. They
 * run side by side, each in its own process.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { SuiteResult } from '../support/mochaResults';

interface Check {
  name: string;
  /** A script in node_modules/.bin and its arguments. */
  command: string[];
}

const root = path.resolve(__dirname, '../..');

/** The files Prettier formats; `npm run format` writes the same set. */
export const FORMATTED = ['src/**/*.ts', 'test/**/*.{ts,js}', 'media/*.css', 'esbuild.js', 'eslint.config.mjs'];

export const CHECKS: Check[] = [
  { name: 'type check: host, core and tests', command: ['tsc', '-p', '.', '--noEmit'] },
  { name: 'type check: webview apps', command: ['tsc', '-p', 'src/webview', '--noEmit'] },
  { name: 'lint', command: ['eslint', '--max-warnings', '0', 'src', 'test'] },
  { name: 'format', command: ['prettier', '--check', ...FORMATTED] },
  { name: 'import cycles', command: ['tsx', 'test/checks/cycles.ts'] },
];

interface Outcome {
  code: number | null;
  output: string;
}

function runTool(command: string[]): Promise<Outcome> {
  const [tool, ...args] = command;
  const bin = path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? `${tool}.cmd` : String(tool));
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd: root, shell: process.platform === 'win32' });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => resolve({ code: null, output: `${output}\n${String(error)}` }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

export async function runChecksSuite(checks: Check[] = CHECKS): Promise<SuiteResult> {
  const started = Date.now();
  const outcomes = await Promise.all(checks.map((check) => runTool(check.command)));
  let passed = 0;
  let failed = 0;
  checks.forEach((check, index) => {
    const outcome = outcomes[index];
    if (outcome?.code === 0) {
      passed++;
      console.log(`  ✔ ${check.name}`);
    } else {
      failed++;
      console.log(`  ✖ ${check.name} (exit ${String(outcome?.code)}): ${check.command.join(' ')}`);
      console.log(outcome?.output.trimEnd().replace(/^/gm, '      '));
    }
  });
  console.log(`  (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return { passed, failed, skipped: 0 };
}
