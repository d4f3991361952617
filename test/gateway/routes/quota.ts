import type { RequestContext } from '../requestContext';
import type { GatewayContext, Route } from '../route';
import type { QuotaEndpoints } from '../types';
import { QUOTA_PER_USD, type KeyState, type World } from '../world';

/**
 * The quota endpoints a key may read, as new-api answers them (controller/billing.go and
 * controller/token.go). new-api's DisplayTokenStatEnabled is on by default, so the billing pair
 * reports the key's own figures: granted = left + used, and 100,000,000 for an unlimited key. With the
 * default quota display type (USD) the `*_usd` fields are quota units / QuotaPerUnit, and `total_usage`
 * is that in cents. None of these calls is billed or rate limited per model.
 */
const UNLIMITED_USD = 100_000_000;

function usd(quota: number): number {
  return quota / QUOTA_PER_USD;
}

function subscription(ctx: GatewayContext): void {
  const { tokenQuota, usedQuota } = ctx.key;
  const amount = tokenQuota === undefined ? UNLIMITED_USD : usd(tokenQuota + usedQuota);
  ctx.http.sendJson(200, {
    object: 'billing_subscription',
    has_payment_method: true,
    soft_limit_usd: amount,
    hard_limit_usd: amount,
    system_hard_limit_usd: amount,
    // The double's keys never expire by time (an expired key is refused at TokenAuth): new-api's 0.
    access_until: 0,
  });
}

function usage(ctx: GatewayContext): void {
  ctx.http.sendJson(200, { object: 'list', total_usage: usd(ctx.key.usedQuota) * 100 });
}

/**
 * new-api's /api/usage/token skips TokenAuth and looks the key up itself, so a disabled or exhausted
 * key still reads its figures. No header is a 401; an unknown key is an error body with HTTP 200.
 */
function ownAuth(http: RequestContext, world: World): KeyState | undefined {
  const auth = http.header('authorization') ?? '';
  if (!auth) {
    http.sendJson(401, { success: false, message: 'No Authorization header' });
    return undefined;
  }
  const [scheme = '', token = '', ...rest] = auth.split(' ');
  if (scheme.toLowerCase() !== 'bearer' || rest.length > 0) {
    http.sendJson(401, { success: false, message: 'Invalid Bearer token' });
    return undefined;
  }
  const state = world.lookup(token.startsWith('sk-') ? token.slice(3) : token);
  if (!state) http.sendJson(200, { success: false, message: 'failed to get token info' });
  return state;
}

function tokenUsage(ctx: GatewayContext): void {
  const { tokenQuota, usedQuota, spec } = ctx.key;
  const left = tokenQuota ?? 0;
  ctx.http.sendJson(200, {
    code: true,
    message: 'ok',
    data: {
      object: 'token_usage',
      name: '',
      total_granted: left + usedQuota,
      total_used: usedQuota,
      total_available: left,
      unlimited_quota: tokenQuota === undefined,
      model_limits: {},
      model_limits_enabled: spec.modelWhitelist !== undefined,
      expires_at: 0,
    },
  });
}

/** new-api answers with HTTP 200 and an OpenAI-style error object when the key's record cannot be read. */
function dashboardError(ctx: GatewayContext): void {
  ctx.http.sendJson(200, { error: { message: 'record not found', type: 'upstream_error' } });
}

function tokenUsageError(ctx: GatewayContext): void {
  ctx.http.sendJson(200, { success: false, message: 'failed to get token info' });
}

function dashboardRoutes(broken: boolean): Route[] {
  const route = (path: string, handle: (ctx: GatewayContext) => void): Route => ({
    method: 'GET',
    path,
    rateLimit: false,
    distribute: false,
    errorFormat: 'openai',
    handle: broken ? dashboardError : handle,
  });
  return [
    route('/dashboard/billing/subscription', subscription),
    route('/v1/dashboard/billing/subscription', subscription),
    route('/dashboard/billing/usage', usage),
    route('/v1/dashboard/billing/usage', usage),
  ];
}

function tokenUsageRoutes(broken: boolean): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/usage/token',
      rateLimit: false,
      distribute: false,
      errorFormat: 'openai',
      auth: ownAuth,
      handle: broken ? tokenUsageError : tokenUsage,
    },
  ];
}

/** The quota routes of a gateway variant; the ones it lacks are simply absent, so they answer 404. */
export function quotaRoutes(variant: QuotaEndpoints): Route[] {
  switch (variant) {
    case 'newApi':
      return [...dashboardRoutes(false), ...tokenUsageRoutes(false)];
    case 'dashboard':
      return dashboardRoutes(false);
    case 'tokenUsage':
      return tokenUsageRoutes(false);
    case 'errorBody':
      return [...dashboardRoutes(true), ...tokenUsageRoutes(true)];
    case 'none':
      return [];
  }
}
