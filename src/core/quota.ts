import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { GatewayError, isGatewayError } from './errors';
import type { HttpClient } from './http';
import type { HttpRequest } from './httpTypes';
import { lazySchema, parseJsonText, parseWith } from './validate';
import { formatAmount, formatNumber, formatWhen } from '../shared/format';
import { words, type Words } from '../shared/words';

/**
 * The key's quota, read from what gateways answer with the key alone (read-only, never billed):
 *
 * - `dashboard`: OpenAI's old billing pair, `GET /v1/dashboard/billing/subscription` (`hard_limit_usd`:
 *   everything granted, i.e. what is left plus what was used) and `GET …/dashboard/billing/usage`
 *   (`total_usage`: what was used, in US cents). one-api and new-api answer both under `/v1` and at the
 *   root. The gateway converts its internal units to money itself. An unlimited key reports a limit of
 *   100,000,000 (new-api's controller/billing.go). new-api converts as its quota display setting says:
 *   US dollars by default; an operator who displays yuan or tokens gets those numbers in the `_usd`
 *   fields, which nothing in the answer reveals, so they are shown as the field names promise.
 * - `tokenUsage`: new-api's `GET /api/usage/token`, `{code: true, data: {total_granted, total_used,
 *   total_available, unlimited_quota, expires_at}}` in raw quota units. What a unit is worth is the
 *   operator's setting (new-api's `QuotaPerUnit`, 500,000 per US$1 unless changed), which no endpoint
 *   the key may call reveals, so these figures are shown as units.
 *
 * A gateway without them answers 404, an error body (new-api even sends `{error: …}` with HTTP 200),
 * or something else entirely; all of that is "unavailable", never an error for the user.
 */
export type QuotaSource = 'dashboard' | 'tokenUsage';

export interface KeyQuota {
  source: QuotaSource;
  /** `usd`: money, as the gateway converted it; `units`: new-api's raw quota units. */
  unit: 'usd' | 'units';
  unlimited: boolean;
  /** What is left; absent for an unlimited key. */
  remaining?: number;
  /** What was used so far, when the gateway says. */
  used?: number;
  /** When the key expires (ms since the epoch); absent when it never does. */
  expiresAt?: number;
  /** When the figures were read (ms since the epoch). */
  checkedAt: number;
}

export type QuotaResult = { available: true; quota: KeyQuota } | { available: false; reason: string };

/** new-api's and one-api's `hard_limit_usd` for a key with unlimited quota. */
export const UNLIMITED_LIMIT = 100_000_000;

/** new-api's default `QuotaPerUnit`: what US$1 is in quota units unless the operator changed it. */
export const DEFAULT_UNITS_PER_USD = 500_000;

const subscriptionBody = lazySchema(() =>
  z.looseObject({
    hard_limit_usd: z.number(),
    access_until: z.optional(z.nullable(z.number())),
  }),
);
const usageBody = lazySchema(() => z.looseObject({ total_usage: z.number() }));
const tokenUsageBody = lazySchema(() =>
  z.looseObject({
    code: z.literal(true),
    data: z.looseObject({
      total_used: z.number(),
      total_available: z.number(),
      unlimited_quota: z.optional(z.nullable(z.boolean())),
      expires_at: z.optional(z.nullable(z.number())),
    }),
  }),
);

export interface QuotaFetchOptions {
  signal?: AbortSignal;
  /** The id of the key whose quota is read; the first key when absent. */
  key?: string;
  /** Tried first: the source that answered last time, so a gateway is not asked twice every time. */
  prefer?: QuotaSource;
  now?: () => number;
}

/**
 * Asks the gateway for the key's quota: the dashboard pair first (the gateway converts to money), then
 * new-api's own endpoint. Every request is a GET to the gateway's origin, where the client adds the key.
 * Only a cancellation is thrown; every other failure makes the result "unavailable" with the reasons.
 */
