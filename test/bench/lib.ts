/**
 * What every benchmark row shares: the row shape, medians, alternating runs, and child processes
 * that are always stopped. Timing is never asserted in tests; it is measured and reported here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';

export const ROOT = path.resolve(__dirname, '..', '..');
export const RESULTS_DIR = path.join(ROOT, 'bench-results');

/** One line of the table. `pass` undefined = reported only (no goal applies). */
export interface Row {
  /** Issue row number and letter, e.g. "3b". */
  id: string;
  what: string;
  /** Our median, formatted with its unit. */
  ours: string;
  reference: string;
  ratio: string;
  goal: string;
  pass: boolean | undefined;
  /** How it was measured, what the numbers hide, why it missed. */
  note?: string;
  /** The raw numbers, for the JSON file. */
  data?: Record<string, unknown>;
}

export interface BenchContext {
  quick: boolean;
  /** Scratch folder under bench-results/, removed at the end. */
  work: string;
  log: (line: string) => void;
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function max(values: number[]): number {
  return values.reduce((a, b) => Math.max(a, b), -Infinity);
}

/**
 * Runs the measurements in turn, `runs` rounds, each round in a rotated order (a b c, b c a, c a b…),
 * so that neither side always runs first or last on a noisy machine. Returns the samples per name.
 */
export async function alternate<K extends string>(
  runs: number,
  fns: Record<K, () => Promise<number>>,
): Promise<Record<K, number[]>> {
  const names = Object.keys(fns) as K[];
  const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < runs; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length] as K;
      samples[name].push(await fns[name]());
    }
  }
  return samples;
}

export function ms(value: number, digits?: number): string {
  if (!Number.isFinite(value)) return '—';
  const d = digits ?? (value < 1 ? 3 : value < 10 ? 2 : value < 100 ? 1 : 0);
  return `${value.toFixed(d)} ms`;
}

export function bytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}

export function mbps(bytesPerSecond: number): string {
  return Number.isFinite(bytesPerSecond) ? `${(bytesPerSecond / 1024 / 1024).toFixed(0)} MiB/s` : '—';
}

export function ratio(value: number, digits = 2): string {
  return Number.isFinite(value) ? `${value.toFixed(digits)}×` : '—';
}

/** Children started by the bench; all are killed if the bench itself is interrupted or fails. */
const children = new Set<ChildProcess>();

function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    console.error(`\nbench: ${signal}, stopping what it started`);
    // process.exit runs the 'exit' handlers: these children, and code-server's process groups.
    process.exit(130);
  });
}

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end and collects its output (rejects on spawn errors only). */
export function runProcess(
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd ?? ROOT,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : undefined;
    child.on('error', (err) => {
      children.delete(child);
      if (timer) clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      children.delete(child);
      if (timer) clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface CurlResult {
  /** curl's own `time_total`. */
  ms: number;
  /** User and system CPU time of the curl process, from /usr/bin/time (10 ms resolution); NaN where that is missing. */
  cpuMs: number;
  status: number;
  /** `size_download` or `size_upload`, whichever `what` names. */
  bytes: number;
  stderr: string;
}

/** One curl transfer, timed by curl itself, its CPU time by /usr/bin/time when that exists. */
export async function runCurl(args: string[], what: 'size_download' | 'size_upload'): Promise<CurlResult> {
  const curlArgs = ['-sS', '-w', `%{time_total} %{http_code} %{${what}}`, ...args];
  const timed = fs.existsSync('/usr/bin/time');
  const r = timed
    ? await runProcess('/usr/bin/time', ['-f', 'curl-cpu %U %S', 'curl', ...curlArgs], { timeoutMs: 300_000 })
    : await runProcess('curl', curlArgs, { timeoutMs: 300_000 });
  const [seconds, status, size] = r.stdout.trim().split(' ');
  const cpu = /curl-cpu ([\d.]+) ([\d.]+)/.exec(r.stderr);
  if (r.code !== 0) throw new Error(`curl failed: exit ${r.code}, HTTP ${status}: ${r.stderr}`);
  return {
    ms: Number(seconds) * 1000,
    cpuMs: cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : NaN,
    status: Number(status),
    bytes: Number(size),
    stderr: r.stderr,
  };
}

/** CPU milliseconds per MiB moved, formatted. */
export function cpuPerMib(cpuMs: number, size: number): string {
  return Number.isFinite(cpuMs) ? `${(cpuMs / (size / (1024 * 1024))).toFixed(2)} ms CPU/MiB` : 'CPU not measured';
}

/** `node --import tsx <script>`: a TypeScript file of this folder in a fresh Node process. */
export function tsxArgs(script: string, args: string[] = []): string[] {
  return ['--import', 'tsx', path.join(__dirname, script), ...args];
}

/** Runs a child script that prints one JSON line as its last output; returns it parsed. */
export async function runJsonChild<T>(script: string, args: string[], timeoutMs = 120_000): Promise<T> {
  const result = await runProcess(process.execPath, tsxArgs(script, args), { timeoutMs });
  const last = result.stdout.trim().split('\n').pop() ?? '';
  if (result.code !== 0 || !last.startsWith('{')) {
    throw new Error(
      `${script} failed (exit ${result.code}): ${result.stderr.trim().split('\n').slice(-8).join('\n')}${result.stdout.slice(-500)}`,
    );
  }
  return JSON.parse(last) as T;
}

/**
 * A long-lived child that prints one JSON line when it is ready (its address and so on) and stops
 * when its stdin closes.
 */
export class ServiceChild<T> {
  private constructor(
    private readonly child: ChildProcess,
    readonly info: T,
  ) {}

  static async start<T>(script: string, args: string[] = [], timeoutMs = 30_000): Promise<ServiceChild<T>> {
    const child = spawn(process.execPath, tsxArgs(script, args), { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    children.add(child);
    const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const info = await new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${script} did not report ready within ${timeoutMs} ms`)),
        timeoutMs,
      );
      lines.once('line', (line) => {
        clearTimeout(timer);
        try {
          resolve(JSON.parse(line) as T);
        } catch {
          reject(new Error(`${script} printed ${line}`));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${script} exited (${code}) before it was ready`));
      });
    }).catch((err: unknown) => {
      child.kill('SIGKILL');
      throw err;
    });
    return new ServiceChild(child, info);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(child);
      return;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    children.delete(child);
  }
}

/** In a child script: calls `stop` and exits when the parent closes our stdin (or goes away). */
export function stopWhenParentLeaves(stop: () => Promise<void>): void {
  const leave = () => {
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.stdin.on('end', leave);
  process.stdin.on('close', leave);
  process.stdin.resume();
  process.once('SIGTERM', leave);
}

/** Peak resident set since the last reset, from /proc (Linux). */
export function peakRss(): number {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kb * 1024;
}

export function currentRss(): number {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) * 1024;
}

/** Resets the peak-RSS mark to the current RSS (writing 5 to clear_refs; Linux ≥ 4.0). */
export function resetPeakRss(): boolean {
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}
