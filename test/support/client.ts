import { Endpoints } from '../../src/core/config';
import { HttpClient, type HttpClientOptions, type Timeouts } from '../../src/core/http';
import type { ProxySettings } from '../../src/core/proxy';
import type { TrustSettings } from '../../src/core/tls';
import { DEMO_KEY, GatewayDouble, type GatewayOptions } from '../gateway';

export const TEST_TIMEOUTS: Timeouts = { connectMs: 2000, firstByteMs: 2000, idleMs: 2000, longMs: 4000 };
export const DIRECT: ProxySettings = { mode: 'off', support: 'override', proxyUrl: '', authorization: '', strictSSL: true, noProxy: [], env: {} };
/** Node's default store alone: no system store, no extra file, no NODE_EXTRA_CA_CERTS. */
export const DEFAULT_TRUST: TrustSettings = { systemCertificates: false, extraCaFile: '', env: {} };

/** A core HTTP client pointed at a gateway double, with a mutable key and a captured log. */
export function clientFor(base: string, key: string | undefined, overrides: Partial<HttpClientOptions> = {}): { http: HttpClient; lines: string[]; setKey(k: string | undefined): void } {
  const lines: string[] = [];
  let current = key;
  const http = new HttpClient({
    endpoints: new Endpoints(base),
    getKey: async () => current,
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
export function useDoubleClient(opts?: GatewayOptions, client: Partial<HttpClientOptions> = {}): { readonly gw: GatewayDouble; readonly http: HttpClient } {
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
