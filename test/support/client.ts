import { Endpoints } from '../../src/core/config';
import { HttpClient } from '../../src/core/http';
import { type HttpClientOptions, type Timeouts } from '../../src/core/httpTypes';
import { keyForRequest } from '../../src/core/keys';
import { DEFAULT_KEY_ID } from '../../src/core/keyQueue';
import type { ProxySettings } from '../../src/core/proxy';
import type { TrustSettings } from '../../src/core/tls';
import { DEMO_KEY, GatewayDouble, type GatewayOptions } from '../gateway';

export const TEST_TIMEOUTS: Timeouts = { connectMs: 2000, firstByteMs: 2000, idleMs: 2000, longMs: 4000 };
export const DIRECT: ProxySettings = {
  mode: 'off',
  support: 'override',
  proxyUrl: '',
  authorization: '',
  strictSSL: true,
  noProxy: [],
  env: {},
};
/** Node's default store alone: no system store, no extra file, no NODE_EXTRA_CA_CERTS. */
export const DEFAULT_TRUST: TrustSettings = { systemCertificates: false, extraCaFile: '', env: {} };

/** A core HTTP client pointed at a gateway double, with a mutable key and a captured log. */
export function clientFor(
  base: string,
  key: string | undefined,
  overrides: Partial<HttpClientOptions> = {},
): { http: HttpClient; lines: string[]; setKey(k: string | undefined): void } {
  const lines: string[] = [];
  let current = key;
  const http = new HttpClient({
    endpoints: new Endpoints(base),
    getKey: async () => (current === undefined ? undefined : { id: DEFAULT_KEY_ID, secret: current }),
    timeouts: TEST_TIMEOUTS,
    proxy: DIRECT,
    trust: DEFAULT_TRUST,
    userAgent: 'model-gateway-tests',
    log: (line) => lines.push(line),
    ...overrides,
  });
  return { http, lines, setKey: (k) => (current = k) };
}

/**
 * Mocha hooks for a describe block that talks to one gateway double through a core client with the
 * demo key: started before, stopped after, its request log cleared before each test.
 */
export function useDoubleClient(
  opts?: GatewayOptions,
  client: Partial<HttpClientOptions> = {},
): { readonly gw: GatewayDouble; readonly http: HttpClient } {
  const ctx = {} as { gw: GatewayDouble; http: HttpClient };
  before(async () => {
    ctx.gw = new GatewayDouble(opts);
    await ctx.gw.start();
    ctx.http = clientFor(ctx.gw.url, DEMO_KEY, client).http;
  });
  after(async () => {
    await ctx.http?.close();
    await ctx.gw?.stop();
  });
  beforeEach(() => ctx.gw.clearLog());
  return ctx;
}

/** A named key of a test, with its secret. */
export interface TestKey {
  id: string;
  name: string;
  secret: string;
}

/**
 * A core HTTP client with several named keys, choosing the key of each request as the extension
 * does (core/keys.ts keyForRequest); `modelKey` says which key a model is called with.
 */
export function clientForKeys(
  base: string,
  keys: () => TestKey[],
  modelKey: (model: string) => string | undefined = () => undefined,
  overrides: Partial<HttpClientOptions> = {},
): HttpClient {
  return new HttpClient({
    endpoints: new Endpoints(base),
    getKey: async (req) => {
      const all = keys();
      const entry = keyForRequest(all, req, modelKey);
      const key = all.find((k) => k.id === entry?.id);
      return key && { id: key.id, secret: key.secret, ...(all.length > 1 ? { name: key.name } : {}) };
    },
    timeouts: TEST_TIMEOUTS,
    proxy: DIRECT,
    trust: DEFAULT_TRUST,
    userAgent: 'model-gateway-tests',
    ...overrides,
  });
}
