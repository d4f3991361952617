/**
 * Runs one suite of `npm test` in a child process of its own, so that suites run side by side
 * without their output interleaving: the child's output is kept and handed back whole when it
 * ends, and its counts come back through a file (never parsed from its output).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SuiteResult } from './mochaResults';

export interface SuiteRun {
  result: SuiteResult;
  /** Everything the child wrote to stdout and stderr, in the order it arrived. */
  output: string;
  /** Wall-clock seconds from start to exit. */
  seconds: number;
}

/** The command line a child gets: `<script> --suite <name> --result <file>`. */
export interface ChildArgs {
  suite: string;
  resultFile: string;
}

/** Reads `--suite` / `--result` from a command line; undefined when this is not a suite's child. */
export function childArgs(argv: string[]): ChildArgs | undefined {
  const value = (flag: string): string | undefined => {
    const index = argv.indexOf(flag);
    return index >= 0 ? argv[index + 1] : undefined;
  };
  const suite = value('--suite');
  const resultFile = value('--result');
  return suite && resultFile ? { suite, resultFile } : undefined;
}

const running = new Set<ChildProcess>();

// Ctrl-C reaches the children through the terminal's process group; a SIGTERM sent to this process
// alone (a CI time limit) is passed on, so each child stops its own code-server and browser.
for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, function onSignal() {
    for (const child of running) child.kill(signal);
    process.removeListener(signal, onSignal);
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

/**
 * Runs `script --suite name` under the same Node options as this process (tsx's loader included)
 * with `env` added, and resolves when it exits. A child that ends without writing its counts (it
 * crashed, or was killed) is one failure, with its output saying why.
 */
export async function runSuiteProcess(script: string, name: string, env: NodeJS.ProcessEnv = {}): Promise<SuiteRun> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), `mg-suite-${name}-`));
  const resultFile = path.join(dir, 'result.json');
  const started = Date.now();
  const chunks: Buffer[] = [];
  try {
    const code = await new Promise<number | string | null>((resolve) => {
      const child = spawn(process.execPath, [...process.execArgv, script, '--suite', name, '--result', resultFile], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      running.add(child);
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.on('error', (error) => {
        chunks.push(Buffer.from(`\n${String(error)}\n`));
        resolve(null);
      });
      child.on('close', (exitCode, signal) => {
        running.delete(child);
        resolve(exitCode ?? signal);
      });
    });
    let output = Buffer.concat(chunks).toString();
    const written = await fsp.readFile(resultFile, 'utf8').catch(() => undefined);
    let result: SuiteResult;
    if (written === undefined) {
      output += `\nThe ${name} suite's process ended (${String(code)}) without reporting its counts: one failure.\n`;
      result = { passed: 0, failed: 1, skipped: 0 };
    } else {
      result = JSON.parse(written) as SuiteResult;
    }
    return { result, output, seconds: (Date.now() - started) / 1000 };
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** In the child: writes the counts its parent reads. */
export async function reportToParent(args: ChildArgs, result: SuiteResult): Promise<void> {
  await fsp.writeFile(args.resultFile, JSON.stringify(result));
}

/** Runs `tasks` with at most `limit` of them at a time, in order of the list; resolves when all are done. */
export async function pool(tasks: Array<() => Promise<void>>, limit: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const task = tasks[next++];
      await task?.();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
}
