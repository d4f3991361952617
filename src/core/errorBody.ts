import { ErrorKind, GatewayError } from './errors';
import { isRecord } from '../shared/isRecord';
import { say, words, type Said, type Words } from '../shared/words';
import { CONCURRENCY_CODE, parseRetryAfter, rateLimited } from './rateLimits';

/** Where a response came from, so the same status can be explained in the right words. */
export interface ErrorContext {
  status: number;
  body: string;
  requestIdHeader?: string;
  retryAfterHeader?: string;
  contentType?: string;
  /** `gateway` for /v1 routes, `glm` / `kimi` for the provider tool paths. */
  route?: 'gateway' | 'glm' | 'kimi';
  model?: string;
}

interface Extracted {
  /** The body was a JSON object (the gateway's own error), not HTML or text. */
  json?: boolean;
  message?: string;
  /** What `message` was worded from when it describes a body that said nothing readable. */
  described?: Words;
  code?: string;
  type?: string;
  requestId?: string;
}

const PROTOCOL_REFUSED = /does not support api ?type/i;
/** new-api's refusals of the request's content: its sensitive-word filter and an upstream's blocked prompt. */
const CONTENT_CODES = new Set(['prompt_blocked', 'sensitive_words_detected']);
const CONTENT_WORDS = /sensitive words? detected|敏感词|prompt (was )?blocked/i;
/** The code new-api answers a key's concurrency limit with (HTTP 429); forks say it in words only. */
const REQUEST_ID_SUFFIX = /\s*\(request id: ([^)]+)\)\s*$/i;

/**
 * Reads every error body shape the gateway and its providers are known to send (OpenAI-style
 * `{error: {message, type, code}}`, Anthropic-style `{type: "error", error}`, new-api's `{success,
 * message}` and task envelopes, GLM's and Kimi's business codes) and returns one GatewayError with
 * a message the user can act on.
 */
export function errorFromResponse(ctx: ErrorContext): GatewayError {
  const extracted = extract(ctx.body);
  let upstream = extracted.message?.trim();
  let requestId = ctx.requestIdHeader || extracted.requestId;
  const suffix = upstream ? REQUEST_ID_SUFFIX.exec(upstream) : null;
  if (upstream && suffix) {
    requestId = requestId || suffix[1];
    upstream = upstream.slice(0, suffix.index).trim();
  }
  const code = extracted.code;
  const retryAfterMs = parseRetryAfter(ctx.retryAfterHeader);
  const init = {
    status: ctx.status,
    code,
    requestId,
    detail: upstream,
    retryAfterMs,
    ...(extracted.json ? { jsonBody: true } : {}),
  };
  const kind = classify(ctx, extracted, upstream ?? '');
  return new GatewayError(kind, explain(kind, ctx, extracted, upstream), init);
}

/** A message of ours about a body that said nothing readable: worded now for the checks, kept as words. */
function described(about: Words): Extracted {
  return { message: say(about), described: about };
}

function extract(body: string): Extracted {
  const text = body.trim();
  if (!text) return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return described(describeNonJson(text));
  }
  if (!isRecord(json)) return described(describeNonJson(text));
  const requestId = str(json.request_id);
  const err = json.error;
  if (isRecord(err)) {
    // OpenAI / new-api middleware / Messages (`{type:"error",error:{...}}`) / GLM / Kimi all nest here.
    return { json: true, message: str(err.message), code: str(err.code), type: str(err.type), requestId };
  }
  if (typeof err === 'string') return { json: true, message: err, requestId };
  // Task envelope `{code,message,data}` and DashScope `{code,message,request_id}`.
  if ('code' in json || 'message' in json) {
    const code = str(json.code);
    return { json: true, message: str(json.message) || code, code, requestId };
  }
  if (typeof json.detail === 'string') return { json: true, message: json.detail, requestId };
  return { ...described(words('an error body the extension does not recognise: {0}', truncate(text, 200))), requestId };
}

