/**
 * Fetches an image an answer links to, for the chat view, so the view itself never connects to a
 * host a model named. The name is resolved once, every address it gives is checked (a loopback or
 * private one refuses the image), and the connection goes to exactly the address checked: a name
 * that answers DNS with a public address for the check and 127.0.0.1 a moment later (DNS
 * rebinding) cannot reach this computer. Nothing of the gateway goes along: no key, no gateway
 * header, no cookie; https only; redirects pass the same checks; the bytes are capped and must be a
 * PNG, JPEG, GIF or WebP by their magic numbers.
 */
import * as l10n from '@vscode/l10n';
import { isIP, type LookupFunction } from 'node:net';
import type { Dispatcher } from 'undici';
import { FORMAT_NAMES, otherFormat, sniffImage, type ImageMediaType } from './imageBytes';
import { isPrivateHost, lookupAll, type HostLookup } from './privateAddress';
import type { Route } from './proxy';
import { loadUndici } from './undiciLazy';

export interface AnswerImageRules {
  /** Whether images may come from this host (`URL.host`, with its port): the hosts the user allowed. */
  allowed(host: string): boolean;
  /** The configured gateway's host (`URL.host`), whose images may come from a private address. */
  gatewayHost?: string;
  maxBytes: number;
  timeoutMs: number;
  /** How a connection to the address is made (core/proxy.ts `routeFor`); direct when absent. */
  route?: (url: URL) => Promise<Route>;
  lookup?: HostLookup;
  signal?: AbortSignal;
}

export type AnswerImage =
  | { ok: true; mediaType: ImageMediaType; bytes: Uint8Array }
  /** `reason` completes "not shown: …"; `cancelled` when the caller's signal ended it. */
  | { ok: false; reason: string; cancelled?: boolean };

/** Redirects followed, each through the same checks as the first address. */
const MAX_REDIRECTS = 3;
const ACCEPT = Object.keys(FORMAT_NAMES).join(', ');

export async function fetchAnswerImage(address: string, rules: AnswerImageRules): Promise<AnswerImage> {
  const timeout = AbortSignal.timeout(rules.timeoutMs);
  const signal = rules.signal ? AbortSignal.any([rules.signal, timeout]) : timeout;
  let target: URL;
  try {
    target = new URL(address);
  } catch {
    return refused(l10n.t('not a valid address'));
  }
  try {
    for (let hop = 0; ; hop++) {
      signal.throwIfAborted();
      const checked = await checkTarget(target, rules);
      if ('refused' in checked) return refused(checked.refused);
      const response = await get(target, checked.address, rules, signal);
      const location = response.headers.location;
      if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
        drop(response.body);
        if (hop >= MAX_REDIRECTS) return refused(l10n.t('more than {0} redirects', MAX_REDIRECTS));
        target = new URL(location, target);
        continue;
      }
      return await readImage(response, rules.maxBytes);
    }
  } catch (err) {
    if (rules.signal?.aborted) return { ok: false, reason: l10n.t('cancelled'), cancelled: true };
    if (timeout.aborted) return refused(l10n.t('no answer within {0} s', Math.ceil(rules.timeoutMs / 1000)));
    return refused(l10n.t('the connection failed ({0})', describe(err)));
  }
}

/** The address to connect to, or why the target is refused. */
async function checkTarget(target: URL, rules: AnswerImageRules): Promise<{ address: string } | { refused: string }> {
  const no = (refused: string) => ({ refused });
  if (target.protocol !== 'https:') return no(l10n.t('not a secure address'));
  if (target.username || target.password) return no(l10n.t('the address carries a user name or password'));
  if (!rules.allowed(target.host)) return no(l10n.t('images from {0} are not allowed', target.host));
  const privateAllowed = target.host === rules.gatewayHost;
  const bare = target.hostname.replace(/^\[|\]$/g, '');
  const privateRefusal = no(l10n.t('{0} is a private or loopback address', bare));
  if (isIP(bare)) return privateAllowed || !isPrivateHost(target.hostname) ? { address: bare } : privateRefusal;
  if (isPrivateHost(target.hostname) && !privateAllowed) return privateRefusal;
  const addresses = await (rules.lookup ?? lookupAll)(bare.replace(/\.$/, '')).catch(() => []);
  const first = addresses[0]?.address;
  if (first === undefined) return no(l10n.t('the name {0} could not be resolved', bare));
  const bad = addresses.map((a) => a.address).filter((a) => isPrivateHost(a));
  if (bad.length && !privateAllowed)
    return no(l10n.t('the name {0} resolves to {1}, a private or loopback address', bare, bad.join(', ')));
  return { address: first };
}

async function get(
  target: URL,
  address: string,
  rules: AnswerImageRules,
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  const { Agent, ProxyAgent } = loadUndici();
  const route = (await rules.route?.(target)) ?? { key: 'direct', options: {} };
  // Through a proxy the proxy resolves the name itself: what is checked then is this computer's
  // answer for it (above) and the name's text, and what the proxy reaches is the proxy's network.
  // The request is the same either way: no key and no gateway header, to the image host alone.
  const routeOptions = route.options as { connect?: object };
  const dispatcher = route.proxy
    ? new ProxyAgent(route.options)
    : new Agent({ ...routeOptions, connect: { ...routeOptions.connect, lookup: pinnedLookup(address) } });
  try {
    const request = dispatcher.request({
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: 'GET',
      headers: { accept: ACCEPT },
      signal,
    });
    // undici heeds the signal once the connection is made; while it is being made (an address that
    // does not answer), the signal ends the wait here and the pool is destroyed below.
    const response = await Promise.race([request, whenAborted(signal)]);
    // The connection pool goes with the response: closed once its body was read or dropped.
    response.body.once('close', () => void dispatcher.close().catch(() => undefined));
    return response;
  } catch (err) {
    void dispatcher.destroy().catch(() => undefined);
    throw err;
  }
}

function whenAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * A resolver that answers every name with the one address checked. Node asks for all addresses
 * (`all: true`) when it tries several families (net's autoSelectFamily), for one otherwise.
 */
function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

async function readImage(response: Dispatcher.ResponseData, maxBytes: number): Promise<AnswerImage> {
  const body = response.body;
  if (response.statusCode < 200 || response.statusCode >= 300) {
    drop(body);
    return refused(l10n.t('the server answered {0}', response.statusCode));
  }
  const tooBig = refused(l10n.t('larger than {0} MB', +(maxBytes / 1024 / 1024).toFixed(1)));
  const length = Number(response.headers['content-length']);
  if (length > maxBytes) {
    drop(body);
    return tooBig;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      drop(body);
      return tooBig;
    }
    chunks.push(chunk);
  }
  const bytes = Buffer.concat(chunks);
  const info = sniffImage(bytes);
  if (!info) {
    const other = otherFormat(bytes);
    return refused(
      other
        ? l10n.t('a {0} file, not a PNG, JPEG, GIF or WebP image', other)
        : l10n.t('not a PNG, JPEG, GIF or WebP image'),
    );
  }
  return { ok: true, mediaType: info.mediaType, bytes };
}

/** Ends a body not read to its end (undici reports that as an error of the body: expected here). */
function drop(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

function refused(reason: string): AnswerImage {
  return { ok: false, reason };
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  if (typeof e?.code === 'string') return e.code;
  return typeof e?.message === 'string' ? e.message.slice(0, 120) : String(err).slice(0, 120);
}
