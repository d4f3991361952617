/**
 * One upload or download by our code, in a process of its own so that its memory can be read cleanly.
 * After a warm-up (undici loaded, connection pool made) the peak-RSS mark is reset; the transfer is
 * timed; the growth is peak RSS (VmHWM) minus the RSS at the start, cross-checked by sampling.
 *
 *   node --import tsx transferChild.ts upload   <gateway url> <key> <pdf> <small pdf>
 *   node --import tsx transferChild.ts download <gateway url> <key> <video url> <folder>
 *   node --import tsx transferChild.ts drain    <gateway url> <key> <video url> -
 */
import * as fs from 'node:fs';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { downloadVideo } from '../../src/core/media/video';
import { parsePdf } from '../../src/core/tools/glm';
import { clientFor } from '../support/client';
import { currentRss, peakRss, resetPeakRss } from './lib';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const LONG = { connectMs: 5000, firstByteMs: 300_000, idleMs: 300_000, longMs: 300_000 };

async function measure<T>(work: () => Promise<T>): Promise<{ ms: number; rssGrowth: number; sampledGrowth: number; baseRss: number; result: T; peakReset: boolean }> {
  gc();
  gc();
  const peakReset = resetPeakRss();
  const baseRss = currentRss();
  let sampledMax = baseRss;
  const sampler = setInterval(() => (sampledMax = Math.max(sampledMax, currentRss())), 5);
  const t0 = performance.now();
  const result = await work();
  const ms = performance.now() - t0;
  clearInterval(sampler);
  sampledMax = Math.max(sampledMax, currentRss());
  const peak = peakReset ? peakRss() : sampledMax;
  return { ms, rssGrowth: peak - baseRss, sampledGrowth: sampledMax - baseRss, baseRss, result, peakReset };
}

async function main(): Promise<void> {
  const [mode, url, key, target, extra] = process.argv.slice(2);
  if (!mode || !url || !key || !target || !extra) throw new Error('usage: transferChild.ts upload|download|drain <gateway> <key> <file|url> <small pdf|folder|->');
  const { http } = clientFor(url, key, { timeouts: LONG });
  try {
    if (mode === 'upload') {
      await parsePdf(http, extra); // warm-up on a small file: same code path
      const m = await measure(() => parsePdf(http, target));
      console.log(JSON.stringify({ ...m, result: { chars: m.result.content.length }, bytes: fs.statSync(target).size }));
    } else if (mode === 'drain') {
      // The floor of Node's receive path: the same link through the same HTTP client, bytes dropped.
      await http.send({ method: 'GET', url: `${url}/v1/models` }).then((r) => r.text());
      const m = await measure(async () => {
        const response = await http.send({ method: 'GET', url: target, anonymous: true });
        let n = 0;
        for await (const chunk of response.body) n += (chunk as Buffer).length;
        return n;
      });
      console.log(JSON.stringify({ ...m, bytes: m.result }));
    } else {
      await http.send({ method: 'GET', url: `${url}/v1/models` }).then((r) => r.text());
      const m = await measure(() => downloadVideo(http, target, { dir: extra, baseName: 'bench-video' }));
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
