import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createTestCa, type TestCa } from './testCa';

/** An HTTPS server on 127.0.0.1 whose certificate comes from a test authority of its own. */
export interface TlsServer {
  ca: TestCa;
  port: number;
  /** TCP connections accepted since this was last set to 0. */
  connections: number;
  /** Ends every connection, stops the server and removes the authority's files. */
  close(): Promise<void>;
}

export async function startTlsServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<TlsServer> {
  const ca = createTestCa();
  const server = createServer(ca.server, handle);
  const tls: TlsServer = {
    ca,
    port: 0,
    connections: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      ca.dispose();
    },
  };
  server.on('connection', () => tls.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tls.port = (server.address() as AddressInfo).port;
  return tls;
}