function describeNonJson(text: string): Words {
  if (/^<(!doctype|html|\?xml|head|body)/i.test(text)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
    return title
      ? words(
          'an HTML page titled "{0}" instead of JSON (a proxy or web server in front of the gateway answered)',
          title,
        )
      : words('an HTML page instead of JSON (a proxy or web server in front of the gateway answered)');
  }
  return words('a body that is not JSON: "{0}"', truncate(text.replace(/\s+/g, ' '), 160));
}

function classify(ctx: ErrorContext, e: Extracted, message: string): ErrorKind {
  const code = (e.code ?? '').toLowerCase();
  const type = (e.type ?? '').toLowerCase();
  const m = message.toLowerCase();

  // Refused for what the request says: sending it again, here or elsewhere, meets the same filter.
  if (CONTENT_CODES.has(code) || CONTENT_WORDS.test(message)) return 'contentRefused';
  if (code === CONCURRENCY_CODE) return 'rateLimited';

  if (code === 'convert_request_failed' || code === 'api_not_implemented' || ctx.status === 501)
    return 'notImplemented';
  // An upstream that refuses the protocol for the model, relayed by new-api (e.g. "Model x does not support apiType:openai.responses parameter").
  if (PROTOCOL_REFUSED.test(message)) return 'notImplemented';
  // A 400 model_not_found is a model the key has but this endpoint does not serve (e.g. an image
  // model sent as the outer Responses model): a bad request, not a missing grant.
  if (
    (code === 'model_not_found' && ctx.status !== 400) ||
    /no available channel|无可用渠道|has no access to (the )?model|无权访问模型/i.test(message)
  ) {
    return 'modelUnavailable';
  }
  if (
    ['insufficient_user_quota', 'pre_consume_token_quota_failed'].includes(code) ||
    /额度不足|quota is not enough|预扣费额度失败/i.test(message)
  ) {
    return 'quota';
  }
  // GLM business codes are strings; an exhausted balance arrives as HTTP 429 (code 1113).
  if (
    code === '1113' ||
    code === '1110' ||
    code === '1111' ||
    code === '1112' ||
    /余额不足|insufficient balance|no resource package|suspended due to insufficient/i.test(message)
  ) {
    return 'upstreamBalance';
  }
  if (type === 'exceeded_current_quota_error' || type === 'billing_error' || ctx.status === 402)
    return 'upstreamBalance';
  if (['1000', '1001', '1002', '1003', '1004'].includes(code)) return 'auth';
  if (code === '1211') return 'modelUnavailable';
  if (['1302', '1303', '1304', '1305'].includes(code)) return 'rateLimited';
  if (ctx.status === 413 || type === 'request_too_large' || /too large|exceeds? (the )?(maximum|limit)/i.test(m))
    return 'tooLarge';
  if (
    ctx.status === 401 ||
    type === 'authentication_error' ||
    type.includes('authentication') ||
    type === 'incorrect_api_key_error'
  )
    return 'auth';
  if (ctx.status === 403) {
    if (ctx.route === 'glm' || ctx.route === 'kimi' || type === 'permission_denied_error') return 'upstreamBlocked';
    return 'auth';
  }
  if (ctx.status === 429) return 'rateLimited';
  if (ctx.status === 408 || ctx.status === 504 || type === 'timeout_error') return 'timeout';
  if (ctx.status === 529 || type === 'overloaded_error') return 'server';
  if (code === 'invalid_request' || (ctx.status >= 400 && ctx.status < 500)) return 'badRequest';
  if (ctx.status >= 500) return 'server';
  return 'protocol';
}

