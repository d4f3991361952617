import type { Readable } from 'node:stream';
import type { GatewayError } from './errors';
import type { HttpResponse } from './httpTypes';
import { parseJsonText, parseWith } from './validate';

/** An answer's body as the HTTP client hands it out: read once, closed or released when left. */

export function wrapResponse(
  status: number,
  headers: Record<string, string>,
  requestId: string | undefined,
  body: Readable,
  mapError: (err: unknown) => GatewayError,
  okError: (json: unknown, text: string) => GatewayError | undefined,
): HttpResponse {
  const text = () => readAll(body).catch((err: unknown) => Promise.reject(mapError(err)));
  let completed = false;
  return {
    status,
    headers,
    requestId,
    body,
    async *chunks() {
      let reading = true;
      try {
        // Not destroyed on an early return: the finally below decides how the body is closed.
        for await (const chunk of body.iterator({ destroyOnReturn: false })) yield chunk as Uint8Array;
        reading = false;
      } catch (err) {
        reading = false;
        throw mapError(err);
      } finally {
        if (reading) {
          if (completed) releaseBody(body);
          else abortBody(body);
        }
      }
    },
    complete() {
      completed = true;
    },
    text,
    async json(schema, what) {
      const raw = await text();
      const json = parseJsonText(raw, what);
      const error = okError(json, raw);
      if (error) throw error;
      return parseWith(schema, json, what);
    },
  };
}

export function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** How long, and how many bytes, the rest of a completed answer's body may take before it is aborted after all. */
const RELEASE_MS = 1000;

const RELEASE_BYTES = 64 * 1024;

/**
 * Lets the rest of a body whose answer is complete arrive and drops it. When a stream's terminator
 * arrives, the end of the HTTP body (the last, empty chunk) is normally already on its way or read,
 * but not yet taken from the stream; aborting the body there, as leaving a stream's async iterator
 * does (Node's `destroyer` makes an `AbortError`, undici a `RequestAbortedError`, and Node reads
 * the error's stack, which maps it through source maps where they are on), costs more than the rest
 * of the answer's handling, on every request. A body that does not end soon, or keeps sending, is
 * aborted as before.
 */
function releaseBody(body: Readable): void {
  let bytes = 0;
  const timer = setTimeout(() => abortBody(body), RELEASE_MS);
  body.once('close', () => clearTimeout(timer));
  body.on('error', () => undefined);
  body.on('data', (chunk: Uint8Array) => {
    bytes += chunk.length;
    if (bytes > RELEASE_BYTES) abortBody(body);
  });
}

/** Aborts a body nobody reads any more; the error it then emits has nobody to tell. */
export function abortBody(body: Readable): void {
  if (body.destroyed) return;
  body.on('error', () => undefined);
  body.destroy();
}

async function readAll(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8');
}

/** The start of a body; leaving the loop early closes it (a Readable's iterator destroys the stream). */
export async function readLimited(body: AsyncIterable<Uint8Array>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = Buffer.from(chunk);
    chunks.push(buf);
    size += buf.length;
    if (size >= limit) break;
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}
