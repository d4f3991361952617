/**
 * A TCP front that forwards to an origin at a line rate, in both directions: what a user's network
 * does to a download or an upload, which the unthrottled loopback hides. Each connection gets its
 * own token bucket per direction (filled at the rate, holding at most BURST_MS of it), and bytes are
 * written on only as the bucket allows; while they wait, reading from the sender stops, so the
 * sender feels the rate through TCP as it would on a real link. curl and our client go through the
 * same front in the same run.
 */
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';

/** The most a bucket holds: a late timer on a busy machine costs at most this much of the rate. */
const BURST_MS = 10;
/** Bytes queued in the front before it stops reading from the sender. */
const QUEUE_LIMIT = 256 * 1024;

export class ThrottleFront {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private port = 0;

  /** `bitsPerSecond`: the line rate, e.g. 100e6 for 100 Mbit/s. */
  constructor(
    private readonly origin: URL,
    readonly bitsPerSecond: number,
  ) {
    this.server = net.createServer((client) => this.connect(client));
  }

  /** The origin's address with the front's port in its place. */
  get url(): string {
    const u = new URL(this.origin.toString());
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.origin;
  }

  /** `link` (an address on the origin) as reached through the front. */
  through(link: string): string {
    const u = new URL(link);
    if (u.origin !== this.origin.origin) throw new Error(`${link} is not on ${this.origin.origin}`);
    return `${this.url}${u.pathname}${u.search}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(Number(this.origin.port) || 80, this.origin.hostname);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.setNoDelay(true);
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      s.once('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    const bytesPerSecond = this.bitsPerSecond / 8;
    throttle(client, upstream, bytesPerSecond);
    throttle(upstream, client, bytesPerSecond);
  }
}

/** Forwards `from` to `to` at `bytesPerSecond` through a token bucket; ends `to` once `from` ended and all is written. */
function throttle(from: net.Socket, to: net.Socket, bytesPerSecond: number): void {
  const capacity = Math.max(16 * 1024, (bytesPerSecond * BURST_MS) / 1000);
  let tokens = capacity;
  let last = performance.now();
  const queue: Buffer[] = [];
  let queued = 0;
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  let waitingForDrain = false;

  const pump = () => {
    timer = undefined;
    if (to.destroyed || waitingForDrain) return;
    const now = performance.now();
    tokens = Math.min(capacity, tokens + ((now - last) * bytesPerSecond) / 1000);
    last = now;
    while (queue.length && tokens >= 1) {
      const head = queue[0] as Buffer;
      const take = Math.min(head.length, Math.floor(tokens));
      const piece = take === head.length ? (queue.shift() as Buffer) : head.subarray(0, take);
      if (take < head.length) queue[0] = head.subarray(take);
      queued -= take;
      tokens -= take;
      if (!to.write(piece)) {
        waitingForDrain = true;
        to.once('drain', () => {
          waitingForDrain = false;
          pump();
        });
        break;
      }
    }
    if (queued < QUEUE_LIMIT && from.isPaused() && !ended) from.resume();
    if (queue.length === 0) {
      if (ended) to.end();
      return;
    }
    if (!waitingForDrain) {
      // The time until the bucket holds the next piece (at least 1 ms: Node's timer granularity).
      const need = Math.min(capacity, (queue[0] as Buffer).length);
      timer = setTimeout(pump, Math.max(1, ((need - tokens) / bytesPerSecond) * 1000));
    }
  };

  from.on('data', (chunk: Buffer) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued >= QUEUE_LIMIT) from.pause();
    if (!timer && !waitingForDrain) pump();
  });
  from.on('end', () => {
    ended = true;
    if (!timer && !waitingForDrain) pump();
  });
}
