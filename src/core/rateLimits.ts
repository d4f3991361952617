/**
 * What a refusal for the key's pace says (HTTP 429, or new-api's concurrency code): whether it is
 * the key's concurrency limit (and the limit, where the gateway's words give it) or its rate, and
 * when to try again (Retry-After).
 */
import { words, type Said, type Words } from '../shared/words';

export const CONCURRENCY_CODE = 'token_concurrency_limit_reached';
const CONCURRENCY_WORDS = /concurren|并发/i;

/** A 429: the key's concurrency limit (with the limit when the gateway names it), else its rate, with when to try again. */
export function rateLimited(
  status: number,
  code: string | undefined,
  retryAfterHeader: string | undefined,
  upstream: string | undefined,
  said: Said,
): Words {
  if (isConcurrencyRefusal(status, code, upstream)) {
    const limit = concurrencyLimitFrom(upstream);
    const lead =
      limit !== undefined
        ? words(
            'The gateway lets this key run {0} requests at once, and that many were already running (HTTP 429).',
            limit,
          )
        : words(
            'The gateway refused the request: this key already runs as many requests at once as its concurrency limit allows (HTTP 429; the gateway did not say the limit).',
          );
    return words(
      '{0}{1} Try again once one of the running requests (an answer, a tool, a video submission) has finished.',
      lead,
      said,
    );
  }
  const wait = parseRetryAfter(retryAfterHeader);
  const when =
    wait !== undefined ? words(' Try again in {0} s.', Math.ceil(wait / 1000)) : words(' Wait a moment and try again.');
  const why = upstream ? said : words(' The gateway answered HTTP 429 (too many requests) with no details.');
  return words('Too many requests for this key right now.{0}{1}', why, when);
}

/** A 429 (or an error of that code) refusing a request for the key's concurrency, not for its rate. */
export function isConcurrencyRefusal(
  status: number | undefined,
  code: string | undefined,
  words: string | undefined,
): boolean {
  if ((code ?? '').toLowerCase() === CONCURRENCY_CODE) return true;
  return status === 429 && CONCURRENCY_WORDS.test(words ?? '');
}

/**
 * The concurrency limit where the gateway's words state it ("concurrency limit 2", "最大并发数：2",
 * "并发上限为 2"); undefined when they do not (new-api's own message names only the code).
 */
export function concurrencyLimitFrom(words: string | undefined): number | undefined {
  const match =
    /concurren\w*[^0-9.]{0,24}?(\d+)/i.exec(words ?? '') ??
    /并发[^0-9]{0,12}?(\d+)/.exec(words ?? '') ??
    /(\d+)\s*(?:concurrent|个?并发)/i.exec(words ?? '');
  const n = match ? Number(match[1]) : NaN;
  return Number.isInteger(n) && n >= 1 ? n : undefined;
}

/** Retry-After is either seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
