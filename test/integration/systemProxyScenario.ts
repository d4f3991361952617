import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as vm from 'node:vm';
import * as vscode from 'vscode';
import type { ConnectionReport } from '../../src/core/connection';
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { ConnectProxy } from '../support/connectProxy';
import { createTestCa, type TestCa } from '../support/testCa';
import { run, setSetting } from './support';

/**
 * What VS Code's extension host exports on its own copy of `@vscode/proxy-agent`: `resolveProxyURL`,
 * set by VS Code (src/vs/workbench/api/node/proxyResolver.ts), and the package's own
 * `createProxyResolver`, the function that resolver is made with.
 */
interface VsCodeProxyAgent {
  resolveProxyURL?: (url: string) => Promise<string | undefined>;
  createProxyResolver(params: object): { resolveProxyURL(url: string): Promise<string | undefined> };
}

/** A name that never resolves (RFC 2606): the gateway is reachable only through the proxy, which maps it. */
const GATEWAY_NAME = 'gateway.pac.test';

/**
 * A PAC script routes the gateway, as a corporate network's does, in a real extension host.
 *
 * What runs for real: the extension as built, VS Code's own copy of `@vscode/proxy-agent` with the
 * `resolveProxyURL` VS Code set on it, and VS Code's own resolution order (`createProxyResolver`:
 * localhost, `http.noProxy`, `http.proxy`, the environment, then the system). What stands in: the
 * system part. In desktop VS Code, Electron answers it from the operating system's proxy settings
 * and their PAC script; code-server, the only VS Code that runs here, has no such part (its request
 * services' `resolveProxy` answers nothing). So the test builds VS Code's resolver with the package's
 * own `createProxyResolver` and a system part that downloads a PAC script from a local server and
 * calls its `FindProxyForURL`, as Chromium does (the script needs none of the PAC helper functions).
 */
