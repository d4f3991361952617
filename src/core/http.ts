import * as l10n from '@vscode/l10n';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type * as z from 'zod/mini';
import { Endpoints } from './config';
import { concurrencyLimitFrom, errorFromResponse, errorInOkBody, isConcurrencyRefusal, parseRetryAfter } from './errorBody';
import { GatewayError } from './errors';
import { DEFAULT_KEY_ID, KeyQueue, type KeySlot } from './keyQueue';
import { connectionError, redactProxy, routeFor, type ProxySettings, type Route } from './proxy';
import { loadTrust, type Trust, type TrustSettings } from './tls';
import { parseJsonText, parseWith } from './validate';

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
  quotaNote?: (req: Pick<HttpRequest, 'key' | 'model'>) => Promise<string | undefined>;
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
  json<T extends z.ZodMiniType>(schema: T, what: string): Promise<z.infer<T>>;
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

/** One attempt's answer, before the status decides between a result, a retry and an error. */
interface Exchange<R> {
  status: number;
  headers: Record<string, string>;
  /** The start of a refusal's body, to explain it. */
  errorText(): Promise<string>;
  /** The answer; `slot`, when the request holds one of its key's queue, is released once the answer is over. */
  accept(requestId: string | undefined, slot: KeySlot | undefined): R;
}

type UndiciModules = typeof import('./undiciParts');

let undici: UndiciModules | undefined;

/** undici, required on the first request and not before (see undiciParts.ts). */
function loadUndici(): UndiciModules {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose: keeps undici off the activation path
  undici ??= require('./undiciParts') as UndiciModules;
  return undici;
}

const MAX_ATTEMPTS = 3;
/**
 * Attempts of a request refused for its key's concurrency: the queue holds it until one of this
 * window's requests ends, but the slot may be held elsewhere (another window or program), so the
 * attempts are counted and spaced out too.
 */
const CONCURRENCY_ATTEMPTS = 6;
/** Spacing of those attempts when the gateway gives no Retry-After: 0.5 s, 1 s, 2 s… */
const CONCURRENCY_BACKOFF_MS = 500;
/** The refusals that are about the key rather than the request. */
const KEY_ERRORS = new Set<GatewayError['kind']>(['auth', 'quota', 'modelUnavailable', 'rateLimited']);
const ERROR_BODY_LIMIT = 64 * 1024;

export class HttpClient {
  private readonly dispatchers = new Map<string, Dispatcher>();
  /** The name of the key each request went with, for its errors (see withKeyName). */
  /** The key each request went with, for its queue and for errors that name it. */
  private readonly requestKeys = new WeakMap<HttpRequest, RequestKey>();
  private trust?: Trust;
  private readonly queue: KeyQueue;

  constructor(private readonly options: HttpClientOptions) {
    this.queue = options.keyQueue ?? new KeyQueue();
  }

  get endpoints(): Endpoints {
    return this.options.endpoints;
  }

