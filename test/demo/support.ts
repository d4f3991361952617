/**
 * Helpers for `npm start` that know nothing about the extension: ports, child processes, the
 * user settings file and the console box.
 */
import { TEAM_KEY } from '../gateway';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as net from 'node:net';

/** True when nothing listens on 127.0.0.1:port (a listener on 0.0.0.0 or [::] also counts as taken). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port from the environment: undefined when unset, an error naming the variable when malformed. */
export function portFromEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${name}=${raw} is not a port number (0-65535)`);
  return port;
}

export interface RunResult {
  code: number | null;
  output: string;
}

/**
 * Runs a build tool with its output captured, so the console shows one progress line per step and
 * the tool's own chatter only when it fails.
 */
export function run(command: string, args: string[], cwd: string): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', (error) => resolve({ code: null, output: String(error) }));
    child.on('close', (code) => resolve({ code, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

/**
 * Every process below `root` in the process tree, found through /proc. Used as the last sweep on
 * shutdown: code-server's helpers, an npm install interrupted half-way, a vsix install still running.
 */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return []; // not Linux; the code-server install refuses to run there anyway
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStat(Number(entry));
    if (!fields) continue; // exited while we looked
    const ppid = Number(fields[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The fields of /proc/PID/stat after "pid (comm)": [state, ppid, ...]; undefined once it is gone. */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may hold spaces and brackets, so the fields start after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** A process by pid and start time, so a reused pid is not taken for the process that had it. */
interface ProcessIdentity {
  pid: number;
  startTime: string;
}

function identity(pid: number): ProcessIdentity | undefined {
  // Field 22 of stat, the 20th after comm.
  const startTime = procStat(pid)?.[19];
  return startTime === undefined ? undefined : { pid, startTime };
}

/**
 * Calls `onGone` once any of the `levels` nearest ancestors exits. Under `npm start` those are tsx,
 * sh and npm: a SIGTERM sent to npm alone ends npm and sh, but sh does not pass it on, so without
 * this the demo would run on, orphaned, holding its ports.
 */
export function watchAncestors(levels: number, onGone: () => void): void {
  const chain: ProcessIdentity[] = [];
  for (let pid = process.ppid; chain.length < levels && pid > 1;) {
    const id = identity(pid);
    if (!id) break;
    chain.push(id);
    pid = Number(procStat(pid)?.[1] ?? 0);
  }
  if (chain.length === 0) return; // no /proc: signals are all there is
  const timer = setInterval(() => {
    if (chain.every((id) => identity(id.pid)?.startTime === id.startTime)) return;
    clearInterval(timer);
    onGone();
  }, 500);
  // The servers keep the process alive; this check must not.
  timer.unref();
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie still answers signal 0 but is already dead; only its parent's wait() removes it.
  const state = procStat(pid)?.[0];
  return state !== undefined && state !== 'Z';
}

/** SIGTERM to every descendant, SIGKILL to those still there after `graceMs`. */
export async function stopDescendants(graceMs: number): Promise<void> {
  const pids = descendants(process.pid);
  for (const pid of pids) signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pids.some(isRunning) && Date.now() < deadline) await sleep(100);
  for (const pid of pids.filter(isRunning)) signal(pid, 'SIGKILL');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Reads a VS Code settings file, which may hold comments and trailing commas (JSONC). Returns
 * undefined when it is missing or not an object even then, so the caller can keep a copy aside.
 */
export async function readSettings(file: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(stripJsonComments(text));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Removes // and /* *\/ comments and trailing commas, leaving strings alone. */
function stripJsonComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      out += text.slice(start, i + 1);
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (c === ',' && /^\s*[}\]]/.test(textAfterComments(text, i + 1))) {
      // A trailing comma: dropped.
    } else out += c;
  }
  return out;
}

/** The text after `from` with leading whitespace and comments skipped (enough to see the next token). */
function textAfterComments(text: string, from: number): string {
  let i = from;
  for (;;) {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
    if (text.startsWith('//', i)) i = text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i);
    else if (text.startsWith('/*', i)) i = text.indexOf('*/', i) < 0 ? text.length : text.indexOf('*/', i) + 2;
    else return text.slice(i, i + 1);
  }
}

/** Lines in a frame, padded so the right edge lines up; a space before the edge keeps URLs clickable. */
export function box(lines: string[]): string {
  const width = Math.max(...lines.map((line) => line.length));
  const bar = '─'.repeat(width + 2);
  return [`┌${bar}┐`, ...lines.map((line) => `│ ${line.padEnd(width)} │`), `└${bar}┘`].join('\n');
}

/** The display languages the extension has words for, besides English. */
const DEMO_LOCALES = ['zh-cn'];

/**
 * `--locale zh-cn` or LOCALE=zh-cn: the display language the demo's VS Code starts in; undefined
 * (VS Code's default, English) when none is asked for. A language the extension has no words for
 * is refused, naming the ones it has.
 */
export function demoLocale(argv: readonly string[], env: Record<string, string | undefined>): string | undefined {
  const flag = argv.indexOf('--locale');
  const asked = ((flag >= 0 ? argv[flag + 1] : undefined) ?? env.LOCALE ?? '').trim().toLowerCase();
  if (!asked || asked === 'en') return undefined;
  if (!DEMO_LOCALES.includes(asked))
    throw new Error(
      `the extension has no words for the language "${asked}"; choose one of en, ${DEMO_LOCALES.join(', ')}`,
    );
  return asked;
}

/**
 * What else the double can show, told where a newcomer looks first (the README lists the same): a
 * second key in its own group, and the markers the double acts on when a prompt contains them
 * (test/gateway/chatScenarios.ts and mediaScenarios.ts list them all).
 */
export const DEMO_TRY_LIST: readonly string[] = [
  'More to try:',
  '  A second key, in its own group "team" (fewer models, qwen-max only there,',
  '  its own US$5 quota): "Model Gateway: Add API Key", any name, then paste',
  `    ${TEAM_KEY}`,
  '  A marker anywhere in a chat prompt makes the double act it out:',
  '    [[incomplete]]      the answer stops at the token limit (Continue is offered)',
  '    [[slow:800]]        each streamed piece waits 800 ms (time to press Stop)',
  '    [[failed]]          the answer fails after a few words',
  '    [[reasoning]]       the model thinks first, shown folded above the answer',
  '    [[tools:searchWeb]] query="VS Code" in Agent mode of VS Code\'s Chat view:',
  "                        the model calls the gateway's web search (priced, asks first)",
  '  In the Media Studio: [[fail]] in a video prompt fails the task (refunded),',
  '  [[slow:5000]] in an image prompt makes the image take 5 s.',
];
