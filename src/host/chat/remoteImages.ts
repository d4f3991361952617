import * as vscode from 'vscode';
import { isPrivateHost, lookupAll, privateAddressesOf, type HostLookup } from '../../core/privateAddress';

/**
 * Remote images in chat answers load only from hosts the user allowed, one by one. The host (this
 * code) asks and records the answer in a user setting; the webview can only ask, never grant. The
 * host fetches these hosts' images for the page (answerImages.ts, https only); the page's content
 * security policy lists no remote host at all. Loopback and private
 * addresses are never allowed, the gateway's own host aside: an image link in an answer is a
 * request the model chose, and must not reach services on this computer or its network.
 */
const SECTION = 'modelGateway.chat';
const KEY = 'remoteImageHosts';
export const REMOTE_IMAGE_HOSTS_SETTING = `${SECTION}.${KEY}`;

/** A host name as a CSP source may name it: letters, digits, dots, dashes and an optional port. */
const HOST =
  /^(?=.{1,253}(?::\d{1,5})?$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::\d{1,5})?$/;

/**
 * The host in the canonical form the page's URL parser gives it (`127.1` and `0x7f.1` become
 * `127.0.0.1`), or undefined when it is not a plain host name (no wildcards, no paths).
 */
export function normalizeImageHost(host: string): string | undefined {
  const h = host.trim().toLowerCase();
  if (!HOST.test(h)) return undefined;
  try {
    return new URL(`https://${h}`).host;
  } catch {
    return undefined;
  }
}

/** The configured gateway's host (with its port), whose images may load even from a private address. */
export function gatewayHost(): string | undefined {
  const raw = vscode.workspace.getConfiguration('modelGateway').get<unknown>('baseUrl');
  if (typeof raw !== 'string' || !raw.trim()) return undefined;
  try {
    return new URL(raw.trim()).host;
  } catch {
    return undefined;
  }
}

/** Whether a canonical host is loopback or private and not the gateway's own. */
function isRefusedHost(host: string): boolean {
  return host !== gatewayHost() && isPrivateHost(new URL(`https://${host}`).hostname);
}

/** The allowed hosts, from the user's own settings only (an application-scoped setting). */
export function allowedImageHosts(): string[] {
  const value = vscode.workspace.getConfiguration(SECTION).inspect<unknown>(KEY)?.globalValue;
  if (!Array.isArray(value)) return [];
  const hosts = value
    .flatMap((v) => (typeof v === 'string' ? [normalizeImageHost(v)] : []))
    .filter((h): h is string => h !== undefined && !isRefusedHost(h));
  return [...new Set(hosts)];
}

/**
 * Asks the user whether images from `host` may load (a modal naming the host) and records a yes in
 * the user setting. Returns whether the host is allowed afterwards. A name that resolves to a
 * loopback or private address (any of its addresses: `lookup`) is refused like the address itself,
 * and dropped from the setting if it was allowed before.
 */
export async function askToAllowImageHost(
  rawHost: string,
  confirm: (host: string) => Promise<boolean> = confirmImageHost,
  lookup: HostLookup = lookupAll,
): Promise<boolean> {
  const host = normalizeImageHost(rawHost);
  if (!host) {
    void vscode.window.showWarningMessage(
      vscode.l10n.t('"{0}" is not a host images can be allowed from.', rawHost.slice(0, 100)),
    );
    return false;
  }
  if (isRefusedHost(host)) {
    void vscode.window.showWarningMessage(
      vscode.l10n.t(
        'Images from {0} are not loaded: it is a private or loopback address, and an answer must not make this computer call its own network.',
        host,
      ),
    );
    return false;
  }
  const resolved = host === gatewayHost() ? [] : await privateAddressesOf(new URL(`https://${host}`).hostname, lookup);
  if (resolved.length) {
    await recordAllowed(allowedImageHosts().filter((h) => h !== host));
    void vscode.window.showWarningMessage(
      vscode.l10n.t(
        'Images from {0} are not loaded: the name resolves to {1}, a private or loopback address, and an answer must not make this computer call its own network.',
        host,
        resolved.join(', '),
      ),
    );
    return false;
  }
  if (allowedImageHosts().includes(host)) return true;
  if (!(await confirm(host))) return false;
  await recordAllowed([...allowedImageHosts().filter((h) => h !== host), host]);
  return true;
}

async function recordAllowed(hosts: string[]): Promise<void> {
  const before = allowedImageHosts();
  if (hosts.length === before.length && hosts.every((h, i) => h === before[i])) return;
  await vscode.workspace.getConfiguration(SECTION).update(KEY, hosts, vscode.ConfigurationTarget.Global);
}

/** The question, as a modal naming the host. */
async function confirmImageHost(host: string): Promise<boolean> {
  const load = vscode.l10n.t('Load Images');
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t('Load images from {0} in chat answers?', host),
    {
      modal: true,
      detail: vscode.l10n.t(
        'Images from {0} will load in every chat answer that shows one; the server learns when you view them. You can revoke this in the setting "{1}".',
        host,
        REMOTE_IMAGE_HOSTS_SETTING,
      ),
    },
    load,
  );
  return choice === load;
}