function explain(kind: ErrorKind, ctx: ErrorContext, e: Extracted, upstream: string | undefined): Words {
  const said = gatewaySaid(e.described ?? upstream);
  const who = answeredBy(ctx.route);
  const Who = answeredBy(ctx.route, true);
  const status = String(ctx.status);
  switch (kind) {
    case 'auth':
    case 'quota':
      return refusedKey(kind, ctx, said);
    case 'modelUnavailable':
      return modelUnavailable(ctx, upstream, said);
    case 'rateLimited':
      return rateLimited(ctx.status, e.code, ctx.retryAfterHeader, upstream, said);
    case 'upstreamBalance':
      return words(
        "{0} reports that its upstream account has no balance ({1}HTTP {2}).{3} This is not your key's quota: the gateway's operator has to top up that provider. Try a model or tool of another provider meanwhile.",
        Who,
        e.code ? words('code {0}, ', e.code) : '',
        status,
        said,
      );
    case 'contentRefused':
      return words(
        'The gateway refused this content (HTTP {0}).{1} It was not sent again: change the wording or leave out what was flagged, then send it yourself.',
        status,
        said,
      );
    case 'upstreamBlocked':
      return words(
        "{0} refused the request (HTTP 403): its upstream account is blocked or not permitted.{1} Use the other provider's tool instead.",
        Who,
        said,
      );
    case 'tooLarge':
      return words(
        'The request is too large for {0} (HTTP {1}).{2} The limit is 20 MiB per request, including the form itself.',
        who,
        status,
        said,
      );
    case 'notImplemented':
      if ((e.code ?? '') === 'convert_request_failed' || PROTOCOL_REFUSED.test(upstream ?? '')) {
        return words(
          "This model's channel does not support the requested protocol.{0} Use the Chat Completions protocol for this model.",
          said,
        );
      }
      return words('{0} does not offer this endpoint (HTTP {1}).{2}', Who, status, said);
    case 'timeout':
      return words(
        '{0} timed out (HTTP {1}).{2} Try again; for long image or video work raise the timeout in the settings.',
        Who,
        status,
        said,
      );
    case 'badRequest':
      if (/not supported with the Responses API/i.test(upstream ?? '')) {
        return words(
          'This model cannot be the outer model of a Responses request.{0} Pick a chat model, and pass an image model in the image_generation tool instead.',
          said,
        );
      }
      return words('{0} rejected the request as invalid (HTTP {1}).{2}', Who, status, said);
    case 'server':
      return words('{0} had an internal error (HTTP {1}).{2} Try again later.', Who, status, said);
    default:
      return upstream
        ? words('{0} answered HTTP {1} with {2}.', Who, status, e.described ?? upstream)
        : words('{0} answered HTTP {1} with an empty body.', Who, status);
  }
}

/** The gateway's own words, shown as they came (often Chinese already), never translated. */
function gatewaySaid(upstream: Said | undefined): Said {
  if (!upstream) return '';
  if (typeof upstream !== 'string') return words(' The gateway said: {0}', words('{0}.', upstream));
  const ended = /[.!?。！？]$/.test(upstream)
    ? upstream
    : `${upstream}${/[\u3400-\u9fff]/.test(upstream) ? '。' : '.'}`;
  return words(' The gateway said: {0}', ended);
}

/** Who answered: the gateway, or the provider whose own route was asked; `start`: at the start of a sentence. */
function answeredBy(route: ErrorContext['route'], start = false): Words {
  if (route === 'glm') return words('GLM (Zhipu)');
  if (route === 'kimi') return words('Kimi (Moonshot)');
  return start ? words('The gateway') : words('the gateway');
}

/** The key itself was refused (HTTP 401/403) or its quota is not enough. */
function refusedKey(kind: 'auth' | 'quota', ctx: ErrorContext, said: Said): Words {
  if (kind === 'auth')
    return ctx.status === 403
      ? words(
          'The gateway refused this request for the key (HTTP 403).{0} Check that the key is enabled and allowed to use this feature.',
          said,
        )
      : words(
          'The API key was not accepted (HTTP {0}).{1} In the console, check that the key is enabled, not expired and has quota left; if it is, copy it again in full and run "Model Gateway: Set API Key".',
          String(ctx.status),
          said,
        );
  return words(
    "The key's quota is not enough for this request.{0} Nothing was charged: no automatic overdraft and no switch to another plan happens. Top up the account or ask an administrator to raise the key's quota.",
    said,
  );
}

