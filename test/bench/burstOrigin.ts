/**
 * A bench-only front of the gateway double for the stream-decoding rows (row 3): it serves the
 * answer bytes of a request it has seen before from memory, in large chunks, as fast as loopback
 * takes them.
 *
 * The double renders a long answer per request (plan, one JSON frame per event) and writes it one
 * frame at a time, one HTTP chunk each; a client that reads faster than that waits for it, and two
 * clients compared on that source mostly measure the double's pace. Here the first request with a
 * given method, path and body is passed to the double and its answer kept (status, headers, body);
 * every later identical request gets the same bytes again, written in CHUNK-sized pieces the way a
 * buffering upstream bursts an answer it already has. The bytes and events are the double's own;
 * only the time they take to arrive changes. Requests the double does not answer with 200 are
 * passed on every time and not kept. Headers are not part of what makes two requests the same
 * (the bench uses one key), so the front is for the bench only.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The size of each write: what one read from a loopback socket usually returns. */
export const CHUNK = 64 * 1024;

interface Kept {
  status: number;
  headers: http.OutgoingHttpHeaders;
  body: Buffer;
}

/** Headers that describe the double's own framing, not the answer. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

export class BurstOrigin {
  private readonly kept = new Map<string, Kept>();
  private readonly server: http.Server;
  /** How many answers were served from memory and how many were passed to the double. */
  readonly counts = { replayed: 0, passed: 0 };

  constructor(private readonly upstream: string) {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(err));
      });
    });
    // Node closes a kept-alive connection after 5 s idle; on a loaded machine a client may send on
    // it just then ("Connection error"). Nothing here needs idle connections closed during a run.
    this.server.keepAliveTimeout = 120_000;
  }

  get url(): string {
    const address = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  start(): Promise<void> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readAll(req);
    const key = `${req.method ?? 'GET'} ${req.url ?? '/'}\n${body.toString('latin1')}`;
    let answer = this.kept.get(key);
    if (answer) this.counts.replayed++;
    else {
      this.counts.passed++;
      answer = await this.pass(req, body);
      if (answer.status === 200) this.kept.set(key, answer);
    }
    await send(res, answer);
  }

  /** The double's answer to the same request, read whole. */
  private pass(req: http.IncomingMessage, body: Buffer): Promise<Kept> {
    const headers = { ...req.headers, host: new URL(this.upstream).host, 'content-length': String(body.length) };
    delete headers['transfer-encoding'];
    return new Promise((resolve, reject) => {
      const out = http.request(
        this.upstream + (req.url ?? '/'),
        { method: req.method, headers, agent: false },
        (res) => {
          readAll(res).then((answer) => {
            const kept: http.OutgoingHttpHeaders = {};
            for (const [name, value] of Object.entries(res.headers))
              if (value !== undefined && !FRAMING.has(name)) kept[name] = value;
            resolve({ status: res.statusCode ?? 502, headers: kept, body: answer });
          }, reject);
        },
      );
      out.on('error', reject);
      out.end(body);
    });
  }
}

/** Writes a kept answer in CHUNK-sized pieces (each one HTTP chunk), waiting when the socket is full. */
async function send(res: http.ServerResponse, answer: Kept): Promise<void> {
  res.writeHead(answer.status, answer.headers);
  for (let at = 0; at < answer.body.length; at += CHUNK) {
    if (res.destroyed) return;
    if (!res.write(answer.body.subarray(at, at + CHUNK))) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  }
  res.end();
}

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}
