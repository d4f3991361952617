import * as l10n from '@vscode/l10n';
import { GatewayError } from './errors';
import { words } from '../shared/words';

export interface NormalisedBase {
  /** The bare base, e.g. `https://gw.example.com` or `https://example.com/gateway`; never ends in `/`. */
  base: string;
  origin: string;
  /** One sentence per change made to what the user typed; empty when it was already bare. */
  changes: string[];
}

/**
 * Paths a user may paste by mistake. Longest first, so `/v1/chat/completions` wins over `/v1`.
 * Removing them recovers the bare base; nothing is ever added (no plan suffix, no other path: the gateway serves `/v1/...` at its root).
 */
const ENDPOINT_SUFFIXES = [
  /\/v1\/chat\/completions$/i,
  /\/v1\/responses$/i,
  /\/v1\/messages$/i,
  /\/v1\/models$/i,
  /\/v1\/images\/generations$/i,
  /\/v1\/video\/generations(\/[^/]+)?$/i,
  /\/providers\/(glm|kimi)(\/.*)?$/i,
  /\/chat\/completions$/i,
  /\/responses$/i,
  /\/messages$/i,
];

export function normaliseBaseUrl(input: string): NormalisedBase {
  const changes: string[] = [];
  let text = input.trim();
  if (!text)
    throw new GatewayError(
      'badRequest',
      words(
        'The gateway base address is empty. Set "modelGateway.baseUrl" to the address from the console, e.g. https://gateway.example.com.',
      ),
    );
  if (text !== input) changes.push(l10n.t('removed surrounding spaces'));
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    text = `https://${text}`;
    changes.push(l10n.t('added "https://" because no scheme was given'));
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new GatewayError(
      'badRequest',
      words('"{0}" is not a valid web address. Enter the bare base, e.g. https://gateway.example.com.', input.trim()),
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new GatewayError(
      'badRequest',
      words('The base address must start with https:// (or http:// for a local gateway), not {0}//.', url.protocol),
    );
  }
  if (url.username || url.password) {
    throw new GatewayError(
      'badRequest',
      words(
        'The base address must not contain a user name or password. The API key is set with "Model Gateway: Set API Key".',
      ),
    );
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new GatewayError(
      'badRequest',
      words(
        "The base address {0} uses plain http:// to a computer other than this one, so the API key would cross the network unencrypted. Use the gateway's https:// address; plain http:// is accepted only for localhost, 127.0.0.1 or [::1].",
        url.origin,
      ),
    );
  }
  if (url.search || url.hash) {
    changes.push(l10n.t('removed "{0}"', `${url.search}${url.hash}`));
    url.search = '';
    url.hash = '';
  }
  let path = url.pathname.replace(/\/+$/, '');
  const hadTrailingSlash = /\/$/.test(text.replace(/[?#].*$/, ''));
  const endpoint = ENDPOINT_SUFFIXES.map((suffix) => suffix.exec(path)).find((m) => m !== null);
  if (endpoint) {
    path = path.slice(0, endpoint.index);
    changes.push(l10n.t('removed the endpoint path "{0}"', endpoint[0]));
  }
  if (/\/v1$/i.test(path)) {
    path = path.slice(0, -3);
    changes.push(l10n.t('removed the trailing "/v1" (the extension adds it per protocol)'));
  } else if (hadTrailingSlash && !endpoint) {
    changes.push(l10n.t('removed the trailing "/"'));
  }
  const base = `${url.origin}${path}`;
  return { base, origin: url.origin, changes };
}

/**
 * Whether a URL's host (as `URL.hostname` gives it) is this computer's loopback interface, the only
 * place the key may travel over plain http://. The WHATWG URL parser has already turned `127.1`,
 * `0x7f.1` or `2130706433` into `127.0.0.1` and `[0:0::1]` into `[::1]`, so only canonical forms
 * are checked. `localhost.` and `*.localhost` are refused: unlike the bare name they are resolved
 * by DNS on most systems, which may answer with any address. `0.0.0.0` is "any address", not
 * loopback (RFC 5735 section 3; RFC 6761 section 6.3 for the localhost names).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost') return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true;
  if (host === '[::1]') return true;
  // IPv4-mapped IPv6 of 127.0.0.0/8, which the parser prints in hex: [::ffff:7f00:1].
  return /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host);
}

/** Every address the extension calls, derived from the bare base: `/v1/...` per protocol, `/providers/<provider>/...` for the tools. */
export class Endpoints {
  constructor(readonly base: string) {}

  get origin(): string {
    return new URL(this.base).origin;
  }
  get chatCompletions(): string {
    return `${this.base}/v1/chat/completions`;
  }
  /** The legacy completions route, which new-api relays as fill-in-the-middle to the upstreams that take it. */
  get completions(): string {
    return `${this.base}/v1/completions`;
  }
  get responses(): string {
    return `${this.base}/v1/responses`;
  }
  get messages(): string {
    return `${this.base}/v1/messages`;
  }
  get models(): string {
    return `${this.base}/v1/models`;
  }
  get images(): string {
    return `${this.base}/v1/images/generations`;
  }
  get videoSubmit(): string {
    return `${this.base}/v1/video/generations`;
  }
  /** OpenAI's video API: a task is submitted here as a multipart form. */
  get videos(): string {
    return `${this.base}/v1/videos`;
  }
  videoTask(taskId: string): string {
    return `${this.base}/v1/video/generations/${encodeURIComponent(taskId)}`;
  }
  /** OpenAI's video API, which new-api also serves for every task: the video object. */
  videoObject(taskId: string): string {
    return `${this.base}/v1/videos/${encodeURIComponent(taskId)}`;
  }
  /** The finished video's bytes, served by the gateway itself (so it needs the key). */
  videoContent(taskId: string): string {
    return `${this.base}/v1/videos/${encodeURIComponent(taskId)}/content`;
  }
  /** First provider (GLM-type) tool path, e.g. `files/parser/sync`. */
  glm(path: string): string {
    return `${this.base}/providers/glm/api/paas/v4/${path.replace(/^\/+/, '')}`;
  }
  /** OpenAI's old billing pair, which one-api and new-api answer with the key, under `/v1` and at the root. */
  billing(path: 'subscription' | 'usage', underV1: boolean): string {
    return `${this.base}${underV1 ? '/v1' : ''}/dashboard/billing/${path}`;
  }
  /** new-api's own figures for the key that asks, in its raw quota units. */
  get tokenUsage(): string {
    return `${this.base}/api/usage/token`;
  }
  /** Second provider (Kimi-type) tool path, e.g. `files` or `tools/search`. */
  kimi(path: string): string {
    return `${this.base}/providers/kimi/v1/${path.replace(/^\/+/, '')}`;
  }
}

export type KeyCheck = { ok: true; key: string; trimmed: boolean } | { ok: false; reason: string };

/**
 * The key is used exactly as copied from the console. Only the whitespace that copying adds
 * at the ends is removed; anything that would change the key is refused with the reason instead.
 */
export function checkApiKey(raw: string): KeyCheck {
  const key = raw.trim();
  const trimmed = key !== raw;
  if (!key)
    return { ok: false, reason: l10n.t("The key is empty. Paste the whole key from the console's API Keys page.") };
  if (/^bearer\b/i.test(key)) {
    return {
      ok: false,
      reason: l10n.t('Paste the key alone, without "Bearer": the extension sends the Authorization header itself.'),
    };
  }
  if (/[\r\n]/.test(key))
    return { ok: false, reason: l10n.t('The key contains a line break. Copy it again as one line.') };
  if (/\s/.test(key))
    return {
      ok: false,
      reason: l10n.t('The key contains a space inside it. Copy it again in full; a key has no spaces.'),
    };
  if (/[^\x21-\x7e]/.test(key)) {
    return {
      ok: false,
      reason: l10n.t(
        'The key contains characters that cannot be part of a key (non-ASCII or control characters). Copy it again from the console.',
      ),
    };
  }
  const prefixes = key.match(/sk-/g)?.length ?? 0;
  if (prefixes > 1 || /[,;|]/.test(key)) {
    return { ok: false, reason: l10n.t('This looks like two keys joined together. Paste exactly one key.') };
  }
  return { ok: true, key, trimmed };
}

/** What may be shown of a key: its last four characters. */
export function maskKey(key: string): string {
  return key.length <= 8 ? '••••' : `••••${key.slice(-4)}`;
}
