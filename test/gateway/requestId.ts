import { randomBytes, randomInt } from 'node:crypto';

export const REQUEST_ID_HEADER = 'X-Oneapi-Request-Id';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Stands in for new-api's build hash, which is fixed for the life of one server binary. */
const BUILD_HASH = randomBytes(4).toString('hex');

export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/**
 * `YYYYMMDDHHMMSS` (UTC) + nanoseconds within the second + 8-hex build hash + 8 random chars.
 * The nanoseconds are not zero-padded because new-api prints them with `%d`.
 */
export function newRequestId(now: Date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const stamp =
    String(now.getUTCFullYear()) +
    pad(now.getUTCMonth() + 1) +
    pad(now.getUTCDate()) +
    pad(now.getUTCHours()) +
    pad(now.getUTCMinutes()) +
    pad(now.getUTCSeconds());
  const nanos = now.getUTCMilliseconds() * 1_000_000 + randomInt(1_000_000);
  return stamp + String(nanos) + BUILD_HASH + randomAlphanumeric(8);
}
