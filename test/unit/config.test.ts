import * as assert from 'node:assert/strict';
import { checkApiKey, Endpoints, isLoopbackHost, maskKey, normaliseBaseUrl } from '../../src/core/config';
import { isGatewayError } from '../../src/core/errors';

describe('base address rule', () => {
  const cases: Array<[string, string, RegExp | null]> = [
    ['https://gw.example.com', 'https://gw.example.com', null],
    ['https://gw.example.com/', 'https://gw.example.com', /trailing "\/"/],
    ['https://gw.example.com/v1', 'https://gw.example.com', /trailing "\/v1"/],
    ['https://gw.example.com/v1/', 'https://gw.example.com', /trailing "\/v1"/],
    ['https://gw.example.com/v1/chat/completions', 'https://gw.example.com', /endpoint path "\/v1\/chat\/completions"/],
    ['https://gw.example.com/v1/messages', 'https://gw.example.com', /endpoint path/],
    ['https://gw.example.com/v1/responses/', 'https://gw.example.com', /endpoint path/],
    ['https://gw.example.com/providers/glm/api/paas/v4/web_search', 'https://gw.example.com', /endpoint path/],
    ['https://example.com/gateway/v1', 'https://example.com/gateway', /trailing "\/v1"/],
    ['  https://gw.example.com  ', 'https://gw.example.com', /spaces/],
    ['gw.example.com', 'https://gw.example.com', /added "https:\/\/"/],
    ['https://gw.example.com/?x=1#y', 'https://gw.example.com', /removed "\?x=1#y"/],
    ['http://127.0.0.1:8080/v1/models', 'http://127.0.0.1:8080', /endpoint path/],
  ];
  for (const [input, base, change] of cases) {
    it(`normalises ${JSON.stringify(input)}`, () => {
      const result = normaliseBaseUrl(input);
      assert.equal(result.base, base);
      if (change) assert.match(result.changes.join('; '), change);
      else assert.deepEqual(result.changes, []);
    });
  }

  it('keeps a path prefix and never adds a plan suffix', () => {
    const e = new Endpoints(normaliseBaseUrl('https://example.com/gw/').base);
    assert.equal(e.chatCompletions, 'https://example.com/gw/v1/chat/completions');
    assert.equal(e.responses, 'https://example.com/gw/v1/responses');
    assert.equal(e.messages, 'https://example.com/gw/v1/messages');
    assert.equal(e.models, 'https://example.com/gw/v1/models');
    assert.equal(e.glm('/files/parser/sync'), 'https://example.com/gw/providers/glm/api/paas/v4/files/parser/sync');
    assert.equal(e.kimi('tools/search'), 'https://example.com/gw/providers/kimi/v1/tools/search');
    assert.equal(e.videoTask('task_a/b'), 'https://example.com/gw/v1/video/generations/task_a%2Fb');
  });

  it('refuses what cannot be a base address', () => {
    for (const bad of ['', '   ', 'ftp://gw.example.com', 'https://user:pw@gw.example.com', 'https://']) {
      assert.throws(
        () => normaliseBaseUrl(bad),
        (e: unknown) => isGatewayError(e, 'badRequest'),
        bad,
      );
    }
  });
});

