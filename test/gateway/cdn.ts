import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Dispatch } from './originServer';
import type { RequestContext } from './requestContext';
import { readRange, type VirtualFile } from './mp4';

/**
 * The result-file origin: an OSS-like bucket behind pre-signed links, as DashScope hands out for
 * Wan videos and images (`https://dashscope-result-….aliyuncs.com/….mp4?Expires=…&OSSAccessKeyId=…&Signature=…`).
 * No Authorization header is expected or needed: the query string is the credential. Errors are
 * OSS's XML `<Error>` documents. Objects are built lazily and kept; big ones are streamed with
 * backpressure, and single byte ranges are served (206) so resumable downloads can be tried.
 */

/** What a request for a stored object gets instead of the object itself. */
export type CdnVariant = 'ok' | 'html' | 'xml';

export interface CdnObject {
  /** `/videos/<token>.mp4`, `/images/<token>.png`. */
  path: string;
  contentType: string;
  /** Date.now() value from which the link is refused as expired. */
  expiresAtMs: number;
  variant: CdnVariant;
  /** Built on the first GET, then kept. */
  build: () => VirtualFile;
}

interface Stored extends CdnObject {
  file?: VirtualFile;
  etag: string;
  lastModified: string;
}

const BUCKET = 'dashscope-result-bj';
const HOST_ID = `${BUCKET}.oss-cn-beijing.aliyuncs.com`;
const ACCESS_KEY_ID = 'LTAI5tKPD3TMqf2Lna1fASuh';

/** An OSS request id: 24 upper-case hex characters. */
function ossRequestId(): string {
  return randomBytes(12).toString('hex').toUpperCase();
}

function xmlError(code: string, message: string, requestId: string, extra: Record<string, string> = {}): string {
  const fields = Object.entries(extra)
    .map(([k, v]) => `  <${k}>${v}</${k}>\n`)
    .join('');
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error>\n  <Code>${code}</Code>\n  <Message>${message}</Message>\n` +
    `  <RequestId>${requestId}</RequestId>\n  <HostId>${HOST_ID}</HostId>\n${fields}</Error>\n`
  );
}

/** What an S3 bucket answers a request it refuses, as some CDNs pass it on with 200. */
export function s3AccessDeniedXml(): string {
  const id = randomBytes(8).toString('hex').toUpperCase();
  const host = randomBytes(48).toString('base64');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>${id}</RequestId><HostId>${host}</HostId></Error>`;
}

/** A WAF / portal page answered with 200 in place of the file. */
export function htmlInsteadOfFile(): string {
  return (
    '<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Access Denied</title></head>\n<body>\n' +
    '<h1>Sorry, your request has been blocked.</h1>\n<p>The requested resource is temporarily unavailable. Please try again later.</p>\n' +
    `<p>Trace ID: ${randomUUID()}</p>\n<hr><center>Tengine</center>\n</body>\n</html>\n`
  );
}

export class CdnStore {
  private readonly objects = new Map<string, Stored>();
  private readonly secret = randomBytes(20);

  constructor(private readonly origin: () => string) {}

  /** Stores the object and returns its pre-signed link. */
  put(object: CdnObject): string {
    this.objects.set(object.path, {
      ...object,
      etag: `"${randomBytes(16).toString('hex').toUpperCase()}"`,
      lastModified: new Date().toUTCString(),
    });
    const expires = Math.ceil(object.expiresAtMs / 1000);
    const signature = encodeURIComponent(this.sign(object.path, expires));
    return `${this.origin()}${object.path}?Expires=${expires}&OSSAccessKeyId=${ACCESS_KEY_ID}&Signature=${signature}`;
  }

  /** OSS V1 query signature: HMAC-SHA1 over the verb, the expiry and the canonical resource. */
  private sign(path: string, expires: number): string {
    return createHmac('sha1', this.secret).update(`GET\n\n\n${expires}\n/${BUCKET}${path}`).digest('base64');
  }

  /**
   * The object behind one of this store's links, for the gateway's own content route, which fetches
   * it server-side (new-api's video proxy): undefined when the link is not one of ours or has expired.
   */
  objectFor(link: string, now = Date.now()): { contentType: string; file: VirtualFile } | undefined {
    let path: string;
    try {
      path = new URL(link).pathname;
    } catch {
      return undefined;
    }
    const object = this.objects.get(path);
    if (!object || now >= object.expiresAtMs || object.variant !== 'ok') return undefined;
    object.file ??= object.build();
    return { contentType: object.contentType, file: object.file };
  }

