import * as assert from 'node:assert/strict';
import { bypasses, redactProxy, resolveProxy, routeFor, type ProxySettings } from '../../src/core/proxy';

const base: ProxySettings = {
  mode: 'inherit',
  support: 'override',
  authorization: '',
  proxyUrl: '',
  strictSSL: true,
  noProxy: [],
  env: {},
};
const u = (s: string) => new URL(s);

describe('proxy resolution', () => {
  it('prefers VS Code http.proxy over the environment', () => {
    assert.equal(
      resolveProxy(u('https://gw.example.com'), {
        ...base,
        proxyUrl: 'http://vs:3128',
        env: { HTTPS_PROXY: 'http://env:1' },
      }),
      'http://vs:3128',
    );
  });
  it('uses HTTPS_PROXY for https and HTTP_PROXY for http, with scheme added', () => {
    const env = { HTTPS_PROXY: 'secure:8443', HTTP_PROXY: 'http://plain:8080' };
    assert.equal(resolveProxy(u('https://gw.example.com'), { ...base, env }), 'http://secure:8443');
    assert.equal(resolveProxy(u('http://gw.example.com'), { ...base, env }), 'http://plain:8080');
    assert.equal(
      resolveProxy(u('https://gw.example.com'), { ...base, env: { http_proxy: 'http://lower:1' } }),
      'http://lower:1',
    );
  });
  it('connects directly when mode is off or nothing is configured', () => {
    assert.equal(
      resolveProxy(u('https://gw.example.com'), { ...base, mode: 'off', proxyUrl: 'http://vs:3128' }),
      undefined,
    );
    assert.equal(resolveProxy(u('https://gw.example.com'), base), undefined);
  });
  it('honours http.noProxy and NO_PROXY', () => {
    const s = {
      ...base,
      proxyUrl: 'http://vs:3128',
      noProxy: ['.internal.example'],
      env: { NO_PROXY: 'localhost,127.0.0.1,gw.example.com:8443' },
    };
    assert.equal(resolveProxy(u('https://a.internal.example'), s), undefined);
    assert.equal(resolveProxy(u('http://127.0.0.1:9000'), s), undefined);
    assert.equal(resolveProxy(u('https://gw.example.com:8443'), s), undefined);
    assert.equal(resolveProxy(u('https://gw.example.com'), s), 'http://vs:3128');
  });
  it('matches NO_PROXY entries the common ways', () => {
    assert.ok(bypasses(u('https://x.example.com'), ['*']));
    assert.ok(bypasses(u('https://x.example.com'), ['example.com']));
    assert.ok(bypasses(u('https://x.example.com'), ['*.example.com']));
    assert.ok(bypasses(u('https://example.com'), ['.example.com']));
    assert.ok(!bypasses(u('https://notexample.com'), ['example.com']));
    assert.ok(bypasses(u('http://[::1]:8080'), ['[::1]:8080']));
    assert.ok(!bypasses(u('https://example.com'), ['example.com:8443']));
  });
  it('matches address ranges (CIDR) in NO_PROXY for targets given as IP addresses', () => {
    assert.ok(bypasses(u('http://10.20.30.40:8080'), ['10.0.0.0/8']));
    assert.ok(bypasses(u('https://192.168.1.7'), ['example.com', '192.168.0.0/16']));
    assert.ok(!bypasses(u('https://192.169.1.7'), ['192.168.0.0/16']));
    assert.ok(bypasses(u('https://172.16.5.4'), ['172.16.0.0/12']));
    assert.ok(!bypasses(u('https://172.32.0.1'), ['172.16.0.0/12']));
    assert.ok(bypasses(u('http://[fd12:3456::1]:9000'), ['fd00::/8']));
    assert.ok(!bypasses(u('http://[fe80::1]'), ['fd00::/8']));
    assert.ok(bypasses(u('http://127.0.0.1:9000'), ['127.0.0.0/8']));
    // A host name is not resolved to match a range; a malformed range matches nothing.
    assert.ok(!bypasses(u('https://intranet.example.com'), ['10.0.0.0/8']));
    assert.ok(!bypasses(u('https://10.0.0.1'), ['10.0.0.0/33', '10.0.0/8', 'x/8']));
    const s: ProxySettings = { ...base, env: { HTTPS_PROXY: 'http://env:1', NO_PROXY: '10.0.0.0/8' } };
    assert.equal(resolveProxy(u('https://10.1.2.3'), s), undefined);
    assert.equal(resolveProxy(u('https://11.1.2.3'), s), 'http://env:1');
  });
  it("uses no proxy at all when VS Code's http.proxySupport is off", () => {
    const env = { HTTPS_PROXY: 'http://env:1', ALL_PROXY: 'http://all:2' };
    assert.equal(
      resolveProxy(u('https://gw.example.com'), { ...base, support: 'off', proxyUrl: 'http://vs:3128', env }),
      undefined,
    );
    assert.equal(resolveProxy(u('https://gw.example.com'), { ...base, support: 'off', env }), undefined);
    for (const support of ['on', 'fallback', 'override'] as const)
      assert.equal(resolveProxy(u('https://gw.example.com'), { ...base, support, env }), 'http://env:1');
  });
});

describe('connection routes', () => {
  const target = u('https://gw.example.com');
  const noTrust = { notes: [] };

  it('never relaxes certificate checks on a direct connection, whatever http.proxyStrictSSL says', async () => {
    const route = await routeFor(target, { ...base, strictSSL: false }, noTrust, 1000);
    assert.equal(route.proxy, undefined);
    assert.deepEqual(route.options, { connect: { timeout: 1000 } });
  });

  it('applies http.proxyStrictSSL to both TLS legs of a proxied connection', async () => {
    for (const strictSSL of [true, false]) {
      const route = await routeFor(target, { ...base, proxyUrl: 'http://vs:3128', strictSSL }, noTrust, 1000);
      const o = route.options as {
        uri: string;
        requestTls: { rejectUnauthorized: boolean };
        proxyTls: { rejectUnauthorized: boolean };
        token?: string;
      };
      assert.equal(o.uri, 'http://vs:3128');
      assert.equal(o.requestTls.rejectUnauthorized, strictSSL);
      assert.equal(o.proxyTls.rejectUnauthorized, strictSSL);
      assert.equal(o.token, undefined, 'no Proxy-Authorization unless set');
    }
  });

  it('sends http.proxyAuthorization as the proxy token only', async () => {
    const route = await routeFor(
      target,
      { ...base, proxyUrl: 'http://vs:3128', authorization: ' Basic YTpi ' },
      noTrust,
      1000,
    );
    assert.equal((route.options as { token?: string }).token, 'Basic YTpi');
    assert.ok(
      !('token' in (await routeFor(target, { ...base, authorization: 'Basic YTpi' }, noTrust, 1000)).options),
      'nothing without a proxy',
    );
  });

  it('hides proxy credentials in what it logs', () => {
    assert.equal(redactProxy('http://alice:s3cret@proxy.example:3128'), 'http://***@proxy.example:3128/');
    assert.equal(redactProxy('not a url'), 'a proxy');
  });
});
