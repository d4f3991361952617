// Kept by hand, not undici's EnvHttpProxyAgent: that agent picks the route out of sight inside each request
// with one set of options, but here each request's route must be known (VS Code's settings over the
// environment, then VS Code's own resolution of the system proxy and PAC script, the trusted authorities
// on a direct connection, strictSSL on proxied ones only, errors naming the setting to change); the
// tunnel itself is undici's ProxyAgent.
import { BlockList, isIP } from 'node:net';
import { GatewayError } from './errors';
import { certificateError, type Trust } from './tls';
import { words, type Said } from '../shared/words';

/**
 * Which proxy, if any, a request to a given address goes through. VS Code's own settings win over
 * the environment, as they do for VS Code itself; `noProxy` entries from both always apply.
 */
export interface ProxySettings {
  /** `inherit` follows VS Code's `http.proxy` and the proxy environment variables; `off` connects directly. */
  mode: 'inherit' | 'off';
  /** VS Code's `http.proxySupport`: `off` means no proxy at all, also none from the environment. */
  support: 'off' | 'on' | 'fallback' | 'override';
  /** VS Code's `http.proxy`, empty when not set. */
  proxyUrl: string;
  /** VS Code's `http.proxyAuthorization`, sent as `Proxy-Authorization` to the proxy alone; empty when not set. */
  authorization: string;
  /**
   * VS Code's `http.proxyStrictSSL`. As VS Code documents it, it concerns proxied connections only:
   * `false` accepts any certificate on a connection made through a proxy, never on a direct one.
   */
  strictSSL: boolean;
  /** VS Code's `http.noProxy`. */
  noProxy: string[];
  env: Readonly<Record<string, string | undefined>>;
  /**
   * VS Code's own answer for an address, asked only when none of the above names a proxy or a direct
   * connection: the operating system's proxy settings and PAC script, as VS Code follows them. Absent
   * where VS Code offers none.
   */
  system?: SystemProxyLookup;
}

/** A proxy address (`http://host:port`), or undefined for a direct connection. */
export type SystemProxyLookup = (url: string) => Promise<string | undefined>;

/** Where a request's proxy came from, for the log and for errors that say what to change. */
export type ProxySource = 'setting' | 'environment' | 'system';

interface Chosen {
  proxy: string;
  source: ProxySource;
}

/** The explicit rules' verdict: a proxy, a direct connection, or nothing said (VS Code's resolution decides). */
function explicitChoice(target: URL, settings: ProxySettings): Chosen | 'direct' | 'unset' {
  if (settings.mode === 'off' || settings.support === 'off') return 'direct';
  const env = settings.env;
  const noProxy = [...settings.noProxy, ...splitList(env.NO_PROXY ?? env.no_proxy ?? '')];
  if (bypasses(target, noProxy)) return 'direct';
  if (settings.proxyUrl.trim()) return { proxy: withScheme(settings.proxyUrl.trim()), source: 'setting' };
  const fromEnv =
    target.protocol === 'https:'
      ? (env.HTTPS_PROXY ?? env.https_proxy ?? env.HTTP_PROXY ?? env.http_proxy)
      : (env.HTTP_PROXY ?? env.http_proxy);
  const chosen = (fromEnv ?? env.ALL_PROXY ?? env.all_proxy ?? '').trim();
  return chosen ? { proxy: withScheme(chosen), source: 'environment' } : 'unset';
}

/** The proxy the explicit settings and the environment name for `target`; VS Code's own resolution is not asked. */
export function resolveProxy(target: URL, settings: ProxySettings): string | undefined {
  const choice = explicitChoice(target, settings);
  return typeof choice === 'object' ? choice.proxy : undefined;
}

/**
 * The proxy for `target`: the explicit settings and the environment first; when they say nothing,
 * VS Code's own resolution (the system proxy, a PAC script). Its answer is waited for at most
 * `waitMs` (0: no limit); a failure, a timeout or a proxy undici cannot use is an error naming the
 * settings that decide instead.
 */
