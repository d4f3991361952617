import type { Readable } from 'node:stream';
import type * as z from 'zod/mini';
import type { Endpoints } from './config';
import type { KeyQueue } from './keyQueue';
import type { ProxySettings } from './proxy';
import type { TrustSettings } from './tls';
import type { Said } from '../shared/words';

/** The shapes of the HTTP client (http.ts): its options, a request and the answers it gives. */

export interface Timeouts {
  /** Establishing the TCP/TLS connection (and the proxy tunnel). */
  connectMs: number;
  /** From sending the request to the response headers. */
  firstByteMs: number;
  /** Longest silence between two chunks of a response body. */
  idleMs: number;
  /** First-byte limit for calls that legitimately take minutes (image generation). */
  longMs: number;
}

export interface HttpClientOptions {
  endpoints: Endpoints;
  /**
   * The key a request goes with, read on every call so a key set or removed takes effect at once:
   * the request's own `key` (a key id), else the key its `model` is called with, else the first.
   */
  getKey: (req: Pick<HttpRequest, 'key' | 'model'>) => Promise<RequestKey | undefined>;
  timeouts: Timeouts;
  proxy: ProxySettings;
  /** Which certificate authorities to trust (see core/tls.ts). */
  trust: TrustSettings;
  userAgent: string;
  log?: (line: string) => void;
  /** Longest Retry-After that is honoured automatically; longer waits become an error. */
  maxRetryAfterMs?: number;
  /**
   * Called once a request that may be billed (anything but a GET, sent with the key) has been answered
   * in full or refused: gateways settle the charge then, so the key's quota may have changed.
   */
  afterBillableCall?: () => void;
  /** A sentence about what is left on the request's key, added to a refusal for quota; undefined when unknown. */
  quotaNote?: (req: Pick<HttpRequest, 'key' | 'model'>) => Promise<Said | undefined>;
  /**
   * Holds billed requests of one key to the concurrency its gateway allows (see keyQueue.ts); one
   * per window, shared by every client it makes, so all its front ends queue together.
   */
  keyQueue?: KeyQueue;
  /** Waits between attempts (tests pass their own clock); rejects with a cancellation on abort. */
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The time an HTTP-date Retry-After is measured from. */
  now?: () => number;
}

/**
 * An async iterable is handed to undici as it is (not wrapped in a Readable, which would read
 * ahead): undici asks for the next chunk only once the socket took the previous one, which is what
 * lets an upload reuse its read buffers (tools/multipart.ts).
 */
export type RequestBody = string | Uint8Array | Readable | AsyncIterable<Uint8Array>;

/** A key as a request uses it. */
export interface RequestKey {
  /** The key's id: requests of one key share its concurrency queue (keyQueue.ts). */
  id: string;
  secret: string;
  /** The key's name, when the user has several: errors of the gateway about the key then name it. */
  name?: string;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  /** Serialised as JSON with the matching content type. */
  json?: unknown;
  body?: RequestBody;
  signal?: AbortSignal;
  /** Told when a billed request waits in its key's queue for a free slot (the gateway's concurrency limit). */
  onQueued?: () => void;
  /**
   * `long` (image generation, document parsing) waits for the first byte as long as
   * `timeouts.longRequestSeconds` allows, and a streamed answer may stay silent that long too.
   */
  timeout?: 'standard' | 'long';
  /**
   * Whether sending it twice is harmless. GETs are; billed POSTs are not and are only retried when
   * the request provably never left (connection refused) or was turned away by a 429.
   */
  idempotent?: boolean;
  /** Statuses that are returned to the caller instead of thrown (e.g. 304 for revalidation). */
  acceptStatus?: number[];
  route?: 'gateway' | 'glm' | 'kimi';
  model?: string;
  /** Never send the key, even to the gateway's origin (the catalog file holds no key and needs none). */
  anonymous?: boolean;
  /**
   * The id of the key to send (a resource that belongs to a key: an uploaded file, a video task);
   * without it the key that lists `model` is used, else the first.
   */
  key?: string;
  /**
   * The lowest place in its key's queue (inline completions, see KeyQueue.acquireBackground): sent
   * only when nothing of the key waits, never retried, and `giveUp` is called (the caller aborts
   * the request) when a request with a normal place has to wait for it.
   */
  background?: { giveUp: () => void };
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  requestId?: string;
  body: Readable;
  /**
   * The body's chunks; a failure while reading (idle timeout, reset, abort) becomes a GatewayError.
   * Leaving the loop early aborts the response, unless `complete()` was called first.
   */
  chunks(): AsyncIterable<Uint8Array>;
  /**
   * Says the reader has the whole answer (a stream's terminator arrived), so that leaving `chunks()`
   * early lets the rest of the body, normally only the end of its chunked encoding, arrive and be
   * dropped instead of aborting the response (see `releaseBody`).
   */
  complete(): void;
  text(): Promise<string>;
  json<T extends z.ZodMiniType>(schema: T, what: Said): Promise<z.infer<T>>;
}

/** What `getLarge` answers: the body's chunks, to go to a file. */
export interface LargeResponse {
  status: number;
  headers: Record<string, string>;
  requestId?: string;
  /** Read once; a failure while reading becomes a GatewayError; leaving the loop early closes the connection. */
  chunks: AsyncIterable<Uint8Array>;
  /** Closes the connection if the body is still coming (a caller that gives up before reading it all). */
  abort(): void;
}
