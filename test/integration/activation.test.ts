import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { EXTENSION_ID, run, setSetting } from './support';

// Runs first (files load in name order): nothing may have activated the extension yet.
describe('Activation', function () {
  let gw: GatewayDouble;
  const ext = () => vscode.extensions.getExtension(EXTENSION_ID);

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });
  after(async () => {
    // The suites after this one start with no key, as a new user does.
    await run('clearApiKey', { all: true });
    await gw.stop();
  });

  it('is installed and never activated while VS Code starts: at most once start-up has finished', () => {
    const e = ext();
    assert.ok(e, 'the extension is present');
    // Inline completion needs its provider registered in every window, so the extension activates
    // on onStartupFinished (after the window is up, never during its start); what that loads is
    // the entry alone (the next test), and nothing is sent while completion is off.
    const events: string[] = e.packageJSON.activationEvents ?? [];
    assert.ok(!events.includes('*'), events.join());
  });

  /** The extension's files of dist/ that Node has loaded in this extension host. */
  const loadedDist = (): string[] => {
    const dist = path.join(ext()?.extensionPath ?? '', 'dist') + path.sep;
    return Object.keys(require.cache)
      .filter((file) => file.startsWith(dist) && file.endsWith('.js'))
      .map((file) => path.relative(dist, file).replace(/\\/g, '/'))
      .sort();
  };

  it('loads only its entry on activation: the features and undici wait for their first use', async () => {
    await ext()?.activate();
    assert.equal(ext()?.isActive, true);
    assert.deepEqual(loadedDist(), ['extension.js'], 'activation loaded dist/extension.js and nothing else of dist/');
  });

  it('activates on a command without calling the network, and the command loads the features', async () => {
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    await run('showLog');
    assert.equal(ext()?.isActive, true);
    assert.equal(gw.log.length, 0, 'activation made no request');
    assert.deepEqual(
      loadedDist(),
      ['extension.js', 'features.js'],
      'the first command loaded dist/features.js (undici waits for a request)',
    );
  });

  it('loads the HTTP client and undici with the first request', async () => {
    await run('setApiKey', DEMO_KEY);
    await run('refreshModels');
    assert.ok(gw.log.length > 0, 'the models were asked for');
    assert.deepEqual(
      loadedDist(),
      ['extension.js', 'features.js', 'http.js', 'undici.js'],
      'the first request loaded dist/http.js and dist/undici.js',
    );
  });
});
