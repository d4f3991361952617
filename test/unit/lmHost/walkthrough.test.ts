// First: answers `vscode` for every host module imported after it.
import { ui } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import type { Services } from '../../../src/host/services';
import { openOnceAfterInstall } from '../../../src/host/walkthrough';
import { memento } from './hostServices';

const OPEN = 'workbench.action.openWalkthrough';

function services(hasKey: boolean, globalState = memento()): Services {
  // Only these members are read; the cast keeps the stub this small.
  return {
    keys: { has: async () => hasKey },
    context: { globalState, extension: { id: 'model-gateway.model-gateway' } },
  } as unknown as Services;
}

describe('The first-run walkthrough opens once after install', () => {
  beforeEach(() => {
    ui.settings = {};
    ui.executed = [];
  });

  it('opens once for a user without a key, and never again', async () => {
    const state = memento();
    assert.equal(await openOnceAfterInstall(services(false, state)), true);
    assert.deepEqual(ui.executed, [[OPEN, 'model-gateway.model-gateway#firstRun', false]]);
    assert.equal(await openOnceAfterInstall(services(false, state)), false);
    assert.equal(ui.executed.length, 1);
  });

  it('does not open for a user who has a key, or who turned walkthroughs on install off', async () => {
    assert.equal(await openOnceAfterInstall(services(true)), false);
    ui.settings = { 'workbench.welcomePage.walkthroughs.openOnInstall': false };
    assert.equal(await openOnceAfterInstall(services(false)), false);
    assert.deepEqual(ui.executed, []);
  });
});
