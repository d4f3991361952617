/**
 * `npm start`: builds the extension and runs the gateway double, printing what to set.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { GatewayDouble } from '../gateway';

async function main(): Promise<void> {
  const root = path.resolve(__dirname, '../..');
  execFileSync(process.execPath, [path.join(root, 'esbuild.js')], { cwd: root, stdio: 'inherit' });
  const gw = new GatewayDouble({ port: Number(process.env.GATEWAY_PORT ?? 0) });
  await gw.start();
  console.log(`
Gateway double running.
  modelGateway.baseUrl    ${gw.url}
  modelGateway.catalogUrl ${gw.catalogUrl}
  demo API key            ${gw.demoKey}

Run "Model Gateway: Set API Key" and paste the demo key. Press Ctrl-C to stop.`);
  const stop = () => void gw.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
