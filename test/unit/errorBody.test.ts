import * as assert from 'node:assert/strict';
import { errorFromResponse } from '../../src/core/errorBody';
import { parseRetryAfter } from '../../src/core/rateLimits';
import type { ErrorKind } from '../../src/core/errors';

/** Bodies copied from the research notes' shapes (§1.3, §3.5, §6.7, §7, §8.6, §9.5). */
interface Case {
  name: string;
  status: number;
  body: string;
  kind: ErrorKind;
  message: RegExp;
  route?: 'gateway' | 'glm' | 'kimi';
  requestId?: string;
  code?: string;
  header?: string;
  retryAfter?: string;
}

const RID = '2026061208301512345678901a2b3c4dAbCdEfGh';
const cases: Case[] = [
  {
    name: 'middleware invalid token (no param key)',
    status: 401,
    body: `{"error":{"message":"Invalid token (request id: ${RID})","type":"new_api_error","code":""}}`,
    kind: 'auth',
    message: /not accepted.*Invalid token.*Set API Key/s,
    requestId: RID,
  },
  {
    name: 'user quota (Chinese only, 403)',
    status: 403,
    body: `{"error":{"message":"用户额度不足, 剩余额度: ＄0.000000 (request id: ${RID})","type":"new_api_error","param":"","code":"insufficient_user_quota"}}`,
    kind: 'quota',
    message: /no automatic overdraft and no switch to another plan/,
    requestId: RID,
    code: 'insufficient_user_quota',
  },
  {
    name: 'token quota pre-consume',
    status: 403,
    body: '{"error":{"message":"token quota is not enough, token remain quota: ＄0.001000, need quota: ＄0.002000","type":"new_api_error","param":"","code":"pre_consume_token_quota_failed"}}',
    kind: 'quota',
    message: /quota is not enough/,
  },
  {
    name: 'no channel for model in group (503)',
    status: 503,
    body: `{"error":{"message":"No available channel for model qwen-max under group default (distributor) (request id: ${RID})","type":"new_api_error","code":"model_not_found"}}`,
    kind: 'modelUnavailable',
    message: /qwen-max is not granted to this key's group "default".*administrator must confirm the grant/,
    requestId: RID,
  },
  {
    name: 'no channel, Chinese text',
    status: 503,
    body: '{"error":{"message":"分组 vip 下模型 glm-4.6 无可用渠道（distributor）","type":"new_api_error","code":"model_not_found"}}',
    kind: 'modelUnavailable',
    message: /glm-4\.6 is not granted to this key's group "vip"/,
  },
  {
    name: 'OpenAI-style relayed upstream error',
    status: 400,
    body: '{"error":{"message":"Invalid value: \'1000x1000\'.","type":"invalid_request_error","param":"size","code":"invalid_value"}}',
    kind: 'badRequest',
    message: /rejected the request as invalid.*1000x1000/,
  },
  {
    name: 'validation error inside relay (HTTP 500, invalid_request)',
    status: 500,
    body: `{"error":{"message":"input is required (request id: ${RID})","type":"new_api_error","param":"","code":"invalid_request"}}`,
    kind: 'badRequest',
    message: /input is required/,
  },
  {
    name: 'Responses on an unsupported channel',
    status: 500,
    body: '{"error":{"message":"not implemented","type":"new_api_error","param":"","code":"convert_request_failed"}}',
    kind: 'notImplemented',
    message: /Chat Completions protocol/,
  },
  {
    name: 'Messages-route relay error',
    status: 529,
    body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011"}',
    kind: 'server',
    message: /Overloaded/,
    requestId: 'req_011',
  },
  {
    name: 'Messages-route authentication error',
    status: 401,
    body: '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    kind: 'auth',
    message: /invalid x-api-key/,
  },
  {
    name: 'task envelope',
    status: 400,
    body: '{"code":"invalid_size","message":"invalid size: 1280*720","data":null}',
    kind: 'badRequest',
    message: /invalid size: 1280\*720/,
    code: 'invalid_size',
  },
  {
    name: 'task envelope quota',
    status: 403,
    body: '{"code":"insufficient_user_quota","message":"用户额度不足, 剩余额度: ＄0.000000","data":null}',
    kind: 'quota',
    message: /quota is not enough/,
  },
  {
    name: 'GLM balance 1113 arriving as HTTP 429',
    status: 429,
    body: '{"error":{"code":"1113","message":"余额不足或无可用资源包,请充值。"}}',
    kind: 'upstreamBalance',
    message: /GLM \(Zhipu\) reports that its upstream account has no balance.*code 1113/,
    route: 'glm',
    code: '1113',
  },
  {
    name: 'GLM rate limit 1302',
    status: 429,
    body: '{"error":{"code":"1302","message":"Rate limit reached for requests"}}',
    kind: 'rateLimited',
    message: /Rate limit reached/,
    route: 'glm',
  },
  {
    name: 'Kimi blocked search (403)',
    status: 403,
    body: '{"error":{"type":"permission_denied_error","message":"account blocked"}}',
    kind: 'upstreamBlocked',
    message: /Kimi \(Moonshot\) refused.*blocked/,
    route: 'kimi',
  },
  {
    name: 'Kimi insufficient balance',
    status: 429,
    body: '{"error":{"type":"exceeded_current_quota_error","message":"Your account is suspended due to insufficient balance"}}',
    kind: 'upstreamBalance',
    message: /no balance/,
    route: 'kimi',
  },
  {
    name: 'empty 429 body (in-memory rate limiter)',
    status: 429,
    body: '',
    kind: 'rateLimited',
    message: /HTTP 429 .*no details.*Try again in 3 s/,
    retryAfter: '3',
  },
  {
    name: 'HTML error page from a fronting proxy',
    status: 502,
    body: '<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>',
    kind: 'server',
    message: /HTML page titled "502 Bad Gateway"/,
  },
  {
    name: 'body that is not JSON',
    status: 500,
    body: 'upstream connect error or disconnect/reset before headers',
    kind: 'server',
    message: /not JSON: "upstream connect error/,
  },
  {
    name: 'body too large',
    status: 413,
    body: '{"error":{"message":"request body too large","type":"new_api_error","param":"","code":"read_request_body_failed"}}',
    kind: 'tooLarge',
    message: /20 MiB/,
  },
  {
    name: 'files API not implemented (501)',
    status: 501,
    body: '{"error":{"message":"API not implemented","type":"new_api_error","param":"","code":"api_not_implemented"}}',
    kind: 'notImplemented',
    message: /does not offer this endpoint/,
  },
  {
    name: 'unknown model at GET /v1/models/{id} answered with HTTP 200',
    status: 200,
    body: '{"error":{"message":"The model \'x\' does not exist","type":"invalid_request_error","param":"model","code":"model_not_found"}}',
    kind: 'modelUnavailable',
    message: /not available to this key/,
  },
  {
    name: 'one-api middleware (no code)',
    status: 401,
    body: '{"error":{"message":"无效的令牌 (request id: 2024)","type":"one_api_error"}}',
    kind: 'auth',
    message: /无效的令牌/,
    requestId: '2024',
  },
  {
    name: 'request id from the header wins',
    status: 401,
    body: '{"error":{"message":"Invalid token (request id: from-body)","type":"new_api_error","code":""}}',
    kind: 'auth',
    message: /Invalid token/,
    header: 'from-header',
    requestId: 'from-header',
  },
];

