import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ProxyRecord {
  target: string;
  headers: http.IncomingHttpHeaders;
}

/**
 * A real CONNECT proxy on loopback, as corporate proxies are: it tunnels bytes and records which
 * targets were asked for, so tests prove traffic went through it, and keeps everything it saw
 * (CONNECT headers, plain requests, the bytes it tunnelled) so tests prove what it never saw.
 */
export class ConnectProxy {
  readonly records: ProxyRecord[] = [];
  /** Requests sent to the proxy as plain HTTP (not CONNECT); it refuses them. */
  readonly plainRequests: ProxyRecord[] = [];
  /** Every byte the client sent into a tunnel. */
  readonly tunnelled: Buffer[] = [];
  private readonly server = http.createServer((req, res) => {
    this.plainRequests.push({ target: req.url ?? '', headers: req.headers });
    res.writeHead(405).end('this proxy only tunnels (CONNECT)');
  });
  private readonly sockets = new Set<net.Socket>();

  /**
   * `hosts` maps names the proxy resolves itself, as a corporate proxy resolves names its clients
   * cannot (e.g. a reserved `.test` name for a gateway reachable only through the proxy).
   */
  constructor(private readonly options: { requireAuth?: string; hosts?: Record<string, string> } = {}) {
    this.server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) =>
      this.tunnel(req, client, head),
    );
    this.server.on('connection', (s: net.Socket) => this.track(s));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Everything the proxy saw, as one text to search for a secret. */
  seen(): string {
    return [
      JSON.stringify(this.records),
      JSON.stringify(this.plainRequests),
      Buffer.concat(this.tunnelled).toString('latin1'),
    ].join('\n');
  }

  clear(): void {
    this.records.length = 0;
    this.plainRequests.length = 0;
    this.tunnelled.length = 0;
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
    const upstream = net.connect(Number(port), this.options.hosts?.[host] ?? host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) {
        this.tunnelled.push(Buffer.from(head));
        upstream.write(head);
      }
      client.on('data', (chunk: Buffer) => this.tunnelled.push(Buffer.from(chunk)));
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
