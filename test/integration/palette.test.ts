import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ConnectionReport } from '../../src/core/connection';
import { DEMO_KEY, GatewayDouble, TEAM_KEY } from '../gateway';
import { EXTENSION_ID, closeEditorsDiscarding, run, setSetting } from './support';

/**
 * What a user who runs a command from the Command Palette gets: the command with no argument. Each
 * command the palette shows must then ask for what it needs (a quick pick, an input box, a modal
 * question) or just do its job — never fail on the missing argument.
 */

interface PaletteEntry {
  command: string;
  when?: string;
}

/**
 * VS Code refuses every modal dialog in extension tests (its dialog service throws instead of
 * showing one), so a command that asks a modal question ends with this error here: the question was
 * asked, as a dismissed one would be.
 */
const MODAL_REFUSED = /refused to show dialog in tests/;

/** Last: they remove what the earlier commands use (the keys, the conversation). */
const DESTRUCTIVE = ['modelGateway.deleteChat', 'modelGateway.removeApiKey', 'modelGateway.clearApiKey'];

function paletteCommands(): string[] {
  const manifest = vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON as {
    contributes: { commands: { command: string }[]; menus: { commandPalette?: PaletteEntry[] } };
  };
  const hidden = new Set(
    (manifest.contributes.menus.commandPalette ?? []).filter((e) => e.when === 'false').map((e) => e.command),
  );
  const shown = manifest.contributes.commands.map((c) => c.command).filter((c) => !hidden.has(c));
  return [...shown.filter((c) => !DESTRUCTIVE.includes(c)), ...DESTRUCTIVE.filter((c) => shown.includes(c))];
}

/**
 * Runs `command` while acting as a user who does `act` every 200 ms (dismisses or accepts a picker,
 * clears toasts whose buttons keep the command waiting) until the command settles.
 */
async function settleWhile<T>(pending: Thenable<T>, act: () => Promise<void>, timeoutMs = 60_000): Promise<T> {
  let settled = false;
  const done = Promise.resolve(pending).finally(() => {
    settled = true;
  });
  const deadline = Date.now() + timeoutMs;
  while (!settled && Date.now() < deadline) {
    await Promise.race([done.catch(() => undefined), new Promise((r) => setTimeout(r, 200))]);
    if (!settled) await act();
  }
  if (!settled) throw new Error(`did not settle within ${timeoutMs} ms`);
  return done;
}

const dismiss = async (): Promise<void> => {
  await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
  await vscode.commands.executeCommand('notifications.clearAll');
};

/** Accepts the picker's selected item, as Enter does. */
const accept = async (): Promise<void> => {
  await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
};

/** Runs the command as the palette does (no argument), dismissing every picker, input box and toast it opens. */
async function runFromPalette(command: string): Promise<string | undefined> {
  try {
    await settleWhile(vscode.commands.executeCommand(command), dismiss);
    return undefined;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return MODAL_REFUSED.test(message) ? undefined : message;
  }
}

describe('Every command of the Command Palette with no argument', function () {
  let gw: GatewayDouble;

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    await run('clearApiKey', { all: true });
    await run('setApiKey', DEMO_KEY);
    await run('addApiKey', { name: 'team', key: TEAM_KEY });
    await run('refreshModels');
  });
  after(async () => {
    await run('clearApiKey', { all: true });
    await closeEditorsDiscarding();
    await gw.stop();
  });

  it('Call Model with Key… asks for the model, then the key, and calls the model with the key picked', async () => {
    // Both pickers answered with their first item: a model both keys list, then the key first in order.
    const pending = run<{ model: string; key?: string } | undefined>('useKeyForModel');
    await settleWhile(pending, accept);
    const result = await pending;
    assert.ok(result, 'a model and a key were picked');
    assert.equal(result.key, 'default', 'the first key in order');
  });

  it('runs each one and answers or dismisses what it asks, with no error', async function () {
    const failures: string[] = [];
    for (const command of paletteCommands()) {
      const error = await runFromPalette(command);
      if (error !== undefined) failures.push(`${command}: ${error}`);
    }
    assert.deepEqual(failures, []);
  });

  it('Clear API Key with several keys asks which, "All 2 keys" first, and says which were removed', async () => {
    await run('clearApiKey', { all: true });
    await run('setApiKey', DEMO_KEY);
    await run('addApiKey', { name: 'team', key: TEAM_KEY });
    const result = await settleWhile(run('clearApiKey'), accept);
    assert.deepEqual(result, { cleared: true, removed: ['default', 'team'] });
    assert.equal((await run<ConnectionReport>('checkConnection', { silent: true })).keySet, false);
  });
});