describe('error bodies', () => {
  for (const c of cases) {
    it(c.name, () => {
      const err = errorFromResponse({
        status: c.status,
        body: c.body,
        route: c.route,
        requestIdHeader: c.header,
        retryAfterHeader: c.retryAfter,
      });
      assert.equal(err.kind, c.kind);
      assert.match(err.message, c.message);
      assert.ok(!/\(request id:/.test(err.detail ?? ''), 'the suffix is moved out of the message');
      if (c.requestId) assert.equal(err.requestId, c.requestId);
      if (c.code) assert.equal(err.code, c.code);
      assert.equal(err.status, c.status);
    });
  }

  it('puts the request id into describe()', () => {
    const err = errorFromResponse({ status: 401, body: '', requestIdHeader: 'abc' });
    assert.match(err.describe(), /\(request id: abc\)$/);
  });

  it('reads Retry-After as seconds or as a date', () => {
    assert.equal(parseRetryAfter('2'), 2000);
    assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 4_000), 6000);
    assert.equal(parseRetryAfter('soon'), undefined);
    assert.equal(parseRetryAfter(undefined), undefined);
  });
});

describe('model errors by status', () => {
  it('a 400 model_not_found from the Responses API is a bad request with the image-tool hint', () => {
    const err = errorFromResponse({
      status: 400,
      body: '{"error":{"message":"The requested model \'gpt-image-1\' is not supported with the Responses API.","type":"invalid_request_error","param":"model","code":"model_not_found"}}',
    });
    assert.equal(err.kind, 'badRequest');
    assert.match(err.message, /image_generation tool/);
  });
});