  /**
   * Sends a request and returns the response for 2xx (and `acceptStatus`); any other status
   * becomes a GatewayError built from the body. The key goes only to the gateway's own origin.
   */
  async send(req: HttpRequest): Promise<HttpResponse> {
    const url = new URL(req.url);
    const headers = await this.headersFor(url, req);
    let body: RequestBody | undefined = req.body;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    }
    const billable = req.method !== 'GET' && headers.authorization !== undefined;
    const streamBody = body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array);
    return this.exchange(url, req, { billable, once: streamBody, gated: billable }, async () => {
      const response = await this.dispatch(url, req, headers, body);
      const flatHeaders = flattenHeaders(response.headers);
      const readable = response.body as unknown as Readable;
      return {
        status: response.statusCode,
        headers: flatHeaders,
        errorText: () => readLimited(readable, ERROR_BODY_LIMIT),
        accept: (requestId, slot) => {
          const mapError = (err: unknown) => mapBodyError(err, url, req, this.options.timeouts);
          // An error object in a 200 body is still the gateway's error, not an answer that does not fit.
          const okError = (json: unknown, text: string) => errorInOkBody(json, { body: text, requestIdHeader: requestId, route: req.route ?? 'gateway', model: req.model });
          // 'close' follows the end of the body, an error and an abort alike: the call is over either way.
          if (billable && this.options.afterBillableCall) readable.once('close', this.options.afterBillableCall);
          if (slot) readable.once('close', () => slot.release());
          return wrapResponse(response.statusCode, flatHeaders, requestId, readable, mapError, okError);
        },
      };
    });
  }

  /**
   * A GET whose large body goes to a file (a generated video), through `send`: the same undici
   * connection, limits, timeouts, retries and key rules as every other request. undici pauses the
   * socket while the body's buffer is full, so a slow disk slows the download instead of filling memory.
   * A server closing the connection while that buffer is full crashed undici 7.x's parser;
   * patches/undici+7.30.2.patch fixes it.
   */
  async getLarge(req: Omit<HttpRequest, 'method' | 'json' | 'body' | 'timeout' | 'idempotent'>): Promise<LargeResponse> {
    const response = await this.send({ ...req, method: 'GET' });
    return {
      status: response.status,
      headers: response.headers,
      requestId: response.requestId,
      chunks: response.chunks(),
      abort: () => abortBody(response.body),
    };
  }

  /**
   * One request with its retries: a transport failure is retried when the request cannot have
   * arrived (or is idempotent and failed on the network), a refusal when it says when to try again
   * (429 with a short Retry-After), refuses it for the key's concurrency (429, queued and spaced
   * out, see keyQueue.ts), or is a gateway's 502/504 to an idempotent request. A `once` request (its
   * body is a stream, consumed by the first attempt) is never retried. Nothing is retried once an
   * answer was accepted: what the user saw of a streamed answer is never asked for twice. A
   * `gated` request waits for a slot of its key's queue first and holds it until its answer ends.
   */
  private async exchange<R>(url: URL, req: HttpRequest, opts: { billable: boolean; once: boolean; gated: boolean }, attemptOnce: () => Promise<Exchange<R>>): Promise<R> {
    const idempotent = req.idempotent ?? req.method === 'GET';
    // headersFor resolved the key before the first attempt; anonymous requests are never gated.
    const keyId = this.requestKeys.get(req)?.id ?? DEFAULT_KEY_ID;
    const maxWait = this.options.maxRetryAfterMs ?? 10_000;
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      const slot = opts.gated ? await this.queue.acquire(keyId, req.signal) : undefined;
      const started = Date.now();
      let response: Exchange<R>;
      try {
        response = await attemptOnce();
      } catch (err) {
        slot?.release();
        const failure = mapTransportError(err, url, req, this.options.timeouts);
        // A failure already explained (a refused certificate, a proxy's refusal) happens again on a retry.
        const settled = err instanceof GatewayError;
        const retry = attempt < MAX_ATTEMPTS && !opts.once && !settled && (failure.notSent || (idempotent && failure.error.kind === 'network'));
        this.log(`${req.method} ${url.pathname} failed after ${Date.now() - started} ms: ${failure.error.message}${retry ? ' (retrying)' : ''}`);
        if (!retry) throw failure.error;
        await this.wait(250 * 2 ** (attempt - 1), req.signal);
        continue;
      }
      const { status, headers } = response;
      const requestId = headers['x-oneapi-request-id'];
      this.log(`${req.method} ${url.pathname} → ${status} in ${Date.now() - started} ms${requestId ? ` (request id ${requestId})` : ''}`);
      if ((status >= 200 && status < 300) || req.acceptStatus?.includes(status)) return response.accept(requestId, slot);
      const errorText = await response.errorText().catch(() => '');
      const error = errorFromResponse({
        status,
        body: errorText,
        requestIdHeader: requestId,
        retryAfterHeader: headers['retry-after'],
        contentType: headers['content-type'],
        route: req.route ?? 'gateway',
        model: req.model,
      });
      const busy = error.kind === 'rateLimited' && isConcurrencyRefusal(status, error.code, error.detail);
      if (busy && slot) {
        // Learnt before this request's slot is given up, so that no waiter slips in under the old limit.
        const limit = this.queue.learn(keyId, this.queue.state(keyId).inFlight, concurrencyLimitFrom(error.detail));
        this.log(`${req.method} ${url.pathname}: the key's concurrency limit is reached; holding its requests to ${limit} at a time`);
      }
      slot?.release();
      const retryAfter = status === 429 ? parseRetryAfter(headers['retry-after'], this.now()) : undefined;
      const wait = retryAfter ?? (busy ? CONCURRENCY_BACKOFF_MS * 2 ** (attempt - 1) : 500);
      const canWait = (retryAfter !== undefined || busy) && wait <= maxWait && waited + wait <= 3 * maxWait;
      const retryGet = idempotent && (status === 502 || status === 504);
      if (attempt < (busy ? CONCURRENCY_ATTEMPTS : MAX_ATTEMPTS) && !opts.once && (canWait || retryGet)) {
        this.log(`${req.method} ${url.pathname}: retrying after ${wait} ms`);
        waited += wait;
        await this.wait(wait, req.signal);
        continue;
      }
      if (opts.billable) this.options.afterBillableCall?.();
      throw this.withKeyName(error.kind === 'quota' && opts.billable ? await this.withQuotaNote(error, req) : error, req);
    }
  }

  private wait(ms: number, signal?: AbortSignal): Promise<void> {
    return this.options.wait ? this.options.wait(ms, signal) : sleep(ms, signal);
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** Sends and parses a JSON answer with a schema. */
  async sendJson<T extends z.ZodMiniType>(req: HttpRequest, schema: T, what: string): Promise<z.infer<T>> {
    const response = await this.send(req);
    return response.json(schema, what);
  }

  async close(): Promise<void> {
    const all = [...this.dispatchers.values()];
    this.dispatchers.clear();
    await Promise.all(all.map((d) => d.close().catch(() => undefined)));
  }

  /** The refusal with what is left on the key, when that can be found out (the extra GET is not billed). */
  private async withQuotaNote(error: GatewayError, req: HttpRequest): Promise<GatewayError> {
    const note = await this.options.quotaNote?.(req).catch(() => undefined);
    if (!note) return error;
    const { status, code, requestId, detail, retryAfterMs } = error;
    return new GatewayError(error.kind, `${error.message} ${note}`, { status, code, requestId, detail, retryAfterMs, cause: error.cause });
  }

  private async headersFor(url: URL, req: HttpRequest): Promise<Record<string, string>> {
    const headers: Record<string, string> = { 'user-agent': this.options.userAgent, ...lowerCaseKeys(req.headers ?? {}) };
    // Whatever a caller passed, credentials never travel to another origin.
    delete headers.authorization;
    delete headers['x-api-key'];
    if (!req.anonymous && url.origin === this.options.endpoints.origin) {
      const key = await this.options.getKey(req);
      if (!key) {
        throw new GatewayError('auth', l10n.t('No API key is set. Run "Model Gateway: Set API Key" and paste the key from the console.'));
      }
      headers.authorization = `Bearer ${key.secret}`;
      this.requestKeys.set(req, key);
    }
    return headers;
  }

  /** A refusal about the key (rejected, out of quota, no access to the model) names the key it was sent with. */
  private withKeyName(error: GatewayError, req: HttpRequest): GatewayError {
    const name = this.requestKeys.get(req)?.name;
    if (name === undefined || !KEY_ERRORS.has(error.kind)) return error;
    const { status, code, requestId, detail, retryAfterMs, jsonBody } = error;
    return new GatewayError(error.kind, l10n.t('Key "{0}": {1}', name, error.message), { status, code, requestId, detail, retryAfterMs, jsonBody, cause: error.cause });
  }

  private dispatch(url: URL, req: HttpRequest, headers: Record<string, string>, body: RequestBody | undefined): Promise<Dispatcher.ResponseData> {
    // undici would still connect for a request whose signal has already aborted.
    if (req.signal?.aborted) return Promise.reject(req.signal.reason);
    const t = this.options.timeouts;
    const trust = this.loadedTrust();
    const route = routeFor(url, this.options.proxy, trust, t.connectMs);
    const request = this.dispatcherFor(url, route).request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: req.method,
      headers,
      // undici's types leave out the async iterables that its writer accepts (writeIterable).
      body: body as Dispatcher.DispatchOptions['body'],
      signal: req.signal,
      // Always explicit: undici's own 300 s defaults must never cap a longer setting.
      headersTimeout: req.timeout === 'long' ? t.longMs : t.firstByteMs,
      bodyTimeout: idleLimit(t, req),
    });
    // A refused certificate or a proxy's refusal is told with the setting that fixes it; the caller's abort stays an abort.
    return request.catch((err: unknown) => Promise.reject((!req.signal?.aborted && connectionError(err, url, route, this.options.proxy)) || err));
  }

  /** Read once per client (a settings change makes a new client); a bad `extraCaCertificates` file throws here, before anything is sent. */
  private loadedTrust(): Trust {
    if (!this.trust) {
      this.trust = loadTrust(this.options.trust);
      for (const note of this.trust.notes) this.log(note);
    }
    return this.trust;
  }

  private dispatcherFor(url: URL, route: Route): Dispatcher {
    let dispatcher = this.dispatchers.get(route.key);
    if (!dispatcher) {
      const { Agent, ProxyAgent } = loadUndici();
      dispatcher = route.proxy ? new ProxyAgent(route.options) : new Agent(route.options);
      this.dispatchers.set(route.key, dispatcher);
      if (route.proxy) this.log(`using proxy ${redactProxy(route.proxy)} for ${url.host}`);
    }
    return dispatcher;
  }

  private log(line: string): void {
    this.options.log?.(line);
  }
}

