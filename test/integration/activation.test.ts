import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { GatewayDouble } from '../gateway';
import { EXTENSION_ID, run, setSetting } from './support';

// Runs first (files load in name order): nothing may have activated the extension yet.
describe('Activation', function () {
  let gw: GatewayDouble;
  const ext = () => vscode.extensions.getExtension(EXTENSION_ID);

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });
  after(() => gw.stop());

  it('is installed, not activated at start-up, and has no eager activation events', () => {
    const e = ext();
    assert.ok(e, 'the extension is present');
    assert.equal(e.isActive, false, 'nothing activated it before a view or command was used');
    const events: string[] = e.packageJSON.activationEvents ?? [];
    assert.ok(!events.includes('*') && !events.includes('onStartupFinished'), events.join());
  });

  it('activates on a command without calling the network', async () => {
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    await run('showLog');
    assert.equal(ext()?.isActive, true);
    assert.equal(gw.log.length, 0, 'activation made no request');
  });

});
