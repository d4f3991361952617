import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ProxyRecord {
  target: string;
  headers: http.IncomingHttpHeaders;
}

/**
 * A real CONNECT proxy on loopback, as corporate proxies are: it tunnels bytes and records which
 * targets were asked for, so tests prove traffic went through it.
 */
export class ConnectProxy {
  readonly records: ProxyRecord[] = [];
  private readonly server = http.createServer((_req, res) => {
    res.writeHead(405).end('this proxy only tunnels (CONNECT)');
  });
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly options: { requireAuth?: string } = {}) {
    this.server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => this.tunnel(req, client, head));
    this.server.on('connection', (s: net.Socket) => this.track(s));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    const target = req.url ?? '';
    this.records.push({ target, headers: req.headers });
    if (this.options.requireAuth && req.headers['proxy-authorization'] !== this.options.requireAuth) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n');
      return;
    }
    const [host, port] = splitHostPort(target);
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.track(upstream);
    const close = () => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', close);
    client.on('error', close);
  }

  private track(s: net.Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
  }
}

function splitHostPort(target: string): [string, string] {
  const i = target.lastIndexOf(':');
  return [target.slice(0, i).replace(/^\[|\]$/g, ''), target.slice(i + 1)];
}