export async function fetchKeyQuota(http: HttpClient, opts: QuotaFetchOptions = {}): Promise<QuotaResult> {
  const order: QuotaSource[] = opts.prefer === 'tokenUsage' ? ['tokenUsage', 'dashboard'] : ['dashboard', 'tokenUsage'];
  const reasons: string[] = [];
  for (const source of order) {
    try {
      const figures = source === 'dashboard' ? await fromDashboard(http, opts) : await fromTokenUsage(http, opts);
      return { available: true, quota: { ...figures, checkedAt: (opts.now ?? Date.now)() } };
    } catch (err) {
      if (isGatewayError(err, 'cancelled')) throw err;
      reasons.push(`${source}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { available: false, reason: reasons.join('; ') };
}

type Figures = Omit<KeyQuota, 'checkedAt'>;
/** With which key, and until when, the figures are asked for. */
type Asked = Pick<HttpRequest, 'signal' | 'key'>;

async function fromDashboard(http: HttpClient, at: Asked): Promise<Figures> {
  const e = http.endpoints;
  let underV1 = true;
  let subscription: z.infer<ReturnType<typeof subscriptionBody>>;
  try {
    subscription = await getJson(
      http,
      e.billing('subscription', true),
      subscriptionBody(),
      'The billing subscription answer',
      at,
    );
  } catch (err) {
    if (!isGatewayError(err) || err.status !== 404) throw err;
    underV1 = false;
    subscription = await getJson(
      http,
      e.billing('subscription', false),
      subscriptionBody(),
      'The billing subscription answer',
      at,
    );
  }
  const limit = subscription.hard_limit_usd;
  const expiresAt = seconds(subscription.access_until);
  const unlimited = limit >= UNLIMITED_LIMIT;
  let used: number | undefined;
  try {
    used =
      (await getJson(http, e.billing('usage', underV1), usageBody(), 'The billing usage answer', at)).total_usage / 100;
  } catch (err) {
    // An unlimited key needs no usage figure to be shown; a limited one cannot say what is left without it.
    if (!unlimited || isGatewayError(err, 'cancelled')) throw err;
  }
  return {
    source: 'dashboard',
    unit: 'usd',
    unlimited,
    ...(unlimited || used === undefined ? {} : { remaining: tidy(limit - used) }),
    ...(used === undefined ? {} : { used: tidy(used) }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

async function fromTokenUsage(http: HttpClient, at: Asked): Promise<Figures> {
  const body = await getJson(http, http.endpoints.tokenUsage, tokenUsageBody(), "The gateway's token usage answer", at);
  const d = body.data;
  const unlimited = d.unlimited_quota === true;
  const expiresAt = seconds(d.expires_at);
  return {
    source: 'tokenUsage',
    unit: 'units',
    unlimited,
    ...(unlimited ? {} : { remaining: d.total_available }),
    used: d.total_used,
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

/** A GET whose JSON body is checked for an error object (new-api sends some with HTTP 200) before its schema. */
async function getJson<T extends z.ZodMiniType>(
  http: HttpClient,
  url: string,
  schema: T,
  what: string,
  at: Asked,
): Promise<z.infer<T>> {
  const response = await http.send({ method: 'GET', url, signal: at.signal, key: at.key });
  const data = parseJsonText(await response.text(), what);
  const refusal = refusalIn(data);
  if (refusal !== undefined)
    throw new GatewayError('notImplemented', words('{0} was an error: {1}', what, refusal || l10n.t('(no message)')));
  return parseWith(schema, data, what);
}

/** The message of an error body: `{error: {message}}`, `{error: "…"}`, or new-api's `{success: false, message}`. */
function refusalIn(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const record = data as Record<string, unknown>;
  const error = record.error;
  if (typeof error === 'string' && error) return error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as Record<string, unknown>).message;
    return typeof message === 'string' ? message : '';
  }
  if (record.success === false || record.code === false)
    return typeof record.message === 'string' ? record.message : '';
  return undefined;
}

/** Unix seconds, 0 or less meaning "never", as ms. */
function seconds(value: number | null | undefined): number | undefined {
  return typeof value === 'number' && value > 0 ? value * 1000 : undefined;
}

/** Removes the binary floating-point noise of subtracting decimal money (12.3 - 4.1). */
function tidy(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** Money: two decimals, more for amounts under a cent, which would otherwise read as nothing left. */
function money(n: number): string {
  return n === 0 || Math.abs(n) >= 0.01 ? formatAmount(n) : formatNumber(n, 6);
}

/** A few words for the status bar and the Models view header: `US$12.34 left`, `250,000 units left`. */
export function quotaShort(q: KeyQuota): string {
  if (q.unlimited) return l10n.t('unlimited quota');
  const left = q.remaining ?? 0;
  return q.unit === 'usd' ? l10n.t('US${0} left', money(left)) : l10n.t('{0} units left', formatNumber(left));
}

/**
 * The sentence for the status bar tooltip and the Check Connection report: "Key quota: …", or with
 * `keyName` (several keys, one line each) "Quota of key "team": …", so the words are said once.
 */
export function quotaLine(q: KeyQuota, keyName?: string): string {
  const whose = keyName === undefined ? l10n.t('Key quota') : l10n.t('Quota of key "{0}"', keyName);
  const parts: string[] = [];
  if (q.unit === 'usd') {
    if (q.unlimited)
      parts.push(
        q.used === undefined
          ? l10n.t('{0}: unlimited.', whose)
          : l10n.t('{0}: unlimited, US${1} used.', whose, money(q.used)),
      );
    else
      parts.push(
        q.used === undefined
          ? l10n.t('{0}: US${1} left.', whose, money(q.remaining ?? 0))
          : l10n.t('{0}: US${1} left, US${2} used.', whose, money(q.remaining ?? 0), money(q.used)),
      );
  } else if (q.unlimited) {
    parts.push(l10n.t('{0}: unlimited, {1} quota units used.', whose, formatNumber(q.used ?? 0)));
  } else {
    const left = q.remaining ?? 0;
    parts.push(l10n.t('{0}: {1} quota units left, {2} used.', whose, formatNumber(left), formatNumber(q.used ?? 0)));
    parts.push(
      l10n.t(
        "That is US${0} if the gateway keeps new-api's default of {1} units per US$1; its operator may have changed it.",
        money(left / DEFAULT_UNITS_PER_USD),
        formatNumber(DEFAULT_UNITS_PER_USD),
      ),
    );
  }
  if (q.expiresAt !== undefined) parts.push(l10n.t('The key expires {0}.', formatWhen(q.expiresAt)));
  return parts.join(' ');
}

/** Added to a refusal for quota: what the gateway says is left on the key. */
export function quotaRefusalNote(q: KeyQuota): Words {
  if (q.unlimited) return words("The key itself has unlimited quota: the account's balance is what is short.");
  const left = q.remaining ?? 0;
  return q.unit === 'usd'
    ? words('Left on this key: US${0}.', money(left))
    : words('Left on this key: {0} quota units.', formatNumber(left));
}
