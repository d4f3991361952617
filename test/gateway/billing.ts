import type { GatewayContext } from './route';
import type { ModelSpec } from './types';
import { formatQuota, usdToQuota, type KeyState } from './world';

/** new-api reserves at least this many prompt tokens before relaying a text request. */
const MIN_PRE_CONSUME_PROMPT_TOKENS = 500;

/** Per-call price when set, else (tokens × ratio) with ratio 1 = one quota unit per token. */
function quotaFor(model: ModelSpec, tokens: number): number {
  if (model.priceUsd !== undefined) return usdToQuota(model.priceUsd);
  return Math.round(tokens * (model.ratio ?? 1));
}

/** What new-api reserves before a text request: (max(prompt, 500) + max_tokens) × ratio. */
export function textPreConsumeQuota(model: ModelSpec, promptTokens: number, maxTokens: number): number {
  return quotaFor(model, Math.max(promptTokens, MIN_PRE_CONSUME_PROMPT_TOKENS) + maxTokens);
}

/** What a finished text request costs. */
export function textQuota(model: ModelSpec, promptTokens: number, completionTokens: number): number {
  return quotaFor(model, promptTokens + completionTokens);
}

/**
 * new-api's pre-consume checks, in its order: user quota ≤ 0, user quota short, token quota short.
 * Answers with a relay error in the route's shape and returns false when the request must stop.
 */
export function preConsume(ctx: GatewayContext, quota: number): boolean {
  if (quota <= 0) return true; // free models skip pre-consumption
  const { userQuota, tokenQuota } = ctx.key;
  if (userQuota !== undefined && userQuota <= 0) {
    ctx.relayError(403, 'insufficient_user_quota', `用户额度不足, 剩余额度: ${formatQuota(userQuota)}`);
    return false;
  }
  if (userQuota !== undefined && userQuota < quota) {
    ctx.relayError(
      403,
      'insufficient_user_quota',
      `预扣费额度失败, 用户剩余额度: ${formatQuota(userQuota)}, 需要预扣费额度: ${formatQuota(quota)}`,
    );
    return false;
  }
  if (tokenQuota !== undefined && tokenQuota < quota) {
    ctx.relayError(
      403,
      'pre_consume_token_quota_failed',
      `token quota is not enough, token remain quota: ${formatQuota(tokenQuota)}, need quota: ${formatQuota(quota)}`,
    );
    return false;
  }
  return true;
}

/** Settles a finished request against both the user's and the key's quota (a negative quota refunds). */
export function charge(key: KeyState, quota: number): void {
  if (key.userQuota !== undefined) key.userQuota -= quota;
  if (key.tokenQuota !== undefined) key.tokenQuota -= quota;
  key.usedQuota += quota;
}
