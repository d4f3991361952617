import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { applyFault, type FaultBook } from './faults';
import { RequestContext } from './requestContext';
import { newRequestId, REQUEST_ID_HEADER } from './requestId';
import type { OriginName, RequestLogEntry } from './types';

const MAX_LOGGED_TEXT = 1024 * 1024;

export type Dispatch = (ctx: RequestContext) => void | Promise<void>;

export interface OriginConfig {
  name: OriginName;
  port: number;
  /** new-api stamps every response with X-Oneapi-Request-Id; static file hosts do not. */
  sendsRequestId: boolean;
  dispatch: Dispatch;
  /**
   * The most body bytes the origin reads for a request (by method and path), undefined = no limit.
   * Past it the request is handed over with `bodyTooLarge` set and an empty body (see readBody).
   */
  bodyLimit?: (method: string, path: string) => number | undefined;
  /** Serve HTTPS with this key and certificate chain (PEM) instead of plain HTTP. */
  tls?: TlsIdentity;
  /** How long an idle kept-alive connection stays open; Node's default (5 s) when not given. */
  keepAliveTimeoutMs?: number;
}

export interface TlsIdentity {
  key: string;
  /** The server certificate, optionally followed by intermediates. */
  cert: string;
}

/** Shared by all origins of one double, so the log and the faults cover both. */
export interface OriginShared {
  log: RequestLogEntry[];
  faults: FaultBook;
}

/**
 * One real HTTP server on 127.0.0.1: reads each body fully, logs the request, applies any fault,
 * then hands over to the origin's dispatch. Knows nothing about what the origin serves.
 */
export class OriginServer {
  private readonly server: Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  private address?: AddressInfo;

  constructor(
    private readonly config: OriginConfig,
    private readonly shared: OriginShared,
  ) {
    const handler = (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res);
    this.server = config.tls
      ? createTlsServer({ key: config.tls.key, cert: config.tls.cert }, handler)
      : createServer(handler);
    if (config.keepAliveTimeoutMs !== undefined) this.server.keepAliveTimeout = config.keepAliveTimeoutMs;
  }

  /** `http://127.0.0.1:<port>` (`https://` when serving TLS), no trailing slash. */
  get url(): string {
    if (!this.address) throw new Error(`gateway double: the ${this.config.name} origin is not started`);
    return `${this.config.tls ? 'https' : 'http'}://127.0.0.1:${this.address.port}`;
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.config.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        this.address = this.server.address() as AddressInfo;
        resolve();
      });
    });
  }

  /** Also ends stalled and delayed requests, whose clients see the connection close. */
  close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    if (!this.server.listening) return Promise.resolve();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    return closed;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const time = Date.now();
    const limit = this.config.bodyLimit?.(
      req.method ?? 'GET',
      new URL(req.url ?? '/', 'http://double.invalid').pathname,
    );
    let read: BodyRead;
    try {
      read = await readBody(req, limit);
    } catch {
      return; // the client went away mid-upload; nothing to answer
    }
    const { body, received, tooLarge } = read;
    const entry = logEntry(this.config.name, req, body, time);
    entry.bodyBytes = received;
    this.shared.log.push(entry);
    const requestId = newRequestId(new Date(time));
    if (this.config.sendsRequestId) {
      res.setHeader(REQUEST_ID_HEADER, requestId);
      entry.requestId = requestId;
    }
    const ctx = new RequestContext(this.config.name, req, res, body, entry, requestId, tooLarge);

    const action = this.shared.faults.take(this.config.name, ctx.method, ctx.path, entry.path);
    if (action && !(await applyFault(action, ctx, (ms) => this.sleep(ms)))) return;

    try {
      await this.config.dispatch(ctx);
    } catch (err) {
      // new-api's recovery middleware answers a handler panic like this.
      if (res.headersSent) res.destroy();
      else ctx.sendJson(500, { error: { message: `Panic detected, error: ${String(err)}`, type: 'new_api_panic' } });
    }
  }
}

interface BodyRead {
  /** The whole body, or empty when it went past the limit. */
  body: Buffer;
  /** Bytes read before the request was handed over (0 when refused on Content-Length alone). */
  received: number;
  tooLarge: boolean;
}

/**
 * Reads the body, up to `limit` bytes when one is given. A declared Content-Length over the limit is
 * refused before a byte is read; a body without one (chunked) is counted as it arrives and handed
 * over as soon as it passes the limit, with nothing kept. Either way the handler answers at once;
 * what the client still sends is discarded until the answer is out and the connection is closed
 * (the route answers with `Connection: close`), much as nginx's lingering close does, so the client
 * reads a clean 413 instead of a reset in the middle of its upload.
 */
function readBody(req: IncomingMessage, limit?: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (limit !== undefined && Number.isFinite(declared) && declared > limit) {
    return Promise.resolve({ body: Buffer.alloc(0), received: 0, tooLarge: true });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    req.on('data', (c: Buffer) => {
      received += c.length;
      if (settled) return; // past the limit: dropped as it arrives
      if (limit !== undefined && received > limit) {
        settled = true;
        chunks.length = 0;
        resolve({ body: Buffer.alloc(0), received, tooLarge: true });
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve({ body: Buffer.concat(chunks), received, tooLarge: false });
    });
    req.on('error', (err) => {
      if (!settled) reject(err);
    });
  });
}

function logEntry(origin: OriginName, req: IncomingMessage, body: Buffer, time: number): RequestLogEntry {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const contentType = headers['content-type'] ?? '';
  const textual = /json|^text\/|x-www-form-urlencoded/i.test(contentType);
  return {
    origin,
    method: req.method ?? 'GET',
    path: req.url ?? '/',
    headers,
    bodyBytes: body.length,
    ...(textual && body.length < MAX_LOGGED_TEXT ? { bodyText: body.toString('utf8') } : {}),
    status: 0,
    time,
  };
}
