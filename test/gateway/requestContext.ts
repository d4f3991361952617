import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { OriginName, RequestLogEntry } from './types';

export type JsonBody = { ok: true; value: unknown } | { ok: false };

/**
 * One request on any origin: its fully read body (or the fact that it was too large), its log entry and the only ways to answer it.
 * Answering through here keeps the log's status in step with what the client actually receives.
 */
export class RequestContext {
  readonly url: URL;
  private parsed?: JsonBody;

  constructor(
    readonly origin: OriginName,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly body: Buffer,
    readonly entry: RequestLogEntry,
    /** Generated for every request; only the gateway origin sends it. */
    readonly requestId: string,
    /** The body went past the route's size limit and was not kept (`body` is empty). */
    readonly bodyTooLarge = false,
  ) {
    this.url = new URL(req.url ?? '/', 'http://double.invalid');
  }

  get method(): string {
    return this.req.method ?? 'GET';
  }

  /** Path without query. */
  get path(): string {
    return this.url.pathname;
  }

  header(name: string): string | undefined {
    return this.entry.headers[name.toLowerCase()];
  }

  /** The body parsed as JSON, once; an empty body is not JSON. */
  json(): JsonBody {
    if (!this.parsed) {
      try {
        this.parsed =
          this.body.length === 0 ? { ok: false } : { ok: true, value: JSON.parse(this.body.toString('utf8')) };
      } catch {
        this.parsed = { ok: false };
      }
    }
    return this.parsed;
  }

  /** Sends the head only; for bodies written piecewise (streams, stalls). */
  writeHead(status: number, headers: OutgoingHttpHeaders = {}): void {
    this.head(status, headers);
    this.res.flushHeaders();
  }

  send(status: number, body: string | Buffer, headers: OutgoingHttpHeaders = {}): void {
    this.head(status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
    this.res.end(this.method === 'HEAD' ? undefined : body);
  }

  /** setHeader one by one so later names override earlier ones case-insensitively. */
  private head(status: number, headers: OutgoingHttpHeaders): void {
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined) this.res.setHeader(name, value);
    }
    this.entry.status = status;
    this.res.writeHead(status);
  }

  /** gin's c.JSON: compact, utf-8, with Go's escaping of <, >, & and the JS line separators. */
  sendJson(status: number, value: unknown, headers: OutgoingHttpHeaders = {}): void {
    const text = JSON.stringify(value).replace(
      /[<>&\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    this.send(status, text, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  }
}