export async function chooseProxy(
  target: URL,
  settings: ProxySettings,
  waitMs: number,
  signal?: AbortSignal,
): Promise<Chosen | undefined> {
  const choice = explicitChoice(target, settings);
  if (choice !== 'unset') return choice === 'direct' ? undefined : choice;
  if (!settings.system) return undefined;
  const answer = await askSystem(settings.system, target, waitMs, signal);
  if (!answer) return undefined;
  if (!/^https?:\/\//i.test(answer)) {
    throw new GatewayError(
      'network',
      words(
        'The system proxy settings that VS Code follows send {0} through {1}, which Model Gateway cannot use (it uses HTTP and HTTPS proxies). Set "http.proxy" to an HTTP proxy, or add the gateway to "http.noProxy".',
        target.host,
        redactProxy(answer),
      ),
      { code: 'proxy_unsupported' },
    );
  }
  return { proxy: answer, source: 'system' };
}

function askSystem(
  lookup: SystemProxyLookup,
  target: URL,
  waitMs: number,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const fail = (detail: Said, cause?: unknown) =>
      new GatewayError(
        'network',
        words(
          'VS Code could not say which proxy to use for {0} ({1}): it follows the system proxy settings and their PAC script. Set "http.proxy", or add the gateway to "http.noProxy".',
          target.host,
          detail,
        ),
        { code: 'proxy_resolve', cause },
      );
    const timer =
      waitMs > 0
        ? setTimeout(() => finish(() => reject(fail(words('no answer within {0} s', waitMs / 1000)))), waitMs)
        : undefined;
    const onAbort = () => finish(() => reject(signal?.reason));
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    // The origin alone: VS Code caches its answers per scheme, host and port, Chromium gives a PAC
    // script no path for https, and no path or query need leave the request.
    lookup(`${target.origin}/`).then(
      (answer) => finish(() => resolve(answer)),
      (err: unknown) => finish(() => reject(fail(err instanceof Error ? err.message : String(err), err))),
    );
  });
}

/** How one request's connection is made: through which proxy (if any) and with which undici options. */
export interface Route {
  /** The dispatcher cache key: the proxy's address, or `direct`. */
  key: string;
  proxy?: string;
  /** Where `proxy` came from. */
  source?: ProxySource;
  /** Options for undici's `ProxyAgent` when `proxy` is set, for its `Agent` otherwise. */
  options: object;
}

/**
 * The undici options for a request to `target`. The key travels only inside the tunnel: undici's
 * ProxyAgent opens a CONNECT tunnel for `http:` targets too (its `proxyTunnel` default), so the
 * proxy sees the CONNECT line and `Proxy-Authorization`, never a request header.
 */
export async function routeFor(
  target: URL,
  settings: ProxySettings,
  trust: Trust,
  connectMs: number,
  signal?: AbortSignal,
): Promise<Route> {
  const chosen = await chooseProxy(target, settings, connectMs, signal);
  // Node uses `secureContext` and ignores `ca` when both are given; `ca` is there too because VS
  // Code's optional tls.connect patch (http.experimental.systemCertificatesV2) leaves a connection
  // alone only when it names its own `ca`, and would otherwise add to the shared context each time.
  const ca = trust.tls ? { ca: trust.tls.ca, secureContext: trust.tls.secureContext } : {};
  if (!chosen) return { key: 'direct', options: { connect: { timeout: connectMs, ...ca } } };
  const { proxy, source } = chosen;
  const tls = { timeout: connectMs, rejectUnauthorized: settings.strictSSL, ...ca };
  const token = settings.authorization.trim();
  return {
    key: proxy,
    proxy,
    source,
    options: {
      uri: proxy,
      proxyTunnel: true,
      requestTls: tls,
      proxyTls: tls,
      connect: { timeout: connectMs },
      ...(token ? { token } : {}),
    },
  };
}

/**
 * A failure that belongs to the way the connection was made (a refused certificate, a proxy that
 * said no) as a GatewayError naming the setting to change; undefined for anything else.
 */