describe('plain http:// only to this computer', () => {
  const loopback = [
    'http://localhost:8080',
    'HTTP://LOCALHOST:8080/v1',
    'http://127.0.0.1:3000',
    'http://127.1:3000',
    'http://127.255.255.254',
    'http://0x7f.1',
    'http://2130706433',
    'http://[::1]:8080',
    'http://[0:0:0:0:0:0:0:1]',
    'http://[::ffff:127.0.0.1]',
  ];
  for (const url of loopback) {
    it(`accepts ${url}`, () => {
      assert.equal(normaliseBaseUrl(url).base.startsWith('http://'), true);
    });
  }

  const remote = [
    'http://gw.example.com',
    'HTTP://GW.EXAMPLE.COM/v1',
    'Http://gw.example.com:80',
    'http://0.0.0.0:8080',
    'http://[::]:8080',
    'http://localhost.',
    'http://localhost.:8080',
    'http://api.localhost',
    'http://localhost.example.com',
    'http://127.0.0.1.nip.io',
    'http://128.0.0.1',
    'http://192.168.1.10:3000',
    'http://10.0.0.1',
    'http://[::ffff:10.0.0.1]',
    'http://[::2]',
  ];
  for (const url of remote) {
    it(`refuses ${url} with the reason`, () => {
      assert.throws(
        () => normaliseBaseUrl(url),
        (e: unknown) => isGatewayError(e, 'badRequest') && /plain http:\/\/.*unencrypted/.test(e.message),
        url,
      );
    });
  }

  it('refuses user info in the address, which could disguise the host', () => {
    for (const url of [
      'http://localhost@gw.example.com',
      'http://user@127.0.0.1:8080',
      'https://127.0.0.1:x@gw.example.com',
    ]) {
      assert.throws(
        () => normaliseBaseUrl(url),
        (e: unknown) => isGatewayError(e, 'badRequest'),
        url,
      );
    }
    // The host after "@" decides where the request goes: never treated as loopback.
    assert.throws(() => normaliseBaseUrl('http://localhost@gw.example.com'), /plain http|user name/);
  });

  it('keeps https:// to any host, and an address without a scheme becomes https://', () => {
    assert.equal(normaliseBaseUrl('HTTPS://GW.Example.com').base, 'https://gw.example.com');
    assert.equal(normaliseBaseUrl('192.168.1.10:3000').base, 'https://192.168.1.10:3000');
  });

  it('knows loopback host names in their canonical form', () => {
    assert.equal(isLoopbackHost('localhost'), true);
    assert.equal(isLoopbackHost('127.0.0.1'), true);
    assert.equal(isLoopbackHost('[::1]'), true);
    assert.equal(isLoopbackHost('[::ffff:7f00:1]'), true);
    assert.equal(isLoopbackHost('0.0.0.0'), false);
    assert.equal(isLoopbackHost('localhost.'), false);
    assert.equal(isLoopbackHost('[::ffff:a00:1]'), false);
  });
});

describe('API key checks', () => {
  const key = `sk-${'a1B2c3D4'.repeat(6)}`;

  it('accepts a key as copied and trims only the outer whitespace', () => {
    assert.deepEqual(checkApiKey(key), { ok: true, key, trimmed: false });
    assert.deepEqual(checkApiKey(`  ${key}\n`), { ok: true, key, trimmed: true });
  });

  it('accepts keys without the sk- prefix unchanged (nothing is prepended)', () => {
    assert.deepEqual(checkApiKey('abcdef0123456789'), { ok: true, key: 'abcdef0123456789', trimmed: false });
  });

  const refusals: Array<[string, string, RegExp]> = [
    ['empty', '   ', /empty/],
    ['Bearer prefix', `Bearer ${key}`, /without "Bearer"/],
    ['lower-case bearer', `bearer ${key}`, /without "Bearer"/],
    ['inner space', `${key.slice(0, 10)} ${key.slice(10)}`, /space inside/],
    ['line break', `${key.slice(0, 10)}\n${key.slice(10)}`, /line break/],
    ['two keys joined', `${key}${key}`, /two keys/],
    ['two keys with comma', `${key},sk-other`, /two keys/],
    ['non-ASCII', `${key}é`, /non-ASCII/],
  ];
  for (const [name, raw, reason] of refusals) {
    it(`refuses a key with ${name}`, () => {
      const result = checkApiKey(raw);
      assert.equal(result.ok, false);
      if (!result.ok) assert.match(result.reason, reason);
    });
  }

  it('masks all but the last four characters', () => {
    assert.equal(maskKey(key), `••••${key.slice(-4)}`);
    assert.ok(!maskKey(key).includes(key.slice(0, 8)));
    assert.equal(maskKey('short'), '••••');
  });
});