/** A model the key's group has no grant (or no channel) for: named with the group when the gateway says which. */
function modelUnavailable(ctx: ErrorContext, upstream: string | undefined, said: Said): Words {
  const english = /model (\S+) under group (\S+)/i.exec(upstream ?? '');
  const chinese = english ? undefined : /分组 (\S+) 下模型 (\S+) 无可用渠道/.exec(upstream ?? '');
  const named = english ? [english[1], english[2]] : chinese ? [chinese[2], chinese[1]] : undefined;
  if (named) {
    return words(
      'The model {0} is not granted to this key\'s group "{1}". An administrator must confirm the grant for that group; until then pick another model.',
      named[0] ?? '',
      named[1] ?? '',
    );
  }
  return ctx.model
    ? words(
        "The model {0} is not available to this key.{1} An administrator must confirm the grant for the key's group; until then pick another model.",
        ctx.model,
        said,
      )
    : words(
        "The model is not available to this key.{0} An administrator must confirm the grant for the key's group; until then pick another model.",
        said,
      );
}

function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v || undefined;
  if (typeof v === 'number') return String(v);
  return undefined;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** HTTP status that an error `type` stands for, for errors that arrive inside a 200 stream. */
const STATUS_FOR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  api_error: 500,
  server_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
  [CONCURRENCY_CODE]: 429,
  prompt_blocked: 400,
  sensitive_words_detected: 400,
};

/**
 * An error object that arrived inside a stream (`data: {"error":{...}}`, a Messages `error` event,
 * a Responses `error` or `response.failed` event). There is no HTTP status to go by, so the
 * error's own type or code stands in for one.
 */
export function errorFromStreamPayload(error: unknown, route: ErrorContext['route'] = 'gateway'): GatewayError {
  const e =
    typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : { message: String(error) };
  const type = typeof e.type === 'string' ? e.type : undefined;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const byName =
    (type !== undefined ? STATUS_FOR_TYPE[type] : undefined) ??
    (code !== undefined ? STATUS_FOR_TYPE[code] : undefined);
  const status = byName ?? (typeof e.code === 'number' && e.code >= 400 ? e.code : 500);
  const made = errorFromResponse({ status, body: JSON.stringify({ error: e }), route });
  return new GatewayError(made.kind, words('The answer stopped with an error. {0}', made.said), {
    status: made.status,
    code: made.code,
    requestId: made.requestId,
    detail: made.detail,
  });
}

/** Keys an error-only body may carry besides its error (`{type:"error",error}`, new-api's `{success:false,message}`). */
const ERROR_ONLY_KEYS = new Set(['error', 'type', 'request_id', 'success', 'message', 'code', 'param', 'data']);

/**
 * An answer with HTTP 200 whose body is an error and nothing else: new-api sends some errors this
 * way (`model_not_found` on a model lookup, billing endpoints), and a relayed upstream may too. A
 * body that also carries an answer (a Responses object with `error: null`, a failed video task
 * with its `error`) is not one. There is no real status to go by, so the error's type or code
 * stands in for one; the GatewayError keeps the 200 the gateway sent.
 */
export function errorInOkBody(
  json: unknown,
  ctx: Omit<ErrorContext, 'status' | 'body'> & { body?: string },
): GatewayError | undefined {
  if (!isRecord(json)) return undefined;
  const keys = Object.keys(json);
  if (!keys.every((k) => ERROR_ONLY_KEYS.has(k))) return undefined;
  if (json.data !== undefined && json.data !== null) return undefined;
  if (json.type !== undefined && json.type !== 'error') return undefined;
  const err = json.error;
  const hasError =
    (isRecord(err) && (str(err.message) !== undefined || str(err.code) !== undefined)) ||
    (typeof err === 'string' && err.trim() !== '');
  const failed = json.success === false && str(json.message) !== undefined;
  if (!hasError && !failed) return undefined;
  const e = isRecord(err) ? err : {};
  const type = str(e.type);
  const code = str(e.code) ?? str(json.code);
  const implied =
    code === 'model_not_found'
      ? 404
      : ((type !== undefined ? STATUS_FOR_TYPE[type] : undefined) ??
        (code !== undefined ? STATUS_FOR_TYPE[code] : undefined) ??
        400);
  const made = errorFromResponse({ ...ctx, status: implied, body: ctx.body ?? JSON.stringify(json) });
  return new GatewayError(made.kind, made.said, {
    status: 200,
    code: made.code,
    requestId: made.requestId,
    detail: made.detail,
    retryAfterMs: made.retryAfterMs,
  });
}
