import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { vscodeProxyLookup } from '../../src/host/systemProxy';

/**
 * Where the extension finds VS Code's proxy resolution: `@vscode/proxy-agent` in VS Code's install
 * (`vscode.env.appRoot`), whose `resolveProxyURL` VS Code's extension host sets. Here a folder laid
 * out like an install stands in; the real one is used by test/integration/systemProxyScenario.ts.
 */
describe("finding VS Code's proxy resolution in its install", () => {
  let root: string;
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);

  /** An install whose `@vscode/proxy-agent` (under `folder`) answers with `body`'s resolveProxyURL. */
  function install(name: string, folder: string, body: string): string {
    const appRoot = path.join(root, name);
    const dir = path.join(appRoot, folder, '@vscode', 'proxy-agent');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: '@vscode/proxy-agent', main: 'index.js' }));
    writeFileSync(path.join(dir, 'index.js'), body);
    return appRoot;
  }

  before(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'mg-proxy-agent-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));
  beforeEach(() => (lines.length = 0));

  it('asks the resolveProxyURL VS Code set, with the full address, and follows a later replacement', async () => {
    const appRoot = install(
      'plain',
      'node_modules',
      `exports.resolveProxyURL = async (url) => url.includes('corp') ? 'http://pac-proxy:8080' : undefined;`,
    );
    const lookup = vscodeProxyLookup(appRoot, log);
    assert.equal(await lookup('https://gw.corp.example/v1/models'), 'http://pac-proxy:8080');
    assert.equal(await lookup('https://gw.example.com/v1/models'), undefined, 'DIRECT');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the same module instance the lookup loaded
    const loaded = require(path.join(appRoot, 'node_modules', '@vscode', 'proxy-agent')) as {
      resolveProxyURL: (url: string) => Promise<string | undefined>;
    };
    loaded.resolveProxyURL = async () => 'http://replaced:3128';
    assert.equal(await lookup('https://gw.example.com/'), 'http://replaced:3128');
    assert.deepEqual(lines, []);
  });

  it('looks in node_modules.asar first, where packed desktop builds keep it', async () => {
    const appRoot = install('packed', 'node_modules.asar', `exports.resolveProxyURL = async () => 'http://asar:1';`);
    install('packed', 'node_modules', `exports.resolveProxyURL = async () => 'http://unpacked:2';`);
    assert.equal(await vscodeProxyLookup(appRoot, log)('https://gw.example.com/'), 'http://asar:1');
  });

  it('connects directly, and says so once in the log, where VS Code has no such resolver', async () => {
    const without = install('old', 'node_modules', `exports.createProxyResolver = () => ({});`);
    const lookup = vscodeProxyLookup(without, log);
    assert.equal(await lookup('https://gw.example.com/'), undefined);
    assert.equal(await lookup('https://gw.example.com/'), undefined);
    const missing = vscodeProxyLookup(path.join(root, 'nowhere'), log);
    assert.equal(await missing('https://gw.example.com/'), undefined);
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(lines[0] ?? '', /system proxy settings and PAC scripts are not followed/);
  });

  it('refuses an answer that is not an address', async () => {
    const appRoot = install('odd', 'node_modules', `exports.resolveProxyURL = async () => ({ proxy: 'x' });`);
    await assert.rejects(
      vscodeProxyLookup(appRoot, log)('https://gw.example.com/'),
      /did not answer with an address \(object\)/,
    );
  });
});
