/**
 * The gateway double in a process of its own, so that producing a 10 MB stream (or parsing a
 * 20 MiB upload) never competes with the measured client for the same event loop; beside it, the
 * front that serves answers it has seen before in bursts (burstOrigin.ts, for row 3).
 * Prints `{"url", "catalogUrl", "key", "burstUrl", "cdnUrl"?}` once listening; stops when stdin closes.
 */
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { BurstOrigin } from './burstOrigin';
import { stopWhenParentLeaves } from './lib';

async function main(): Promise<void> {
  // One key with an unlimited quota: hundreds of 10 MB answers would exhaust the demo quota.
  // Video tasks move every 20 ms instead of every few seconds: the bench wants the result link.
  // Idle connections are kept for the whole run: see GatewayOptions.keepAliveTimeoutMs.
  const options = { keys: [{ key: DEMO_KEY, group: 'default' }], videoTiming: { stepMs: 20, pollMs: 20 }, keepAliveTimeoutMs: 120_000 };
  const gw = new GatewayDouble(options);
  await gw.start();
  const burst = new BurstOrigin(gw.url);
  await burst.start();
  // The CDN origin (video result links) is newer than the rest of the double.
  const cdn = (gw as unknown as { cdnUrl?: unknown }).cdnUrl;
  console.log(JSON.stringify({ url: gw.url, catalogUrl: gw.catalogUrl, key: gw.demoKey, burstUrl: burst.url, ...(typeof cdn === 'string' ? { cdnUrl: cdn } : {}) }));
  stopWhenParentLeaves(async () => {
    await burst.stop();
    await gw.stop();
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
