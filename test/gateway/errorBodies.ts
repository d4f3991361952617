/**
 * Every error body shape the research notes record (wire-formats §3.5, §5.2, §6.7, §7, §8.6, §9.5),
 * as plain builders. Which shape a response uses depends on where in new-api the error arises, so
 * the server picks the builder; fault injection can use them directly.
 */

export interface MiddlewareErrorBody {
  error: { code: string; message: string; type: 'new_api_error' };
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string; code: string };
}

export interface ClaudeErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id?: string;
}

export interface TaskErrorBody {
  code: string;
  message: string;
  data: null;
}

/** Gateway-generated messages end with this suffix; relayed upstream messages do not. */
export function withRequestId(message: string, requestId: string): string {
  return `${message} (request id: ${requestId})`;
}

/**
 * Auth, distributor and rate-limit errors: the same shape on every route, with no `param` key.
 * Keys are in the alphabetical order Go gives a marshalled map.
 */
export function middlewareError(message: string, requestId: string, code = ''): MiddlewareErrorBody {
  return { error: { code, message: withRequestId(message, requestId), type: 'new_api_error' } };
}

/**
 * Errors raised inside the relay on OpenAI-format routes. Pass a request id for gateway-generated
 * errors; omit it to imitate a relayed upstream error (whose `param` null also becomes "").
 */
export function relayError(
  message: string,
  code: string,
  requestId?: string,
  type = 'new_api_error',
  param = '',
): OpenAIErrorBody {
  const text = requestId === undefined ? message : withRequestId(message, requestId);
  return { error: { message: text, type, param, code } };
}

/** Relay errors on /v1/messages: gateway-generated ones carry type new_api_error and the suffix. */
export function claudeRelayError(message: string, requestId?: string, type = 'new_api_error'): ClaudeErrorBody {
  const text = requestId === undefined ? message : withRequestId(message, requestId);
  return { type: 'error', error: { type, message: text } };
}

/** Anthropic's own error body, as relayed unchanged from a native Claude upstream. */
export function anthropicError(type: string, message: string, requestId: string): ClaudeErrorBody {
  return { type: 'error', error: { type, message }, request_id: requestId };
}

/** Task (video) routes: no request-id suffix. */
export function taskError(code: string, message: string): TaskErrorBody {
  return { code, message, data: null };
}

/** new-api's answer to any unknown path: 404, no suffix, `invalid_request_error`. */
export function notFoundError(method: string, path: string): OpenAIErrorBody {
  return relayError(`Invalid URL (${method} ${path})`, '', undefined, 'invalid_request_error');
}

/** 501 for /v1/files*, /v1/fine-tunes* and /v1/images/variations. */
export function notImplementedError(): OpenAIErrorBody {
  return relayError('API not implemented', 'api_not_implemented');
}

/** GET /v1/models/{id} for an unknown id: sent with HTTP 200. */
export function unknownModelError(modelId: string): OpenAIErrorBody {
  return relayError(
    `The model '${modelId}' does not exist`,
    'model_not_found',
    undefined,
    'invalid_request_error',
    'model',
  );
}

/** Zhipu GLM: `code` is a string. */
export function glmError(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

/** Zhipu answers a zero balance with HTTP 429, not 402/403. */
export const GLM_INSUFFICIENT_BALANCE = {
  status: 429,
  body: glmError('1113', '余额不足或无可用资源包,请充值。'),
} as const;

export const GLM_RATE_LIMITED = {
  status: 429,
  body: glmError('1302', 'Rate limit reached for requests'),
} as const;

/** Moonshot Kimi. */
export function kimiError(type: string, message: string): { error: { type: string; message: string } } {
  return { error: { type, message } };
}

/**
 * Kimi's answer to an account without balance. The notes (§9.5) list both 403 ("insufficient
 * balance", kimi.com help) and 429 `exceeded_current_quota_error`; Moonshot's own support quotes the
 * 429 form with this type and wording, so the double uses it (the account ids are left out).
 */
export const KIMI_INSUFFICIENT_BALANCE = {
  status: 429,
  body: kimiError(
    'exceeded_current_quota_error',
    'Your account is suspended, please check your plan and billing details',
  ),
} as const;

/** Kimi's search and search_pro entries: the upstream account is blocked (spec: Errors 3), so always 403. */
export const KIMI_SEARCH_BLOCKED = {
  status: 403,
  body: kimiError(
    'permission_denied_error',
    'Search is currently unavailable: the upstream Kimi account behind this gateway is blocked (HTTP 403 from upstream).',
  ),
} as const;

/** songquanpeng/one-api middleware errors: no `code`, type one_api_error. */
export function oneApiMiddlewareError(
  message: string,
  requestId: string,
): { error: { message: string; type: 'one_api_error' } } {
  return { error: { message: withRequestId(message, requestId), type: 'one_api_error' } };
}

/** songquanpeng/one-api relay errors, e.g. ('user quota is not enough', 'insufficient_user_quota') with 403. */
export function oneApiRelayError(message: string, code: string): OpenAIErrorBody {
  return relayError(message, code, undefined, 'one_api_error');
}

/** one-api's wording for a model the group has no channel for (503). */
export function oneApiNoChannelMessage(group: string, model: string): string {
  return `当前分组 ${group} 下对于模型 ${model} 无可用渠道`;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Not Allowed',
  413: 'Request Entity Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Temporarily Unavailable',
  504: 'Gateway Time-out',
};

/** The page a fronting nginx sends when it, not the gateway, answers (e.g. 502, 504, 413). */
export function htmlErrorPage(status: number, server = 'nginx'): string {
  const title = `${status} ${STATUS_TEXT[status] ?? 'Error'}`;
  return (
    `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n` +
    `<center><h1>${title}</h1></center>\r\n<hr><center>${server}</center>\r\n</body>\r\n</html>\r\n`
  );
}

/** A plain-text body from a proxy layer, for clients that assume every error body is JSON. */
export function notJsonBody(): string {
  return 'upstream connect error or disconnect/reset before headers. reset reason: connection termination';
}

/** OpenAI's own 500 as new-api relays it (param null → ""); also what a mid-stream upstream failure carries. */
export function upstreamServerError(): OpenAIErrorBody {
  return relayError(
    'The server had an error while processing your request. Sorry about that!',
    'server_error',
    undefined,
    'server_error',
  );
}

/** Anthropic's overload error object, in-band (`event: error`) or as a relayed 529 body. */
export const OVERLOADED_ERROR = { type: 'overloaded_error', message: 'Overloaded' } as const;