export function describeSystemProxy(title: string): void {
  describe(title, function () {
    let ca: TestCa;
    let gw: GatewayDouble;
    let pacProxy: ConnectProxy;
    let explicitProxy: ConnectProxy;
    let pacServer: http.Server;
    let pacScript = '';
    let agent: VsCodeProxyAgent;
    let vscodeResolver: VsCodeProxyAgent['resolveProxyURL'];
    // https, as a gateway away from this computer must be: the proxy carries TLS it cannot read.
    const gatewayUrl = () => `https://${GATEWAY_NAME}:${new URL(gw.url).port}`;
    const pacUrl = () => `http://127.0.0.1:${(pacServer.address() as AddressInfo).port}/proxy.pac`;

    /** VS Code's resolver, afresh (it caches per address), whose system part follows `script`. */
    function systemAnswers(script: string): void {
      pacScript = script;
      agent.resolveProxyURL = agent.createProxyResolver({
        resolveProxy: pacResult,
        getProxyURL: () => vscode.workspace.getConfiguration('http').get<string>('proxy'),
        getNoProxyConfig: () => vscode.workspace.getConfiguration('http').get<string[]>('noProxy') ?? [],
        isUseHostProxyEnabled: () => true,
        proxyResolveTelemetry: () => undefined,
        log: { trace: noop, debug: noop, info: noop, warn: noop, error: noop },
        env: {},
      }).resolveProxyURL;
    }

    async function check(): Promise<ConnectionReport> {
      return run<ConnectionReport>('checkConnection', { silent: true });
    }

    before(async () => {
      ca = createTestCa([GATEWAY_NAME]);
      gw = new GatewayDouble({ tls: ca.server });
      await gw.start();
      const hosts = { [GATEWAY_NAME]: '127.0.0.1' };
      pacProxy = await new ConnectProxy({ hosts }).start();
      explicitProxy = await new ConnectProxy({ hosts }).start();
      pacServer = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/x-ns-proxy-autoconfig' }).end(pacScript);
      });
      await new Promise<void>((resolve) => pacServer.listen(0, '127.0.0.1', resolve));
      agent = loadVsCodeProxyAgent();
      vscodeResolver = agent.resolveProxyURL;
      await setSetting('extraCaCertificates', ca.caFile);
      await setSetting('baseUrl', gatewayUrl());
      await setSetting('catalogUrl', gw.catalogUrl);
      // Each test sets its own script; the key is set once, for any test that runs alone.
      systemAnswers(pacFor(GATEWAY_NAME, `PROXY 127.0.0.1:${new URL(pacProxy.url).port}`));
      await run('setApiKey', DEMO_KEY);
    });
    after(async () => {
      agent.resolveProxyURL = vscodeResolver;
      await setSetting('noProxy', undefined, 'http');
      await setSetting('proxy', undefined, 'http');
      await setSetting('baseUrl', undefined);
      await setSetting('catalogUrl', undefined);
      await setSetting('extraCaCertificates', undefined);
      await run('clearApiKey', { all: true });
      await Promise.all([gw.stop(), pacProxy.stop(), explicitProxy.stop()]);
      ca.dispose();
      await new Promise<void>((resolve) => pacServer.close(() => resolve()));
    });
    beforeEach(() => {
      gw.clearLog();
      pacProxy.clear();
      explicitProxy.clear();
    });

    it("finds VS Code's own proxy resolution where the extension looks for it", () => {
      assert.equal(typeof vscodeResolver, 'function', 'VS Code set resolveProxyURL on its @vscode/proxy-agent');
      assert.equal(typeof agent.createProxyResolver, 'function');
    });

    it('goes through the proxy a PAC script names, with a CONNECT tunnel, when no setting names one', async () => {
      systemAnswers(pacFor(GATEWAY_NAME, `PROXY 127.0.0.1:${new URL(pacProxy.url).port}`));
      const report = await check();
      assert.equal(report.keyAccepted, true, JSON.stringify(report.error));
      assert.ok(
        pacProxy.records.some((r) => r.target === `${GATEWAY_NAME}:${new URL(gw.url).port}`),
        'the proxy tunnelled to the gateway',
      );
      assert.deepEqual(pacProxy.plainRequests, [], 'nothing was sent to the proxy as a plain request');
      assert.ok(!pacProxy.seen().includes(DEMO_KEY), 'the key is nowhere in what the proxy saw');
      assert.ok(
        pacProxy.records.every((r) => r.headers.authorization === undefined),
        'no key on the CONNECT',
      );
      assert.ok(gw.log.some((e) => e.headers.authorization === `Bearer ${DEMO_KEY}`));
    });

    it('connects directly when the PAC script says DIRECT', async () => {
      systemAnswers(pacFor(GATEWAY_NAME, 'DIRECT'));
      const report = await check();
      assert.equal(pacProxy.records.length, 0, 'the proxy saw nothing');
      // Only the proxy knows the name: a direct connection cannot find it.
      assert.equal(report.reachable, false);
      assert.ok(report.error?.message.includes(GATEWAY_NAME), report.error?.message);
    });

    it('lets http.proxy win over the PAC script, and http.noProxy over both', async () => {
      systemAnswers(pacFor(GATEWAY_NAME, `PROXY 127.0.0.1:${new URL(pacProxy.url).port}`));
      await setSetting('proxy', explicitProxy.url, 'http');
      const viaSetting = await check();
      assert.equal(viaSetting.keyAccepted, true, JSON.stringify(viaSetting.error));
      assert.ok(
        explicitProxy.records.some((r) => r.target.startsWith(GATEWAY_NAME)),
        'the proxy in http.proxy was used',
      );
      assert.equal(pacProxy.records.length, 0, "the PAC script's proxy was not");

      explicitProxy.clear();
      await setSetting('noProxy', [GATEWAY_NAME], 'http');
      const bypassed = await check();
      assert.equal(bypassed.reachable, false, 'a direct connection cannot find the name');
      assert.ok(bypassed.error?.message.includes(GATEWAY_NAME), bypassed.error?.message);
      // The catalog (on 127.0.0.1, not in http.noProxy) still goes through http.proxy; the gateway does not.
      const toGateway = [...explicitProxy.records, ...pacProxy.records].filter((r) =>
        r.target.startsWith(GATEWAY_NAME),
      );
      assert.deepEqual(toGateway, [], 'no proxy for a name in http.noProxy');
    });

    /** The system part of VS Code's resolution: the PAC script's answer for `url`, as Chromium gives it. */
    async function pacResult(url: string): Promise<string> {
      const script = await download(pacUrl());
      const host = new URL(url).hostname;
      return String(vm.runInNewContext(`${script}\nFindProxyForURL(url, host)`, { url, host }, { timeout: 1000 }));
    }
  });
}

/** VS Code's copy, where the extension finds it (src/host/systemProxy.ts): its module cache returns the host's instance. */
function loadVsCodeProxyAgent(): VsCodeProxyAgent {
  for (const folder of ['node_modules.asar', 'node_modules']) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- VS Code's own copy, loaded where it lives
      return require(path.join(vscode.env.appRoot, folder, '@vscode', 'proxy-agent')) as VsCodeProxyAgent;
    } catch {
      // Not in this folder.
    }
  }
  throw new Error(`@vscode/proxy-agent is not in VS Code's install (${vscode.env.appRoot})`);
}

function pacFor(host: string, answer: string): string {
  return `function FindProxyForURL(url, host) {\n  return host === ${JSON.stringify(host)} ? ${JSON.stringify(answer)} : "DIRECT";\n}\n`;
}

function download(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

function noop(): void {
  // VS Code's resolver logs its steps; the test does not need them.
}
