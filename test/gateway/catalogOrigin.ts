import { createHash } from 'node:crypto';
import { renderCatalog } from './catalogFormats';
import { htmlErrorPage } from './errorBodies';
import type { Dispatch } from './originServer';
import type { CatalogSpec, ModelSpec } from './types';

interface Served {
  body: string;
  etag: string;
  /** Whole seconds, as HTTP dates carry no more. */
  lastModified: number;
}

/**
 * The catalog file on its own static origin, served like a plain web server would: no auth,
 * ETag and Last-Modified validators, 304 for matching conditional requests.
 */
export class CatalogFile {
  private served?: Served;

  constructor(
    private spec: CatalogSpec,
    readonly path: string,
    private readonly models: readonly ModelSpec[],
    /** Generated catalogs point at the gateway, whose address exists only once it listens. */
    private readonly gatewayUrl: () => string,
  ) {}

  set(spec: CatalogSpec): void {
    this.spec = spec;
  }

  readonly dispatch: Dispatch = (http) => {
    if (http.path !== this.path) return http.send(404, htmlErrorPage(404), { 'Content-Type': 'text/html' });
    if (http.method !== 'GET' && http.method !== 'HEAD') {
      return http.send(405, htmlErrorPage(405), { 'Content-Type': 'text/html' });
    }
    const { body, etag, lastModified } = this.current();
    const validators = { ETag: etag, 'Last-Modified': new Date(lastModified).toUTCString() };
    if (notModified(http.header('if-none-match'), http.header('if-modified-since'), etag, lastModified)) {
      http.writeHead(304, validators);
      http.res.end();
      return;
    }
    http.send(200, body, { 'Content-Type': 'application/json', ...validators });
  };

  /** Renders lazily; a changed body gets a new ETag and a strictly later Last-Modified. */
  private current(): Served {
    const body = this.spec.body ?? renderCatalog(this.spec.format, this.models, this.gatewayUrl());
    if (this.served?.body !== body) {
      const now = Math.floor(Date.now() / 1000) * 1000;
      const lastModified = this.served ? Math.max(now, this.served.lastModified + 1000) : now;
      const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
      this.served = { body, etag, lastModified };
    }
    return this.served;
  }
}

/** RFC 9110 §13.2.2: If-None-Match wins over If-Modified-Since; ETags compare weakly. */
function notModified(
  ifNoneMatch: string | undefined,
  ifModifiedSince: string | undefined,
  etag: string,
  lastModified: number,
): boolean {
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  if (ifNoneMatch !== undefined) {
    return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag));
  }
  if (ifModifiedSince === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  return !Number.isNaN(since) && lastModified <= since;
}
