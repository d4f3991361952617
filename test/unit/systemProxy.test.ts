import * as assert from 'node:assert/strict';
import { isGatewayError } from '../../src/core/errors';
import { fetchKeyModels } from '../../src/core/models/keyModels';
import { connectionError, routeFor, type ProxySettings, type SystemProxyLookup } from '../../src/core/proxy';
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { clientFor, DEFAULT_TRUST, DIRECT } from '../support/client';
import { ConnectProxy } from '../support/connectProxy';
import { createTestCa, type TestCa } from '../support/testCa';

/**
 * VS Code's own resolution (the operating system's proxy settings and PAC script) is asked only
 * when no explicit setting or variable decides. Here a recorded function stands in for it; the
 * real one is exercised in a real VS Code by test/integration/systemProxy.test.ts.
 */
const noTrust = { notes: [] };
const gateway = new URL('https://gw.example.com/v1/models');

function asking(answer: SystemProxyLookup): { settings: ProxySettings; asked: string[] } {
  const asked: string[] = [];
  const settings: ProxySettings = {
    ...DIRECT,
    mode: 'inherit',
    system: (url) => {
      asked.push(url);
      return answer(url);
    },
  };
  return { settings, asked };
}

const answers =
  (value: string | undefined): SystemProxyLookup =>
  () =>
    Promise.resolve(value);

