import * as assert from 'node:assert/strict';
import { bypasses, resolveProxy, type ProxySettings } from '../../src/core/proxy';

const base: ProxySettings = { mode: 'inherit', support: 'override', authorization: '', proxyUrl: '', strictSSL: true, noProxy: [], env: {} };
const u = (s: string) => new URL(s);

describe('proxy resolution', () => {
  it('prefers VS Code http.proxy over the environment', () => {
    assert.equal(resolveProxy(u('https://gw.example.com'), { ...base, proxyUrl: 'http://vs:3128', env: { HTTPS_PROXY: 'http://env:1' } }), 'http://vs:3128');
  });
  it('uses HTTPS_PROXY for https and HTTP_PROXY for http, with scheme added', () => {
    const env = { HTTPS_PROXY: 'secure:8443', HTTP_PROXY: 'http://plain:8080' };
    assert.equal(resolveProxy(u('https://gw.example.com'), { ...base, env }), 'http://secure:8443');
    assert.equal(resolveProxy(u('http://gw.example.com'), { ...base, env }), 'http://plain:8080');
    assert.equal(resolveProxy(u('https://gw.example.com'), { ...base, env: { http_proxy: 'http://lower:1' } }), 'http://lower:1');
  });
  it('connects directly when mode is off or nothing is configured', () => {
    assert.equal(resolveProxy(u('https://gw.example.com'), { ...base, mode: 'off', proxyUrl: 'http://vs:3128' }), undefined);
    assert.equal(resolveProxy(u('https://gw.example.com'), base), undefined);
  });
  it('honours http.noProxy and NO_PROXY', () => {
    const s = { ...base, proxyUrl: 'http://vs:3128', noProxy: ['.internal.example'], env: { NO_PROXY: 'localhost,127.0.0.1,gw.example.com:8443' } };
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
});
