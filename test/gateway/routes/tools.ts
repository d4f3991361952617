import { charge } from '../billing';
import { DEFAULT_TOOL_PRICE_USD } from '../defaults';
import { GLM_INSUFFICIENT_BALANCE, KIMI_INSUFFICIENT_BALANCE } from '../errorBodies';
import type { GatewayContext } from '../route';
import type { ToolCallRecord } from '../types';
import { usdToQuota } from '../world';

/**
 * What the GLM and Kimi tool routes share: per-call billing and the log record. Billing follows the
 * spec (Limits, Errors): the key owner's existing quota pays US$0.10 per billed call unless the
 * route's tool entry has its own price; no overdraft, so a call is refused when the user quota or
 * the key's own quota is below the price (new-api's pre-consume rule), in the provider's dialect.
 * Only calls that succeed are charged; listing, reading and deleting files are never billed.
 */

type Provider = ToolCallRecord['provider'];

/** Price of one call in quota units: the Distribute model's per-call price, else the default. */
export function toolQuota(ctx: GatewayContext): number {
  const price = ctx.modelId ? ctx.model.priceUsd : undefined;
  return usdToQuota(price ?? DEFAULT_TOOL_PRICE_USD);
}

/** Starts the log record of a tool call; every tool request gets one, charged or not. */
export function recordTool(ctx: GatewayContext, provider: Provider, tool: string): ToolCallRecord {
  const record: ToolCallRecord = { provider, tool, chargedQuota: 0 };
  ctx.http.entry.tool = record;
  return record;
}

/** Refuses, in the provider's own error shape, a key that cannot pay for one call. */
export function canPay(ctx: GatewayContext, provider: Provider): boolean {
  const quota = toolQuota(ctx);
  const { userQuota, tokenQuota } = ctx.key;
  const short = (userQuota !== undefined && userQuota < quota) || (tokenQuota !== undefined && tokenQuota < quota);
  if (!short) return true;
  const refusal = provider === 'glm' ? GLM_INSUFFICIENT_BALANCE : KIMI_INSUFFICIENT_BALANCE;
  ctx.http.sendJson(refusal.status, refusal.body);
  return false;
}

/** Charges one successful billed call and notes it in the log record. */
export function chargeCall(ctx: GatewayContext, record: ToolCallRecord): void {
  const quota = toolQuota(ctx);
  charge(ctx.key, quota);
  record.chargedQuota = quota;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