describe('the system proxy and PAC script, as VS Code resolves them', () => {
  describe('which route a request takes', () => {
    it('asks VS Code when nothing explicit decides, and goes through the proxy it names', async () => {
      const { settings, asked } = asking(answers('http://pac-proxy.corp:8080'));
      const route = await routeFor(gateway, settings, noTrust, 1000);
      assert.equal(route.proxy, 'http://pac-proxy.corp:8080');
      assert.equal(route.source, 'system');
      assert.equal((route.options as { proxyTunnel?: boolean }).proxyTunnel, true, 'a CONNECT tunnel');
      assert.deepEqual(asked, ['https://gw.example.com/'], 'asked for the origin: no path or query');
    });

    it('connects directly when VS Code answers DIRECT', async () => {
      const { settings, asked } = asking(answers(undefined));
      const route = await routeFor(gateway, settings, noTrust, 1000);
      assert.equal(route.proxy, undefined);
      assert.equal(route.key, 'direct');
      assert.equal(asked.length, 1);
    });

    it('lets http.proxy win over the system proxy, without asking', async () => {
      const { settings, asked } = asking(answers('http://pac-proxy.corp:8080'));
      const route = await routeFor(gateway, { ...settings, proxyUrl: 'http://explicit:3128' }, noTrust, 1000);
      assert.equal(route.proxy, 'http://explicit:3128');
      assert.equal(route.source, 'setting');
      assert.deepEqual(asked, []);
    });

    it('lets the proxy environment variables win too', async () => {
      const { settings, asked } = asking(answers('http://pac-proxy.corp:8080'));
      const route = await routeFor(gateway, { ...settings, env: { HTTPS_PROXY: 'envproxy:3128' } }, noTrust, 1000);
      assert.equal(route.proxy, 'http://envproxy:3128');
      assert.equal(route.source, 'environment');
      assert.deepEqual(asked, []);
    });

    it('connects directly, without asking, for http.noProxy and NO_PROXY (address ranges too)', async () => {
      const { settings, asked } = asking(answers('http://pac-proxy.corp:8080'));
      const byName = await routeFor(gateway, { ...settings, noProxy: ['.example.com'] }, noTrust, 1000);
      const byRange = await routeFor(
        new URL('https://10.1.2.3/v1/models'),
        { ...settings, env: { NO_PROXY: '10.0.0.0/8' } },
        noTrust,
        1000,
      );
      assert.equal(byName.proxy, undefined);
      assert.equal(byRange.proxy, undefined);
      assert.deepEqual(asked, []);
    });

    it('never asks when modelGateway.proxy or http.proxySupport is off', async () => {
      const { settings, asked } = asking(answers('http://pac-proxy.corp:8080'));
      assert.equal((await routeFor(gateway, { ...settings, mode: 'off' }, noTrust, 1000)).proxy, undefined);
      assert.equal((await routeFor(gateway, { ...settings, support: 'off' }, noTrust, 1000)).proxy, undefined);
      assert.deepEqual(asked, []);
    });

    it('refuses a SOCKS answer with an error naming the settings that decide instead', async () => {
      const { settings } = asking(answers('socks://user:pw@socks.corp:1080'));
      await assert.rejects(
        routeFor(gateway, settings, noTrust, 1000),
        (e: unknown) =>
          isGatewayError(e, 'network') &&
          e.code === 'proxy_unsupported' &&
          e.message.includes('"http.proxy"') &&
          e.message.includes('"http.noProxy"') &&
          !e.message.includes('pw'),
      );
    });

    it('turns a failed or unanswered resolution into an error naming the settings', async () => {
      const failing = asking(() => Promise.reject(new Error('PAC script download failed')));
      await assert.rejects(
        routeFor(gateway, failing.settings, noTrust, 1000),
        (e: unknown) =>
          isGatewayError(e, 'network') &&
          e.code === 'proxy_resolve' &&
          e.message.includes('PAC script download failed') &&
          e.message.includes('"http.proxy"'),
      );
      const silent = asking(() => new Promise<never>(() => undefined));
      await assert.rejects(
        routeFor(gateway, silent.settings, noTrust, 50),
        (e: unknown) => isGatewayError(e, 'network') && e.code === 'proxy_resolve' && /0\.05 s/.test(e.message),
      );
    });

    it('stops waiting when the request is cancelled', async () => {
      const silent = asking(() => new Promise<never>(() => undefined));
      const abort = new AbortController();
      const pending = routeFor(gateway, silent.settings, noTrust, 0, abort.signal);
      abort.abort(new Error('cancelled by the user'));
      await assert.rejects(pending, /cancelled by the user/);
    });

    it('names the system proxy settings when the proxy they chose refuses', () => {
      const route = {
        key: 'http://pac-proxy.corp:8080',
        proxy: 'http://pac-proxy.corp:8080',
        source: 'system' as const,
        options: {},
      };
      const error = connectionError(
        new Error('Proxy response (403) !== 200 when HTTP Tunneling'),
        gateway,
        route,
        asking(answers(undefined)).settings,
      );
      assert.equal(error?.code, 'proxy_403');
      assert.match(error?.message ?? '', /system proxy settings chose for gw\.example\.com/);
      assert.ok(error?.message.includes('"http.noProxy"'));
    });
  });

  describe('requests through the proxy VS Code named', () => {
    let ca: TestCa;
    let gw: GatewayDouble;
    let proxy: ConnectProxy;
    const client = (settings: ProxySettings) =>
      clientFor(gw.url, DEMO_KEY, { proxy: settings, trust: { ...DEFAULT_TRUST, extraCaFile: ca.caFile } });

    before(async () => {
      // An https gateway, as in real use: the proxy carries TLS it cannot read.
      ca = createTestCa();
      gw = new GatewayDouble({ tls: ca.server });
      await gw.start();
      proxy = await new ConnectProxy().start();
    });
    after(async () => {
      await proxy.stop();
      await gw.stop();
      ca.dispose();
    });
    beforeEach(() => {
      gw.clearLog();
      proxy.clear();
    });

    it('reach the gateway through a CONNECT tunnel; the proxy never sees the key', async () => {
      const { settings, asked } = asking(() => Promise.resolve(proxy.url));
      const { http, lines } = client(settings);
      assert.ok((await fetchKeyModels(http)).length > 0);
      assert.equal(gw.log[0]?.headers.authorization, `Bearer ${DEMO_KEY}`, 'the gateway got the key');
      assert.deepEqual(
        proxy.records.map((r) => r.target),
        [new URL(gw.url).host],
        'one CONNECT to the gateway',
      );
      assert.deepEqual(proxy.plainRequests, [], 'no request was sent to the proxy in clear');
      assert.ok(!proxy.seen().includes(DEMO_KEY), 'the key is nowhere in what the proxy saw');
      assert.ok(asked.length >= 1);
      assert.ok(
        lines.some((l) => l.includes(`using proxy ${proxy.url}/ for ${new URL(gw.url).host} (from system)`)),
        lines.join('\n'),
      );
    });

    it('go straight to the gateway when VS Code answers DIRECT', async () => {
      const { settings, asked } = asking(answers(undefined));
      const { http } = client(settings);
      assert.ok((await fetchKeyModels(http)).length > 0);
      assert.equal(proxy.records.length, 0, 'the proxy saw nothing');
      assert.equal(gw.log.length, 1);
      assert.ok(asked.length >= 1);
    });
  });
});
