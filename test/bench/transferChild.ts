/**
 * One upload or download by our code, in a process of its own so that its memory can be read cleanly.
 * After a warm-up the peak-RSS mark is reset; the transfer is timed; the growth is peak RSS (VmHWM)
 * minus the RSS at the start, cross-checked by sampling.
 *
 * The warm-up makes the process look like an extension host that has already talked to the gateway:
 * the same transfer on a small file, then 10 MB of responses read through the same client and
 * reader (a small video's link, ten times; undici for the upload, whose answer comes through it,
 * `getLarge` for the downloads), then a pause until the RSS stops moving. Without it the measurement
 * is dominated by a one-off cost of the process, not of the transfer: once undici's HTTP parser
 * (llhttp, WebAssembly) has parsed a few megabytes, V8 recompiles it with its optimising compiler on
 * a background thread, and that compilation takes some 30–40 MiB of memory (heaptrack: V8's
 * `ExecuteTurbofanWasmCompilation` zones) — more than a 20 MiB upload itself, if it falls inside it.
 *
 *   node --import tsx transferChild.ts upload   <gateway url> <key> <pdf> <small pdf> <small video url>
 *   node --import tsx transferChild.ts download <gateway url> <key> <video url> <folder> <small video url>
 *   node --import tsx transferChild.ts drain    <gateway url> <key> <video url> - <small video url>
 */
import * as fs from 'node:fs';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { downloadVideo } from '../../src/core/media/videoDownload';
import { parsePdf } from '../../src/core/tools/glm';
import type { HttpClient } from '../../src/core/http';
import { clientFor } from '../support/client';
import { currentRss, peakRss, resetPeakRss } from './lib';
import { withOpened } from '../support/openedFiles';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const LONG = { connectMs: 5000, firstByteMs: 300_000, idleMs: 300_000, longMs: 300_000 };
const WARM_UP_READS = 10;

/** Reads the warm-up link WARM_UP_READS times, then waits (up to 5 s) until the RSS holds still. */
async function warmUp(
  http: HttpClient,
  link: string,
  read: (http: HttpClient, url: string) => Promise<number>,
): Promise<void> {
  for (let i = 0; i < WARM_UP_READS; i++) await read(http, link);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await sleep(200);
  for (let i = 0; i < 20; i++) {
    const before = currentRss();
    await sleep(250);
    if (Math.abs(currentRss() - before) < 256 * 1024) return;
  }
}

/** A response read and dropped through undici (`send`), the path of every answer but a download's. */
async function drainSent(http: HttpClient, url: string): Promise<number> {
  const response = await http.send({ method: 'GET', url, anonymous: true });
  let n = 0;
  for await (const chunk of response.body) n += (chunk as Buffer).length;
  return n;
}

/** A response read and dropped: the receive path the download uses, through the same client, no disk. */
async function drain(http: HttpClient, url: string): Promise<number> {
  const response = await http.getLarge({ url, anonymous: true });
  let n = 0;
  for await (const chunk of response.chunks) n += chunk.length;
  return n;
}

async function measure<T>(work: () => Promise<T>): Promise<{
  ms: number;
  cpuMs: number;
  rssGrowth: number;
  sampledGrowth: number;
  baseRss: number;
  result: T;
  peakReset: boolean;
}> {
  gc();
  gc();
  const peakReset = resetPeakRss();
  const baseRss = currentRss();
  let sampledMax = baseRss;
  const sampler = setInterval(() => (sampledMax = Math.max(sampledMax, currentRss())), 5);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await work();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  // User and system time of the whole process (the sampler's 5 ms ticks included, a few ms in all).
  const cpuMs = (cpu.user + cpu.system) / 1000;
  clearInterval(sampler);
  sampledMax = Math.max(sampledMax, currentRss());
  const peak = peakReset ? peakRss() : sampledMax;
  return { ms, cpuMs, rssGrowth: peak - baseRss, sampledGrowth: sampledMax - baseRss, baseRss, result, peakReset };
}

async function main(): Promise<void> {
  const [mode, url, key, target, extra, warmLink] = process.argv.slice(2);
  if (!mode || !url || !key || !target || !extra || !warmLink)
    throw new Error(
      'usage: transferChild.ts upload|download|drain <gateway> <key> <file|url> <small pdf|folder|-> <small video url>',
    );
  const { http } = clientFor(url, key, { timeouts: LONG });
  try {
    if (mode === 'upload') {
      await withOpened(extra, (f) => parsePdf(http, f)); // the same code path on a small file
      await warmUp(http, warmLink, drainSent);
      const m = await measure(() => withOpened(target, (f) => parsePdf(http, f)));
      console.log(
        JSON.stringify({ ...m, result: { chars: m.result.content.length }, bytes: fs.statSync(target).size }),
      );
    } else if (mode === 'drain') {
      // The floor of Node's receive path: the same link through the same HTTP client, bytes dropped.
      await warmUp(http, warmLink, drain);
      const m = await measure(() => drain(http, target));
      console.log(JSON.stringify({ ...m, bytes: m.result }));
    } else {
      fs.rmSync(await downloadVideo(http, undefined, warmLink, { dir: extra, baseName: 'bench-warm-up' })); // the same code path on a small file
      await warmUp(http, warmLink, drain);
      const m = await measure(() => downloadVideo(http, undefined, target, { dir: extra, baseName: 'bench-video' }));
      const bytes = fs.statSync(m.result).size;
      fs.rmSync(m.result, { force: true });
      console.log(JSON.stringify({ ...m, bytes }));
    }
  } finally {
    await http.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
