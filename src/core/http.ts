import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type * as z from 'zod/mini';
import { Endpoints } from './config';
import { errorFromResponse, errorInOkBody } from './errorBody';
import { concurrencyLimitFrom, isConcurrencyRefusal, parseRetryAfter } from './rateLimits';
import { GatewayError } from './errors';
import { words, type Said } from '../shared/words';
import { DEFAULT_KEY_ID, KeyQueue, type KeySlot } from './keyQueue';
import { connectionError, redactProxy, routeFor, type Route } from './proxy';
import { loadTrust, type Trust } from './tls';
import { abortBody, flattenHeaders, readLimited, wrapResponse } from './httpBody';
import { idleLimit, mapBodyError, mapTransportError } from './httpErrors';
import type { HttpClientOptions, HttpRequest, HttpResponse, LargeResponse, RequestBody, RequestKey } from './httpTypes';
import { loadUndici } from './undiciLazy';

// Its shapes live in httpTypes.ts; the callers import them from here, with the client.

/** One attempt's answer, before the status decides between a result, a retry and an error. */
interface Exchange<R> {
  status: number;
  headers: Record<string, string>;
  /** The start of a refusal's body, to explain it. */
  errorText(): Promise<string>;
  /** The answer; `slot`, when the request holds one of its key's queue, is released once the answer is over. */
  accept(requestId: string | undefined, slot: KeySlot | undefined): R;
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
    const once = streamBody || req.background !== undefined;
    return this.exchange(url, req, { billable, once, gated: billable }, async () => {
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
          const okError = (json: unknown, text: string) =>
            errorInOkBody(json, {
              body: text,
              requestIdHeader: requestId,
              route: req.route ?? 'gateway',
              model: req.model,
            });
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
  async getLarge(
    req: Omit<HttpRequest, 'method' | 'json' | 'body' | 'timeout' | 'idempotent'>,
  ): Promise<LargeResponse> {
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
  private async exchange<R>(
    url: URL,
    req: HttpRequest,
    opts: { billable: boolean; once: boolean; gated: boolean },
    attemptOnce: () => Promise<Exchange<R>>,
  ): Promise<R> {
    const idempotent = req.idempotent ?? req.method === 'GET';
    // headersFor resolved the key before the first attempt; anonymous requests are never gated.
    const keyId = this.requestKeys.get(req)?.id ?? DEFAULT_KEY_ID;
    const maxWait = this.options.maxRetryAfterMs ?? 10_000;
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      const slot = opts.gated ? await this.place(keyId, req) : undefined;
      const started = Date.now();
      let response: Exchange<R>;
      try {
        response = await attemptOnce();
      } catch (err) {
        slot?.release();
        const failure = mapTransportError(err, url, req, this.options.timeouts);
        // A failure already explained (a refused certificate, a proxy's refusal) happens again on a retry.
        const settled = err instanceof GatewayError;
        const retry =
          attempt < MAX_ATTEMPTS &&
          !opts.once &&
          !settled &&
          (failure.notSent || (idempotent && failure.error.kind === 'network'));
        this.log(
          `${req.method} ${url.pathname} failed after ${Date.now() - started} ms: ${failure.error.message}${retry ? ' (retrying)' : ''}`,
        );
        if (!retry) throw failure.error;
        await this.wait(250 * 2 ** (attempt - 1), req.signal);
        continue;
      }
      const { status, headers } = response;
      const requestId = headers['x-oneapi-request-id'];
      this.log(
        `${req.method} ${url.pathname} → ${status} in ${Date.now() - started} ms${requestId ? ` (request id ${requestId})` : ''}`,
      );
      if ((status >= 200 && status < 300) || req.acceptStatus?.includes(status))
        return response.accept(requestId, slot);
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
        this.log(
          `${req.method} ${url.pathname}: the key's concurrency limit is reached; holding its requests to ${limit} at a time`,
        );
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
      throw this.withKeyName(
        error.kind === 'quota' && opts.billable ? await this.withQuotaNote(error, req) : error,
        req,
      );
    }
  }

  /** A place in the key's queue: waited for, or for a background request taken only when free. */
  private async place(keyId: string, req: HttpRequest): Promise<KeySlot> {
    if (!req.background) return this.queue.acquire(keyId, req.signal, req.onQueued);
    const slot = this.queue.acquireBackground(keyId, req.background.giveUp);
    if (slot) return slot;
    throw new GatewayError('cancelled', words("Skipped: the key's other requests go first."));
  }

  private wait(ms: number, signal?: AbortSignal): Promise<void> {
    return this.options.wait ? this.options.wait(ms, signal) : sleep(ms, signal);
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** Sends and parses a JSON answer with a schema. */
  async sendJson<T extends z.ZodMiniType>(req: HttpRequest, schema: T, what: Said): Promise<z.infer<T>> {
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
    return new GatewayError(error.kind, words('{0} {1}', error.said, note), {
      status,
      code,
      requestId,
      detail,
      retryAfterMs,
      cause: error.cause,
    });
  }

  private async headersFor(url: URL, req: HttpRequest): Promise<Record<string, string>> {
    const headers: Record<string, string> = {
      'user-agent': this.options.userAgent,
      ...lowerCaseKeys(req.headers ?? {}),
    };
    // Whatever a caller passed, credentials never travel to another origin.
    delete headers.authorization;
    delete headers['x-api-key'];
    if (!req.anonymous && url.origin === this.options.endpoints.origin) {
      const key = await this.options.getKey(req);
      if (!key) {
        throw new GatewayError(
          'auth',
          words('No API key is set. Run "Model Gateway: Set API Key" and paste the key from the console.'),
        );
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
    return new GatewayError(error.kind, words('Key "{0}": {1}', name, error.said), {
      status,
      code,
      requestId,
      detail,
      retryAfterMs,
      jsonBody,
      cause: error.cause,
    });
  }

  /**
   * How a connection to another address than the gateway's is made with the same settings (proxy,
   * trusted authorities, connect timeout): for answer images, fetched by the caller's own dispatcher
   * with no key and no gateway header. Asked of the client so that the proxy and TLS code stay in
   * this lazily loaded part (see esbuild.js) instead of the code loaded at activation.
   */
  routeTo(url: URL, signal?: AbortSignal): Promise<Route> {
    return routeFor(url, this.options.proxy, this.loadedTrust(), this.options.timeouts.connectMs, signal);
  }

  private async dispatch(
    url: URL,
    req: HttpRequest,
    headers: Record<string, string>,
    body: RequestBody | undefined,
  ): Promise<Dispatcher.ResponseData> {
    // undici would still connect for a request whose signal has already aborted.
    if (req.signal?.aborted) throw req.signal.reason;
    const t = this.options.timeouts;
    const trust = this.loadedTrust();
    const route = await routeFor(url, this.options.proxy, trust, t.connectMs, req.signal);
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
    return request.catch((err: unknown) =>
      Promise.reject((!req.signal?.aborted && connectionError(err, url, route, this.options.proxy)) || err),
    );
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
      if (route.proxy) this.log(`using proxy ${redactProxy(route.proxy)} for ${url.host} (from ${route.source})`);
    }
    return dispatcher;
  }

  private log(line: string): void {
    this.options.log?.(line);
  }
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new GatewayError('cancelled', words('The request was cancelled.')));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new GatewayError('cancelled', words('The request was cancelled.')));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
