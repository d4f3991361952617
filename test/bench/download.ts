/**
 * Row 8: a 100 MB video from the double's result link (its CDN origin, `[[big:100]]`) to the
 * workspace, by the extension's media code (`downloadVideo`: streamed to a temporary file, fsync,
 * MP4 check, unique name) in a child process, against `curl -o` from the same link. Alternating; medians.
 * Each child warms up on a 1 MB video's link first (see transferChild.ts for why).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { queryVideo, submitVideo } from '../../src/core/media/video';
import { clientFor } from '../support/client';
import { alternate, bytes, max, mbps, median, ratio, runJsonChild, runProcess, type BenchContext, type Row } from './lib';
import type { GatewayInfo } from './streams';

const MB = 100;
/** Never more than this, whatever the receive floor does. */
const RSS_CAP = 64 * 1024 * 1024;
/** Against the receive floor (the same response read and dropped, same warm-up, same run). */
const RSS_FLOOR_RATIO = 1.2;
/** The warm-up link's size: the same download on a small video, then read 10 times (transferChild.ts). */
export const WARM_UP_MB = 1;

interface TransferResult {
  ms: number;
  rssGrowth: number;
  sampledGrowth: number;
  bytes: number;
  peakReset: boolean;
}

/** Submits a video task with `[[big:MB]]` and polls until the double gives its result link. */
export async function resultLink(gw: GatewayInfo, mb: number): Promise<string> {
  const { http } = clientFor(gw.url, gw.key);
  try {
    const id = await submitVideo(http, { model: 'wan2.5-t2v-preview', prompt: `[[big:${mb}]] a red fox running through snow`, size: '832*480', duration: 5 });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const s = await queryVideo(http, id);
      if (s.status === 'SUCCESS' && s.videoUrl) return s.videoUrl;
      if (s.status === 'FAILURE') throw new Error(`the video task failed: ${s.failReason ?? s.rawStatus}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the video task did not finish within 60 s');
  } finally {
    await http.close();
  }
}

export async function downloadRows(ctx: BenchContext, gw: GatewayInfo): Promise<Row[]> {
  const runs = ctx.quick ? 3 : 5;
  const url = await resultLink(gw, MB);
  const warmUp = await resultLink(gw, WARM_UP_MB);
  if (gw.cdnUrl && !url.startsWith(gw.cdnUrl)) ctx.log(`download: note: the result link ${url} is not on the CDN origin ${gw.cdnUrl}`);
  const dir = path.join(ctx.work, 'workspace', 'generated', 'videos');
  fs.mkdirSync(dir, { recursive: true });
  ctx.log(`download: ${MB} MB video, ${runs} rounds of ours and curl`);
  // The first request makes the double build the file; it is kept for the later ones.
  await runProcess('curl', ['-sS', '-o', '/dev/null', url], { timeoutMs: 300_000 });

  const ours: TransferResult[] = [];
  const drain: TransferResult[] = [];
  const curl: number[] = [];
  let size = 0;
  await alternate(runs, {
    ours: async () => {
      const r = await runJsonChild<TransferResult>('transferChild.ts', ['download', gw.url, gw.key, url, dir, warmUp], 300_000);
      ours.push(r);
      size = r.bytes;
      return r.ms;
    },
    drain: async () => {
      const r = await runJsonChild<TransferResult>('transferChild.ts', ['drain', gw.url, gw.key, url, '-', warmUp], 300_000);
      drain.push(r);
      return r.ms;
    },
    curl: async () => {
      const out = path.join(dir, 'curl-video.mp4');
      const r = await runProcess('curl', ['-sS', '-o', out, '-w', '%{time_total} %{http_code} %{size_download}', url], { timeoutMs: 300_000 });
      const [seconds, code, downloaded] = r.stdout.trim().split(' ');
      fs.rmSync(out, { force: true });
      if (r.code !== 0 || code !== '200') throw new Error(`curl download failed: exit ${r.code}, HTTP ${code}: ${r.stderr}`);
      size ||= Number(downloaded);
      const ms = Number(seconds) * 1000;
      curl.push(ms);
      return ms;
    },
  });
  const oursMs = median(ours.map((r) => r.ms));
  const curlMs = median(curl);
  const oursRate = (size / oursMs) * 1000;
  const curlRate = (size / curlMs) * 1000;
  const growth = median(ours.map((r) => r.rssGrowth));
  const drainMs = median(drain.map((r) => r.ms));
  const drainGrowth = median(drain.map((r) => r.rssGrowth));
  const growthGoal = Math.min(RSS_CAP, RSS_FLOOR_RATIO * drainGrowth);
  return [
    {
      id: '8',
      what: `Download: ${bytes(size)} video from the result link, throughput vs curl -o`,
      ours: mbps(oursRate),
      reference: mbps(curlRate),
      ratio: ratio(oursRate / curlRate),
      goal: '≥ 0.8× curl',
      pass: oursRate / curlRate >= 0.8,
      note:
        `src/core/media downloadVideo (stream to a temp file, fsync, MP4 check, rename); median ours ${oursMs.toFixed(0)} ms, curl ${curlMs.toFixed(0)} ms (no fsync), ${runs} alternating rounds; ` +
        `the receive floor (the same link through the same reader, HttpClient.getLarge, bytes dropped, no disk) ${drainMs.toFixed(0)} ms = ${ratio(curlMs / drainMs)} curl`,
      data: { size, url: url.replace(/\?.*$/, '?…'), ours, drain, curlMs: curl },
    },
    {
      id: '8',
      what: 'Download: throughput vs the receive floor (the same reader, no disk)',
      ours: mbps(oursRate),
      reference: mbps((size / drainMs) * 1000),
      ratio: ratio(drainMs / oursMs),
      goal: '(reported)',
      pass: undefined,
      note: `the floor: the same link through HttpClient.getLarge, each chunk handed back as it comes, no disk, median ${drainMs.toFixed(0)} ms (${ratio(curlMs / drainMs)} of curl in this run); what writing the file costs on top`,
    },
    {
      id: '8',
      what: 'Download: peak RSS growth of the receiving process vs the receive floor',
      ours: bytes(growth),
      reference: bytes(drainGrowth),
      ratio: ratio(growth / drainGrowth),
      goal: `≤ ${RSS_FLOOR_RATIO}× floor and ≤ ${bytes(RSS_CAP)}`,
      pass: growth <= growthGoal,
      note:
        `median of ${runs} (max ${bytes(max(ours.map((r) => r.rssGrowth)))}); peak RSS (VmHWM, reset after the warm-up) minus RSS before; ` +
        `reference: the receive floor, the same response read through the same reader and dropped (max ${bytes(max(drain.map((r) => r.rssGrowth)))}); both warm up alike (transferChild.ts)`,
    },
  ];
}