  readonly dispatch: Dispatch = (http) => {
    const requestId = ossRequestId();
    const fail = (
      status: number,
      code: string,
      message: string,
      extra: Record<string, string> = {},
      headers: Record<string, string> = {},
    ) =>
      http.send(status, xmlError(code, message, requestId, extra), {
        'Content-Type': 'application/xml',
        Server: 'AliyunOSS',
        'x-oss-request-id': requestId,
        ...headers,
      });

    if (http.method !== 'GET' && http.method !== 'HEAD') {
      return fail(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.', {
        Method: http.method,
        ResourceType: 'Object',
      });
    }
    // A pre-signed link carries its credential in the query; a second one in a header is refused
    // (S3's "Only one auth mechanism allowed"; OSS answers such requests 400 as well).
    if (http.header('authorization') !== undefined) {
      return fail(
        400,
        'InvalidArgument',
        'Only one auth mechanism allowed; only the Signature query parameter or the Authorization header should be specified.',
        {
          ArgumentName: 'Authorization',
        },
      );
    }
    const object = this.objects.get(http.path);
    const query = http.url.searchParams;
    const expires = query.get('Expires');
    const signature = query.get('Signature');
    if (expires === null || signature === null || query.get('OSSAccessKeyId') === null) {
      return fail(403, 'AccessDenied', 'You have no right to access this object because of bucket acl.');
    }
    if (!object) return fail(404, 'NoSuchKey', 'The specified key does not exist.', { Key: http.path.slice(1) });
    if (signature !== this.sign(http.path, Number(expires))) {
      return fail(
        403,
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
      );
    }
    const now = Date.now();
    // The signed Expires (whole seconds) cannot be changed; the object keeps the exact moment.
    if (now >= object.expiresAtMs) {
      return fail(403, 'AccessDenied', 'Request has expired.', {
        Expires: new Date(Number(expires) * 1000).toISOString(),
        ServerTime: new Date(now).toISOString(),
      });
    }

    switch (object.variant) {
      case 'html':
        return http.send(200, htmlInsteadOfFile(), { 'Content-Type': 'text/html; charset=utf-8', Server: 'Tengine' });
      case 'xml':
        return http.send(200, s3AccessDeniedXml(), { 'Content-Type': 'application/xml', Server: 'AmazonS3' });
      case 'ok':
        break;
    }
    object.file ??= object.build();
    return serveFile(http, object, object.file, requestId, fail);
  };
}

type Fail = (
  status: number,
  code: string,
  message: string,
  extra?: Record<string, string>,
  headers?: Record<string, string>,
) => void;

async function serveFile(
  http: RequestContext,
  object: Stored,
  file: VirtualFile,
  requestId: string,
  fail: Fail,
): Promise<void> {
  const headers: Record<string, string | number> = {
    'Content-Type': object.contentType,
    'Accept-Ranges': 'bytes',
    ETag: object.etag,
    'Last-Modified': object.lastModified,
    Server: 'AliyunOSS',
    'x-oss-request-id': requestId,
    'x-oss-object-type': 'Normal',
    'x-oss-storage-class': 'Standard',
  };
  let start = 0;
  let end = file.size; // exclusive
  let status = 200;
  const range = http.header('range');
  if (range !== undefined) {
    const parsed = parseRange(range, file.size);
    if (parsed === 'unsatisfiable') {
      return fail(
        416,
        'InvalidRange',
        'The requested range cannot be satisfied',
        { RangeRequested: range, ActualObjectSize: String(file.size) },
        {
          'Content-Range': `bytes */${file.size}`,
        },
      );
    }
    if (parsed) {
      [start, end] = parsed;
      status = 206;
      headers['Content-Range'] = `bytes ${start}-${end - 1}/${file.size}`;
    }
  }
  headers['Content-Length'] = end - start;
  return streamFile(http, status, headers, file, start, end);
}

/** Writes the head and bytes [start, end) of a file, waiting for the client to drain (backpressure). */
export async function streamFile(
  http: RequestContext,
  status: number,
  headers: Record<string, string | number>,
  file: VirtualFile,
  start = 0,
  end = file.size,
): Promise<void> {
  http.writeHead(status, headers);
  if (http.method === 'HEAD') {
    http.res.end();
    return;
  }
  const res = http.res;
  for (const chunk of readRange(file, start, end)) {
    if (res.destroyed) return;
    if (!res.write(chunk)) {
      const open = await new Promise<boolean>((resolve) => {
        const onDrain = () => done(true);
        const onClose = () => done(false);
        const done = (value: boolean) => {
          res.off('drain', onDrain);
          res.off('close', onClose);
          resolve(value);
        };
        res.once('drain', onDrain);
        res.once('close', onClose);
      });
      if (!open) return;
    }
  }
  res.end();
}

/** One `bytes=` range as [start, end); undefined = ignore the header (several ranges, bad syntax). */
function parseRange(header: string, size: number): [number, number] | 'unsatisfiable' | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return [Math.max(0, size - suffix), size];
  }
  const first = Number(m[1]);
  const last = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (first >= size) return 'unsatisfiable';
  if (last < first) return undefined;
  return [first, last + 1];
}
