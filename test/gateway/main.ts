/**
 * `npm run gateway [-- --port N] [-- --catalog-port N] [-- --cdn-port N]`: runs the double by hand for
 * manual tries. Ports also come from GATEWAY_PORT / CATALOG_PORT / CDN_PORT; 0 (the default) picks free ones.
 */
import { parseArgs } from 'node:util';
import { CHAT_SCENARIOS, GatewayDouble, MEDIA_SCENARIOS } from './index';

function port(flag: string | undefined, env: string | undefined, name: string): number {
  const raw = flag ?? env ?? '0';
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name}: not a port: ${raw}`);
  return value;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { port: { type: 'string' }, 'catalog-port': { type: 'string' }, 'cdn-port': { type: 'string' } },
  });
  const double = new GatewayDouble({
    port: port(values.port, process.env.GATEWAY_PORT, '--port'),
    catalogPort: port(values['catalog-port'], process.env.CATALOG_PORT, '--catalog-port'),
    cdnPort: port(values['cdn-port'], process.env.CDN_PORT, '--cdn-port'),
  });
  await double.start();
  console.log(`Gateway double listening.
  gateway base URL : ${double.url}
  catalog file     : ${double.catalogUrl}
  result CDN       : ${double.cdnUrl}
  demo key         : ${double.demoKey}
  chat scenarios   : type into a prompt ${CHAT_SCENARIOS.filter((s) => s.marker.startsWith('[['))
    .map((s) => s.marker)
    .join(' ')}
  media scenarios  : type into an image/video prompt ${MEDIA_SCENARIOS.filter((s) => s.marker.startsWith('[['))
    .map((s) => s.marker)
    .join(' ')}
Press Ctrl+C to stop.`);

  const shutdown = () => {
    double.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
