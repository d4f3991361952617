/**
 * What a signed-out user of VS Code's own Chat view is offered, outside VS Code (fakeVscode.ts):
 * Chat: Manage Language Models after Set API Key and in Check Connection, where this VS Code has
 * the command and the user has not run it from here; and a utility model, once, where this VS Code
 * has the settings and none is set, written as a user setting only on the user's click.
 */
// First: answers `vscode` for every host module imported after it.
import { fake, ui } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import type { ModelInfo } from '../../../src/core/models/types';
import { setApiKey } from '../../../src/host/commands/apiKey';
import { checkConnection } from '../../../src/host/commands/connection';
import { setChatUtilityModel } from '../../../src/host/commands/nativeChat';
import type { CommandContext } from '../../../src/host/commands/types';
import { offerUtilityModel } from '../../../src/host/lm/nativeChatSetup';
import { MANAGE_MODELS_COMMAND } from '../../../src/host/lm/nativeChatState';
import type { Services } from '../../../src/host/services';
import { until } from '../../support/until';
import { memento } from './hostServices';
import { chatModel } from '../../support/models';

const KEY = `sk-${'a1B2c3D4'.repeat(6)}`;
const MANAGE = 'Open Chat: Manage Language Models';
const UTILITY_SETTINGS = ['chat.byokUtilityModelDefault', 'chat.utilityModel', 'chat.utilitySmallModel'];

/** The first value `find` gives, once it gives one. */
async function waitFor<T>(what: string, find: () => T | undefined): Promise<T> {
  let found: T | undefined;
  await until(() => (found = find()) !== undefined, what);
  return found as T;
}

function pricedModel(id: string, cost: { input: number; output: number } | undefined, toolCall = true): ModelInfo {
  return chatModel(id, {
    name: id.toUpperCase(),
    provider: 'p',
    inCatalog: true,
    catalog: { id, toolCall, ...(cost ? { cost } : {}) },
  });
}

const MODELS = [
  pricedModel('big', { input: 3, output: 15 }),
  pricedModel('tiny', { input: 0.1, output: 0.4 }),
  pricedModel('free-no-tools', { input: 0, output: 0 }, false),
  pricedModel('unpriced', undefined),
];

function makeServices(): { services: Services; ctx: CommandContext } {
  const snapshot = { updatedAt: Date.now(), models: MODELS, keyModels: MODELS.map((m) => m.id) };
  const log = {
    warn: () => undefined,
    info: () => undefined,
    error: () => undefined,
    debug: () => undefined,
    trace: () => undefined,
    show: () => undefined,
  };
  const services = {
    context: { globalState: memento() },
    keys: {
      set: async () => ({ id: 'legacy', name: 'default' }),
      list: async () => [{ id: 'legacy', name: 'default' }],
      shown: async () => [],
      has: async () => true,
      masked: async () => 'sk-…aaaa',
    },
    settings: () => ({ baseUrl: '' }),
    base: () => ({ base: 'https://gateway.example.com', changes: [] }),
    checkOverrides: async () => undefined,
    overrides: { notices: [] },
    registry: { snapshot, refresh: async () => snapshot },
    quota: { refresh: async () => undefined },
    log,
  };
  // Only these members are read by the code under test; the cast keeps the stub this small.
  return { services: services as unknown as Services, ctx: { services } as unknown as CommandContext };
}

/** Runs Set API Key as a user does: the key typed into the input box. */
async function typeKey(ctx: CommandContext): Promise<void> {
  const input = fake.window.showInputBox;
  fake.window.showInputBox = async () => KEY as never;
  try {
    await setApiKey.run(ctx);
  } finally {
    fake.window.showInputBox = input;
  }
}

