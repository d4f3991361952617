/**
 * Which proxy, if any, a request to a given address goes through. VS Code's own settings win over
 * the environment, as they do for VS Code itself; `noProxy` entries from both always apply.
 */
export interface ProxySettings {
  /** `inherit` follows VS Code's `http.proxy` and the proxy environment variables; `off` connects directly. */
  mode: 'inherit' | 'off';
  /** VS Code's `http.proxy`, empty when not set. */
  proxyUrl: string;
  /** VS Code's `http.proxyStrictSSL`. */
  strictSSL: boolean;
  /** VS Code's `http.noProxy`. */
  noProxy: string[];
  env: Readonly<Record<string, string | undefined>>;
}

export function resolveProxy(target: URL, settings: ProxySettings): string | undefined {
  if (settings.mode === 'off') return undefined;
  const env = settings.env;
  const noProxy = [...settings.noProxy, ...splitList(env.NO_PROXY ?? env.no_proxy ?? '')];
  if (bypasses(target, noProxy)) return undefined;
  if (settings.proxyUrl.trim()) return withScheme(settings.proxyUrl.trim());
  const fromEnv =
    target.protocol === 'https:'
      ? env.HTTPS_PROXY ?? env.https_proxy ?? env.HTTP_PROXY ?? env.http_proxy
      : env.HTTP_PROXY ?? env.http_proxy;
  const chosen = (fromEnv ?? env.ALL_PROXY ?? env.all_proxy ?? '').trim();
  return chosen ? withScheme(chosen) : undefined;
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

/** Follows the common `NO_PROXY` conventions: `*`, exact hosts, `.suffix`, `*.suffix`, `host:port`. */
export function bypasses(target: URL, entries: string[]): boolean {
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  return entries.some((raw) => {
    const entry = raw.trim().toLowerCase();
    if (!entry) return false;
    if (entry === '*') return true;
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
