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
  return PRIVATE.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}