describe("VS Code's own Chat view, first use without sign-in: Manage Language Models and the utility model", () => {
  beforeEach(() => {
    ui.shown = [];
    ui.choices = [];
    ui.settings = {};
    ui.defaults = {};
    ui.updates = [];
    ui.executed = [];
    ui.quickPicks = [];
    ui.pickLabels = [];
    ui.commands = ['workbench.action.chat.open', MANAGE_MODELS_COMMAND];
  });

  it('after Set API Key: offers Manage Language Models in one click, runs it, and does not offer it again', async () => {
    const { ctx } = makeServices();
    ui.choices = [MANAGE];
    await typeKey(ctx);
    const saved = await waitFor('the key is announced', () => ui.shown.find((s) => s.message.includes('saved')));
    // The next step of the first run is the first button: VS Code shows it as the primary one.
    assert.deepEqual(saved.actions, [MANAGE, 'Check Connection']);
    await waitFor('the command runs', () => ui.executed.find((c) => c[0] === MANAGE_MODELS_COMMAND));
    ui.shown = [];
    await typeKey(ctx);
    assert.deepEqual(
      (await waitFor('announced again', () => ui.shown.find((s) => s.message.includes('saved')))).actions,
      ['Check Connection'],
    );
  });

  it('a user who dismisses it after Set API Key is not asked again there, but Check Connection still offers it until it is run', async () => {
    const { ctx } = makeServices();
    ui.choices = [undefined];
    await typeKey(ctx);
    await waitFor('the key is announced', () => ui.shown.find((s) => s.message.includes('saved')));
    ui.shown = [];
    await typeKey(ctx);
    assert.deepEqual(
      (await waitFor('announced again', () => ui.shown.find((s) => s.message.includes('saved')))).actions,
      ['Check Connection'],
    );

    ui.shown = [];
    ui.choices = [MANAGE];
    await checkConnection.run(ctx);
    const report = await waitFor('the report is shown', () => ui.shown[0]);
    assert.deepEqual(report.actions, [MANAGE, 'Show Report']);
    await waitFor('the command runs', () => ui.executed.find((c) => c[0] === MANAGE_MODELS_COMMAND));
    ui.shown = [];
    await checkConnection.run(ctx);
    assert.deepEqual(
      (await waitFor('the report is shown', () => ui.shown[0])).actions,
      ['Show Report'],
      'not once it was run',
    );
  });

  it('offers nothing where VS Code has no Chat view (no Manage Language Models command)', async () => {
    const { ctx } = makeServices();
    ui.commands = ['workbench.action.openSettings'];
    await typeKey(ctx);
    assert.deepEqual(
      (await waitFor('the key is announced', () => ui.shown.find((s) => s.message.includes('saved')))).actions,
      ['Check Connection'],
    );
    ui.shown = [];
    await checkConnection.run(ctx);
    assert.deepEqual((await waitFor('the report is shown', () => ui.shown[0])).actions, ['Show Report']);
  });

  it('offers a utility model once where VS Code has the settings and none is set; dismissing writes nothing and is final', async () => {
    const { services } = makeServices();
    for (const key of UTILITY_SETTINGS) ui.defaults[key] = key.endsWith('Default') ? 'copilot' : '';
    ui.choices = [undefined];
    await offerUtilityModel(services);
    assert.equal(ui.shown.length, 1);
    assert.match(ui.shown[0]?.message ?? '', /billed/);
    await offerUtilityModel(services);
    assert.equal(ui.shown.length, 1, 'not asked again');
    assert.deepEqual(ui.updates, [], 'nothing written without a click');
  });

  it('offers none where VS Code has no utility model settings, or the user has set one', async () => {
    const { services } = makeServices();
    await offerUtilityModel(services);
    assert.deepEqual(ui.shown, [], 'no such settings in this VS Code');
    for (const key of UTILITY_SETTINGS) ui.defaults[key] = key.endsWith('Default') ? 'copilot' : '';
    ui.settings['chat.byokUtilityModelDefault'] = 'mainAgent';
    await offerUtilityModel(services);
    assert.deepEqual(ui.shown, [], 'already chosen');
  });

  it('the quick pick offers the main model or the cheapest gateway model with tool calling, with its price, and writes the choice as a user setting', async () => {
    const { services, ctx } = makeServices();
    for (const key of UTILITY_SETTINGS) ui.defaults[key] = key.endsWith('Default') ? 'copilot' : '';
    ui.choices = ['Choose Utility Model…'];
    ui.pickLabels = ['TINY'];
    await offerUtilityModel(services);
    const items = ui.quickPicks[0] ?? [];
    assert.deepEqual(
      items.map((i) => i.description),
      ['mainAgent', 'modelGateway/tiny'],
    );
    assert.match(items[1]?.detail ?? '', /US\$0\.10 in, US\$0\.40 out per million tokens/);
    assert.deepEqual(ui.updates, [
      { key: 'chat.utilityModel', value: 'modelGateway/tiny', target: fake.ConfigurationTarget.Global },
      { key: 'chat.utilitySmallModel', value: 'modelGateway/tiny', target: fake.ConfigurationTarget.Global },
    ]);

    // The palette command asks again whenever the user wants; "mainAgent" is the other setting.
    ui.updates = [];
    ui.pickLabels = ["The chat's own model"];
    assert.deepEqual(await setChatUtilityModel.run(ctx), { chosen: 'mainAgent' });
    assert.deepEqual(ui.updates, [
      { key: 'chat.byokUtilityModelDefault', value: 'mainAgent', target: fake.ConfigurationTarget.Global },
    ]);
    ui.updates = [];
    assert.deepEqual(await setChatUtilityModel.run(ctx), { reason: 'cancelled' });
    assert.deepEqual(ui.updates, []);
  });
});
