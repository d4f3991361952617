/**
 * The gateway double in a process of its own, so that producing a 10 MB stream (or parsing a
 * 20 MiB upload) never competes with the measured client for the same event loop; beside it, the
 * front that serves answers it has seen before in bursts (burstOrigin.ts, for row 3), and fronts
 * that pass the gateway and its CDN origin at real line rates (throttleFront.ts, for rows 7 and 8).
 * Prints `{"url", "catalogUrl", "key", "burstUrl", "cdnUrl"?, "throttled"}` once listening; stops when stdin closes.
 */
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { BurstOrigin } from './burstOrigin';
import { stopWhenParentLeaves } from './lib';
import { ThrottleFront } from './throttleFront';

/** The line rates rows 7 and 8 measure at, in Mbit/s. */
export const LINE_RATES_MBIT = [100, 1000];

async function main(): Promise<void> {
  // One key with an unlimited quota: hundreds of 10 MB answers would exhaust the demo quota.
  // Video tasks move every 20 ms instead of every few seconds: the bench wants the result link.
  // Idle connections are kept for the whole run: see GatewayOptions.keepAliveTimeoutMs.
  const options = {
    keys: [{ key: DEMO_KEY, group: 'default' }],
    videoTiming: { stepMs: 20, pollMs: 20 },
    keepAliveTimeoutMs: 120_000,
  };
  const gw = new GatewayDouble(options);
  await gw.start();
  const burst = new BurstOrigin(gw.url);
  await burst.start();
  // The CDN origin (video result links) is newer than the rest of the double.
  const cdn = (gw as unknown as { cdnUrl?: unknown }).cdnUrl;
  const fronts: ThrottleFront[] = [];
  const throttled = [];
  for (const mbit of LINE_RATES_MBIT) {
    const front = await new ThrottleFront(new URL(gw.url), mbit * 1e6).start();
    const cdnFront = typeof cdn === 'string' ? await new ThrottleFront(new URL(cdn), mbit * 1e6).start() : undefined;
    fronts.push(front, ...(cdnFront ? [cdnFront] : []));
    throttled.push({ mbit, url: front.url, ...(cdnFront ? { cdnUrl: cdnFront.url } : {}) });
  }
  console.log(
    JSON.stringify({
      url: gw.url,
      catalogUrl: gw.catalogUrl,
      key: gw.demoKey,
      burstUrl: burst.url,
      ...(typeof cdn === 'string' ? { cdnUrl: cdn } : {}),
      throttled,
    }),
  );
  stopWhenParentLeaves(async () => {
    for (const front of fronts) await front.stop();
    await burst.stop();
    await gw.stop();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