export function connectionError(
  err: unknown,
  target: URL,
  route: Route,
  settings: ProxySettings,
): GatewayError | undefined {
  const cert = certificateError(err, target.host, !!route.proxy);
  if (cert || !route.proxy) return cert;
  const message = (err as { message?: unknown } | undefined)?.message;
  // undici: "Proxy response (407) !== 200 when HTTP Tunneling".
  const status = Number(/Proxy response \((\d{3})\)/.exec(typeof message === 'string' ? message : '')?.[1]);
  if (!status) return undefined;
  const proxy = redactProxy(route.proxy);
  if (status === 407) {
    const text = settings.authorization.trim()
      ? words(
          'The proxy {0} refused the credentials in "http.proxyAuthorization" (407 Proxy Authentication Required). Check that setting in your user settings.',
          proxy,
        )
      : words(
          'The proxy {0} asks for credentials (407 Proxy Authentication Required). Set "http.proxyAuthorization" in your user settings (for example "Basic " and the Base64 of user:password), or put the user name and password in the proxy address.',
          proxy,
        );
    return new GatewayError('network', text, { code: 'proxy_407', cause: err });
  }
  const text =
    route.source === 'system'
      ? words(
          'The proxy {0}, which the system proxy settings chose for {1}, refused the connection ({2}). Check the system proxy settings and their PAC script, set "http.proxy", or add the gateway to "http.noProxy".',
          proxy,
          target.host,
          status,
        )
      : words(
          'The proxy {0} refused the connection to {1} ({2}). Check "http.proxy", "http.noProxy" and the proxy environment variables.',
          proxy,
          target.host,
          status,
        );
  return new GatewayError('network', text, { code: `proxy_${status}`, cause: err });
}

/** A proxy address fit for logs and messages: user name and password hidden. */
export function redactProxy(proxy: string): string {
  try {
    const u = new URL(proxy);
    if (u.username || u.password) {
      u.username = '***';
      u.password = '';
    }
    return u.toString();
  } catch {
    return 'a proxy';
  }
}

function splitList(value: string): string[] {
  return value
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function withScheme(proxy: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`;
}

/**
 * Follows the common `NO_PROXY` conventions: `*`, exact hosts, `.suffix`, `*.suffix`, `host:port`,
 * and address ranges in CIDR form (`10.0.0.0/8`, `fd00::/8`) for a target given as an IP address,
 * as curl and Go's `httpproxy` take them.
 */
export function bypasses(target: URL, entries: string[]): boolean {
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  return entries.some((raw) => {
    const entry = raw.trim().toLowerCase();
    if (!entry) return false;
    if (entry === '*') return true;
    if (entry.includes('/')) return inRange(host, entry);
    const [pattern = '', entryPort] = entry.startsWith('[') ? splitBracketed(entry) : splitPort(entry);
    if (entryPort && entryPort !== port) return false;
    const bare = pattern.replace(/^\*?\./, '');
    if (pattern.startsWith('.') || pattern.startsWith('*.')) return host === bare || host.endsWith(`.${bare}`);
    return host === bare || host.endsWith(`.${bare}`);
  });
}

function splitPort(entry: string): [string, string | undefined] {
  const match = /^(.*):(\d+)$/.exec(entry);
  return match && !match[1]?.includes(':') ? [match[1] ?? '', match[2]] : [entry, undefined];
}

function splitBracketed(entry: string): [string, string | undefined] {
  const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  return match ? [match[1] ?? '', match[2]] : [entry, undefined];
}

/** Whether `host`, an IP address, lies in the CIDR range `entry`; a name or a malformed range never does. */
function inRange(host: string, entry: string): boolean {
  const family = isIP(host);
  const match = /^([^/]+)\/(\d{1,3})$/.exec(entry);
  const base = match?.[1] ?? '';
  const bits = Number(match?.[2]);
  const baseFamily = isIP(base);
  if (!family || !baseFamily || bits > (baseFamily === 4 ? 32 : 128)) return false;
  // Node's own matcher: it also matches an IPv4-mapped IPv6 address against an IPv4 range.
  const range = new BlockList();
  range.addSubnet(base, bits, baseFamily === 4 ? 'ipv4' : 'ipv6');
  return range.check(host, family === 4 ? 'ipv4' : 'ipv6');
}