function wrapResponse(
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

interface TransportFailure {
  error: GatewayError;
  /** True when the request cannot have reached the server, so even a billed POST may be resent. */
  notSent: boolean;
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function mapTransportError(err: unknown, url: URL, req: HttpRequest, t: Timeouts): TransportFailure {
  if (err instanceof GatewayError) return { error: err, notSent: false };
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const host = url.host;
  const message = e.message ?? String(err);
  // undici also reports a refused proxy tunnel as "aborted"; only the caller's own abort is a cancel.
  if (req.signal?.aborted || (e.name === 'AbortError' && !/proxy/i.test(message))) {
    return { error: new GatewayError('cancelled', l10n.t('The request was cancelled.'), { cause: err }), notSent: false };
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return { error: new GatewayError('timeout', l10n.t('Could not connect to {0} within {1}. Check the network, the proxy settings and the base address.', host, seconds(t.connectMs)), { cause: err }), notSent: true };
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    const limit = req.timeout === 'long' ? t.longMs : t.firstByteMs;
    const setting = req.timeout === 'long' ? 'modelGateway.timeouts.longRequestSeconds' : 'modelGateway.timeouts.firstByteSeconds';
    return { error: new GatewayError('timeout', l10n.t('{0} sent no answer within {1}. Try again, or raise "{2}".', host, seconds(limit), setting), { cause: err }), notSent: false };
  }
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    const setting = req.timeout === 'long' && idleLimit(t, req) !== t.idleMs ? 'modelGateway.timeouts.longRequestSeconds' : 'modelGateway.timeouts.idleSeconds';
    return { error: new GatewayError('timeout', l10n.t('{0} stopped sending for more than {1}. Try again, or raise "{2}".', host, seconds(idleLimit(t, req)), setting), { cause: err }), notSent: false };
  }
  // What undici refuses before sending (a header value with a line break) is the request's fault, not the network's.
  if (code === 'UND_ERR_INVALID_ARG') {
    return { error: new GatewayError('badRequest', l10n.t('The request to {0} could not be sent: {1}.', host, message), { cause: err }), notSent: true };
  }
  // An answer undici's parser refused (not HTTP, a malformed chunk, a head over the limit, a body
  // longer than its Content-Length): sending it again would get the same answer.
  if (e.name === 'HTTPParserError' || code === 'UND_ERR_HEADERS_OVERFLOW' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    return { error: new GatewayError('protocol', l10n.t('{0} sent an answer that is not valid HTTP: {1}.', host, message), { cause: err }), notSent: false };
  }
  if (/proxy/i.test(message)) {
    return { error: new GatewayError('network', l10n.t('The proxy refused or failed the connection to {0}: {1}. Check "http.proxy" and the proxy environment variables.', host, message), { cause: err }), notSent: true };
  }
  const notSent = NOT_SENT_CODES.has(code);
  const what =
    code === 'ENOTFOUND' || code === 'EAI_AGAIN'
      ? l10n.t('the host name {0} could not be resolved', url.hostname)
      : code === 'ECONNREFUSED'
        ? l10n.t('{0} refused the connection', host)
        : l10n.t('the connection to {0} failed ({1})', host, code || message);
  return { error: new GatewayError('network', l10n.t('Could not reach the gateway: {0}. Check the base address, the network and the proxy settings.', what), { cause: err }), notSent };
}

/** A failure while the body was arriving: the request got through, the answer was cut. */
function mapBodyError(err: unknown, url: URL, req: HttpRequest, t: Timeouts): GatewayError {
  const mapped = mapTransportError(err, url, req, t).error;
  if (mapped.kind !== 'network') return mapped;
  return new GatewayError('network', l10n.t('The connection to {0} closed in the middle of the answer. What arrived before is kept; try again.', url.host), { cause: err });
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
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
function abortBody(body: Readable): void {
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
async function readLimited(body: AsyncIterable<Uint8Array>, limit: number): Promise<string> {
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

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new GatewayError('cancelled', l10n.t('The request was cancelled.')));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new GatewayError('cancelled', l10n.t('The request was cancelled.')));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/** The longest silence allowed between two chunks: 0 (no limit) wins, else the longer of the limits that apply. */
function idleLimit(t: Timeouts, req: HttpRequest): number {
  if (req.timeout !== 'long') return t.idleMs;
  return t.idleMs === 0 || t.longMs === 0 ? 0 : Math.max(t.idleMs, t.longMs);
}
