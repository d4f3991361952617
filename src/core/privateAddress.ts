import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses that reach this computer or its local network, which a page rendered from a model's
 * answer must not make the user's machine call (an image link is a request the model chose):
 * loopback, "this network", private (RFC 1918), link-local (cloud metadata lives at
 * 169.254.169.254) and IPv6 unique-local and link-local (RFC 4193, RFC 4291). IPv4-mapped IPv6
 * forms of the IPv4 ranges match too (Node's BlockList checks them against the IPv4 rules).
 */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['127.0.0.0', 8],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['169.254.0.0', 16],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/**
 * Whether a host (a `URL.hostname`: IPv6 in brackets, IPv4 already canonical) is a loopback or
 * private address, or a name for this computer (`localhost` and `*.localhost`, RFC 6761 section 6.3).
 * Other names are judged by their text only: what DNS answers for them is not known here.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const family = isIP(bare);
  if (family === 0) return false;
  if (family === 4) return PRIVATE.check(bare, 'ipv4');
  const embedded = embeddedIpv4(bare);
  return PRIVATE.check(bare, 'ipv6') || (embedded !== undefined && PRIVATE.check(embedded, 'ipv4'));
}

/**
 * The IPv4 address inside an IPv6 one that reaches it: the NAT64 well-known prefix 64:ff9b::/96
 * (RFC 6052) and the deprecated IPv4-compatible ::/96 (RFC 4291 section 2.5.5.1). IPv4-mapped
 * addresses (::ffff:0:0/96) need no help: BlockList checks them against the IPv4 rules.
 */
function embeddedIpv4(ipv6: string): string | undefined {
  const url = new URL(`http://[${ipv6}]/`).hostname.slice(1, -1);
  const m = /^(?:64:ff9b::|::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(url);
  if (!m) return undefined;
  const high = parseInt(m[1] ?? '0', 16);
  const low = parseInt(m[2] ?? '0', 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Every address a host name resolves to (dns.lookup with `all`); injectable so tests need no DNS. */
export type HostLookup = (hostname: string) => Promise<readonly { address: string }[]>;

export const lookupAll: HostLookup = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * The loopback or private addresses a host name resolves to, every one checked (a public name may
 * resolve to 127.0.0.1, or to a public and a private address at once). A literal address or a
 * localhost name is judged by its text. A name that cannot be resolved now gives none: it reaches
 * nothing now, and whoever loads it later resolves it again.
 */
export async function privateAddressesOf(hostname: string, lookup: HostLookup = lookupAll): Promise<string[]> {
  if (isPrivateHost(hostname)) return [hostname];
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return [];
  const addresses = await lookup(bare.replace(/\.$/, '')).catch(() => []);
  return addresses.map((a) => a.address).filter((a) => isPrivateHost(a));
}
