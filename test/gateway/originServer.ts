import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  /** `http://127.0.0.1:<port>`, no trailing slash. */
  get url(): string {
    if (!this.address) throw new Error(`gateway double: the ${this.config.name} origin is not started`);
    return `http://127.0.0.1:${this.address.port}`;
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
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch {
      return; // the client went away mid-upload; nothing to answer
    }
    const entry = logEntry(this.config.name, req, body, time);
    this.shared.log.push(entry);
    const requestId = newRequestId(new Date(time));
    if (this.config.sendsRequestId) {
      res.setHeader(REQUEST_ID_HEADER, requestId);
      entry.requestId = requestId;
    }
    const ctx = new RequestContext(this.config.name, req, res, body, entry, requestId);

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

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
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
