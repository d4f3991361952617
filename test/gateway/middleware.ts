import { middlewareError } from './errorBodies';
import { translate } from './i18n';
import { boundaryOf, parseMultipart } from './multipart';
import type { RequestContext } from './requestContext';
import { isRecord } from './values';
import type { Language } from './types';
import type { KeyState, World } from './world';

/**
 * new-api's TokenAuth. The key may come with or without `Bearer ` and `sk-`; on Messages and
 * models paths an `x-api-key` header replaces Authorization. Every unusable key gets the same 401.
 */
export function tokenAuth(http: RequestContext, world: World, lang: Language): KeyState | undefined {
  let auth = http.header('authorization') ?? '';
  const apiKey = http.header('x-api-key');
  if (apiKey && (http.path.includes('/v1/messages') || http.path.includes('/v1/models'))) auth = `Bearer ${apiKey}`;
  let raw = auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : auth;
  if (raw.startsWith('sk-')) raw = raw.slice(3);
  const [stored = '', ...channel] = raw.split('-');

  const state = stored ? world.lookup(stored) : undefined;
  const status = state?.spec.status ?? 'enabled';
  const exhausted = state?.tokenQuota !== undefined && state.tokenQuota <= 0;
  if (!state || status !== 'enabled' || exhausted) {
    http.sendJson(401, middlewareError(translate(lang, 'token.invalid'), http.requestId));
    return undefined;
  }
  // `sk-KEY-<channel>` pins a channel, which only admins may do; the double has no admins.
  if (channel.length > 0) {
    http.sendJson(403, middlewareError('普通用户不支持指定渠道', http.requestId));
    return undefined;
  }
  return state;
}

/** A text field of a multipart/form-data body, or undefined (not a form, or no such field). */
export function formField(http: RequestContext, name: string): string | undefined {
  const boundary = boundaryOf(http.header('content-type'));
  if (!boundary) return undefined;
  try {
    const part = parseMultipart(http.body, boundary).find((p) => p.name === name && p.filename === undefined);
    return part?.data.toString('utf8');
  } catch {
    return undefined;
  }
}

/** new-api's ModelRequestRateLimit, counting every request, failed ones included. */
export function rateLimit(http: RequestContext, key: KeyState): boolean {
  const limit = key.spec.rateLimit;
  if (!limit) return true;
  const now = Date.now();
  key.hits = key.hits.filter((t) => now - t < limit.windowMs);
  if (key.hits.length < limit.requests) {
    key.hits.push(now);
    return true;
  }
  if (limit.backend === 'memory') {
    http.send(429, '');
  } else {
    const minutes = Math.max(1, Math.round(limit.windowMs / 60_000));
    const message = `您已达到总请求数限制：${minutes}分钟内最多请求${limit.requests}次，包括失败次数，请检查您的请求是否正确`;
    http.sendJson(429, middlewareError(message, http.requestId));
  }
  return false;
}

/**
 * new-api's token concurrency limit: a key with `maxConcurrency` may have that many relayed requests
 * in flight; the next is refused at once with HTTP 429 and code `token_concurrency_limit_reached`
 * (new-api never queues: holding requests would tie up the gateway). The slot is freed when the
 * answer has been sent in full or the client went away. Returns whether the request may go on.
 */
export function concurrencyLimit(http: RequestContext, key: KeyState): boolean {
  const limit = key.spec.maxConcurrency;
  if (!limit) return true;
  if (key.inFlight >= limit) {
    key.concurrencyRefusals += 1;
    http.sendJson(
      429,
      middlewareError('token_concurrency_limit_reached', http.requestId, 'token_concurrency_limit_reached'),
    );
    return false;
  }
  key.inFlight += 1;
  key.peakInFlight = Math.max(key.peakInFlight, key.inFlight);
  http.res.once('close', () => {
    key.inFlight -= 1;
  });
  return true;
}

/**
 * new-api's Distribute: the model comes from the body (never from multipart forms), the token's
 * whitelist is checked first, then the name, then whether the key's group has a channel for it.
 * A route that names its model (`fixedModel`, for bodies without a JSON model) skips the body.
 * Returns the model id, or undefined once it has answered.
 */
export function distribute(
  http: RequestContext,
  world: World,
  key: KeyState,
  lang: Language,
  fixedModel?: string,
  formModel = false,
): string | undefined {
  const fail = (status: number, message: string, code = ''): undefined => {
    http.sendJson(status, middlewareError(message, http.requestId, code));
    return undefined;
  };

  let model = fixedModel ?? (formModel ? formField(http, 'model')?.trim() : undefined) ?? '';
  if (
    fixedModel === undefined &&
    !(http.header('content-type') ?? '').includes('multipart/form-data') &&
    http.body.length > 0
  ) {
    const parsed = http.json();
    if (!parsed.ok)
      return fail(400, translate(lang, 'distributor.invalid_request', { Error: 'invalid JSON request body' }));
    const value = isRecord(parsed.value) ? parsed.value.model : undefined;
    if (value !== undefined && value !== null && typeof value !== 'string') {
      return fail(400, translate(lang, 'distributor.invalid_request', { Error: 'field model must be a string' }));
    }
    model = value ?? '';
  }

  const whitelist = key.spec.modelWhitelist;
  if (whitelist && whitelist.length === 0) return fail(403, translate(lang, 'distributor.token_no_model_access'));
  if (whitelist && !whitelist.includes(model)) {
    return fail(403, translate(lang, 'distributor.token_model_forbidden', { Model: model }));
  }
  if (!model) return fail(400, translate(lang, 'distributor.model_name_required'));
  const group = key.spec.group;
  if (!world.groupModels(group).includes(model)) {
    return fail(
      503,
      translate(lang, 'distributor.no_available_channel', { Model: model, Group: group }),
      'model_not_found',
    );
  }
  return model;
}
