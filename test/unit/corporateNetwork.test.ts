import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { GatewayError, isGatewayError } from '../../src/core/errors';
import { fetchKeyModels } from '../../src/core/models/keyModels';
import type { ProxySettings } from '../../src/core/proxy';
import { loadTrust, type TrustSettings } from '../../src/core/tls';
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { clientFor, DEFAULT_TRUST, DIRECT } from '../support/client';
import { ConnectProxy } from '../support/connectProxy';
import { createTestCa, type TestCa } from '../support/testCa';

const viaProxy = (url: string, more: Partial<ProxySettings> = {}): ProxySettings => ({
  ...DIRECT,
  mode: 'inherit',
  proxyUrl: url,
  ...more,
});
const trusting = (more: Partial<TrustSettings>): TrustSettings => ({ ...DEFAULT_TRUST, ...more });
const BASIC = `Basic ${Buffer.from('alice:s3cret').toString('base64')}`;

describe('Corporate networks: certificate authorities and proxies', function () {
  let ca: TestCa;
  let gw: GatewayDouble;

  before(async () => {
    ca = createTestCa();
    gw = new GatewayDouble({ tls: ca.server });
    await gw.start();
    assert.match(gw.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  });
  after(async () => {
    await gw.stop();
    ca.dispose();
  });
  beforeEach(() => gw.clearLog());

  describe('a gateway whose certificate comes from a private authority', () => {
    it('is refused without the authority, with an error that names the setting, and nothing is sent', async () => {
      const { http } = clientFor(gw.url, DEMO_KEY);
      await assert.rejects(
        fetchKeyModels(http),
        (e: unknown) =>
          isGatewayError(e, 'network') &&
          e.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' &&
          e.message.includes('"modelGateway.extraCaCertificates"') &&
          !e.message.includes('proxyStrictSSL'),
      );
      assert.equal(gw.log.length, 0, 'no request reached the gateway');
    });

    it('is trusted through modelGateway.extraCaCertificates, a bundle of several certificates', async () => {
      const { http, lines } = clientFor(gw.url, DEMO_KEY, { trust: trusting({ extraCaFile: ca.bundleFile }) });
      assert.ok((await fetchKeyModels(http)).length > 0);
      assert.equal(gw.log[0]?.headers.authorization, `Bearer ${DEMO_KEY}`);
      assert.ok(
        lines.some((l) => /trusting 2 certificate\(s\) from modelGateway\.extraCaCertificates/.test(l)),
        lines.join('\n'),
      );
    });

    it('is trusted through NODE_EXTRA_CA_CERTS, which Node would drop once an explicit list is given', async () => {
      const { http } = clientFor(gw.url, DEMO_KEY, { trust: trusting({ env: { NODE_EXTRA_CA_CERTS: ca.caFile } }) });
      assert.ok((await fetchKeyModels(http)).length > 0);
    });

    it('keeps the public roots when an authority is added', () => {
      const trust = loadTrust(trusting({ extraCaFile: ca.caFile }));
      assert.ok(trust.tls);
      for (const root of tls.rootCertificates.slice(0, 5)) assert.ok(trust.tls.ca.includes(root));
      assert.ok(trust.tls.ca.includes(ca.caPem.trim()));
    });

    it('reads the operating system store with http.systemCertificates where Node offers it, and says when it does not', async () => {
      const asked: string[] = [];
      const node22 = {
        rootCertificates: tls.rootCertificates,
        getCACertificates: (type: 'default' | 'system') => {
          asked.push(type);
          return type === 'system' ? [ca.caPem] : [...tls.rootCertificates];
        },
      };
      const withSystem = loadTrust(trusting({ systemCertificates: true }), node22);
      assert.deepEqual(asked, ['system', 'default']);
      assert.ok(withSystem.tls, 'the system store is added');
      assert.equal(
        await handshake(gw.url, withSystem.tls.secureContext),
        true,
        'the built context trusts the system store',
      );

      assert.equal(
        loadTrust(trusting({ systemCertificates: false }), node22).tls,
        undefined,
        'off: Node’s default store alone',
      );
      const node20 = loadTrust(trusting({ systemCertificates: true }), { rootCertificates: tls.rootCertificates });
      assert.equal(node20.tls, undefined);
      assert.ok(
        node20.notes.some(
          (n) =>
            /cannot read the operating system's certificate store/.test(n) &&
            n.includes('modelGateway.extraCaCertificates'),
        ),
        node20.notes.join('\n'),
      );
    });

    it('explains a file it cannot use, before anything is sent', async () => {
      const dir = path.dirname(ca.caFile);
      const notPem = path.join(dir, 'not-a-certificate.pem');
      writeFileSync(notPem, 'hello');
      const damaged = path.join(dir, 'damaged.pem');
      writeFileSync(damaged, `${ca.caPem}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`);
      const cases: Array<[string, RegExp]> = [
        [path.join(dir, 'missing.pem'), /could not be read \(ENOENT\)/],
        ['relative/ca.pem', /must be the absolute path/],
        [notPem, /holds no PEM certificate/],
        [damaged, /certificate 2 of 2 is damaged/],
      ];
      for (const [file, why] of cases) {
        const { http } = clientFor(gw.url, DEMO_KEY, { trust: trusting({ extraCaFile: file }) });
        await assert.rejects(
          fetchKeyModels(http),
          (e: unknown) =>
            isGatewayError(e, 'badRequest') &&
            why.test(e.message) &&
            e.message.includes('modelGateway.extraCaCertificates'),
        );
      }
      assert.equal(gw.log.length, 0);
    });

    it('expands ~ to the home folder', () => {
      const home = os.homedir();
      if (!ca.caFile.startsWith(`${home}${path.sep}`)) {
        assert.throws(
          () => loadTrust(trusting({ extraCaFile: '~/surely-not-here/ca.pem' })),
          (e: unknown) => e instanceof GatewayError && e.message.includes(path.join(home, 'surely-not-here/ca.pem')),
        );
        return;
      }
      assert.ok(loadTrust(trusting({ extraCaFile: `~${ca.caFile.slice(home.length)}` })).tls);
    });
  });

  describe('through a proxy', () => {
    let proxy: ConnectProxy;
    let authProxy: ConnectProxy;

    before(async () => {
      proxy = await new ConnectProxy().start();
      authProxy = await new ConnectProxy({ requireAuth: BASIC }).start();
    });
    after(async () => {
      await proxy.stop();
      await authProxy.stop();
    });
    beforeEach(() => {
      proxy.clear();
      authProxy.clear();
    });

    it('never shows the key to the proxy: only a CONNECT, and the request inside the TLS tunnel', async () => {
      const { http } = clientFor(gw.url, DEMO_KEY, {
        proxy: viaProxy(proxy.url),
        trust: trusting({ extraCaFile: ca.caFile }),
      });
      assert.ok((await fetchKeyModels(http)).length > 0);
      assert.equal(gw.log[0]?.headers.authorization, `Bearer ${DEMO_KEY}`, 'the gateway got the key');
      assert.equal(proxy.records.length, 1);
      assert.equal(proxy.records[0]?.target, new URL(gw.url).host);
      assert.equal(proxy.records[0]?.headers.authorization, undefined);
      assert.deepEqual(proxy.plainRequests, [], 'nothing was sent to the proxy as a plain request');
      assert.ok(proxy.tunnelled.length > 0, 'the request went through the tunnel');
      assert.ok(!proxy.seen().includes(DEMO_KEY), 'the key is nowhere in what the proxy saw');
    });

    it('tunnels a plain http:// gateway too, so the proxy never gets request headers', async () => {
      const plain = new GatewayDouble();
      await plain.start();
      try {
        const { http } = clientFor(plain.url, DEMO_KEY, { proxy: viaProxy(proxy.url) });
        assert.ok((await fetchKeyModels(http)).length > 0);
        assert.equal(proxy.records.length, 1, 'a CONNECT');
        assert.equal(proxy.records[0]?.headers.authorization, undefined);
        assert.deepEqual(proxy.plainRequests, []);
      } finally {
        await plain.stop();
      }
    });

    it('answers a 407 with an error naming http.proxyAuthorization, and passes with it', async () => {
      const without = clientFor(gw.url, DEMO_KEY, {
        proxy: viaProxy(authProxy.url),
        trust: trusting({ extraCaFile: ca.caFile }),
      });
      await assert.rejects(
        fetchKeyModels(without.http),
        (e: unknown) =>
          isGatewayError(e, 'network') &&
          e.code === 'proxy_407' &&
          /asks for credentials \(407/.test(e.message) &&
          e.message.includes('"http.proxyAuthorization"'),
      );
      assert.equal(gw.log.length, 0);

      const wrong = clientFor(gw.url, DEMO_KEY, {
        proxy: viaProxy(authProxy.url, { authorization: 'Basic d3Jvbmc6d3Jvbmc=' }),
        trust: trusting({ extraCaFile: ca.caFile }),
      });
      await assert.rejects(
        fetchKeyModels(wrong.http),
        (e: unknown) =>
          isGatewayError(e, 'network') && /refused the credentials in "http\.proxyAuthorization"/.test(e.message),
      );

      authProxy.clear();
      const right = clientFor(gw.url, DEMO_KEY, {
        proxy: viaProxy(authProxy.url, { authorization: BASIC }),
        trust: trusting({ extraCaFile: ca.caFile }),
      });
      assert.ok((await fetchKeyModels(right.http)).length > 0);
      assert.equal(authProxy.records.length, 1);
      assert.equal(authProxy.records[0]?.headers['proxy-authorization'], BASIC, 'sent to the proxy, on the CONNECT');
      assert.equal(gw.log[0]?.headers['proxy-authorization'], undefined, 'never to the gateway');
      assert.ok(!authProxy.seen().includes(DEMO_KEY));
    });

    it('uses no proxy at all when http.proxySupport is off, neither http.proxy nor the environment', async () => {
      const settings = viaProxy(proxy.url, {
        support: 'off',
        env: { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url, ALL_PROXY: proxy.url },
      });
      const { http } = clientFor(gw.url, DEMO_KEY, { proxy: settings, trust: trusting({ extraCaFile: ca.caFile }) });
      assert.ok((await fetchKeyModels(http)).length > 0);
      assert.equal(proxy.records.length, 0);
      assert.equal(gw.log.length, 1);
    });

    it('http.proxyStrictSSL false accepts the certificate on proxied connections only', async () => {
      const proxiedStrict = clientFor(gw.url, DEMO_KEY, { proxy: viaProxy(proxy.url) });
      await assert.rejects(
        fetchKeyModels(proxiedStrict.http),
        (e: unknown) =>
          isGatewayError(e, 'network') &&
          e.message.includes('"modelGateway.extraCaCertificates"') &&
          e.message.includes('"http.proxyStrictSSL"'),
      );

      assert.equal(gw.log.length, 0);
      proxy.clear();

      const proxiedLoose = clientFor(gw.url, DEMO_KEY, { proxy: viaProxy(proxy.url, { strictSSL: false }) });
      assert.ok((await fetchKeyModels(proxiedLoose.http)).length > 0, 'proxied: accepted without the authority');
      assert.equal(proxy.records.length, 1);

      // Same settings, but this host bypasses the proxy: the direct connection still checks.
      const direct = clientFor(gw.url, DEMO_KEY, {
        proxy: viaProxy(proxy.url, { strictSSL: false, noProxy: ['127.0.0.1'] }),
      });
      await assert.rejects(
        fetchKeyModels(direct.http),
        (e: unknown) => isGatewayError(e, 'network') && e.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      );
      assert.equal(proxy.records.length, 1, 'the last request did not use the proxy');
      assert.equal(gw.log.length, 1, 'only the proxied, loose request reached the gateway');
    });
  });
});

/** Whether a TLS handshake with `url`'s server succeeds when trusting only `secureContext`. */
function handshake(url: string, secureContext: tls.SecureContext): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), secureContext }, () => {
      resolve(socket.authorized);
      socket.end();
    });
    socket.on('error', reject);
  });
}
