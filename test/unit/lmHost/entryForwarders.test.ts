/**
 * The extension's entry (src/extension.ts) registers a forwarder for every command and agent tool
 * that package.json declares, and the forwarders find the code in the features (src/host/features.ts,
 * dist/features.js) on first use. These lists must agree: a declared command without code would fail
 * when run, and code without a declaration would never be registered.
 */
// First: answers `vscode` for every host module imported after it.
import '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { COMMANDS } from '../../../src/host/commands';
import { agentTools } from '../../../src/host/lm/agentTools';
import { VENDOR } from '../../../src/host/lm/lmApi';
import { ChatViewProvider } from '../../../src/host/views/chatView';

const manifest = JSON.parse(readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as {
  contributes: {
    commands: { command: string }[];
    languageModelTools: { name: string }[];
    languageModelChatProviders: { vendor: string }[];
    views: Record<string, { id: string }[]>;
  };
};

describe("the entry's forwarders and the features agree with package.json", () => {
  it('every declared command has code in COMMANDS, and every command of COMMANDS is declared', () => {
    const declared = manifest.contributes.commands.map((c) => c.command).sort();
    assert.deepEqual(COMMANDS.map((c) => c.id).sort(), declared);
  });

  it('every declared agent tool has code, and every tool is declared', () => {
    const declared = manifest.contributes.languageModelTools.map((t) => t.name).sort();
    const tools = agentTools({} as never, () => {
      throw new Error('no media studio is needed to list the tools');
    });
    assert.deepEqual([...tools.keys()].sort(), declared);
  });

  it('the chat provider vendor and the chat view id are the declared ones', () => {
    assert.deepEqual(
      manifest.contributes.languageModelChatProviders.map((p) => p.vendor),
      [VENDOR],
    );
    const views = Object.values(manifest.contributes.views)
      .flat()
      .map((v) => v.id);
    assert.ok(views.includes(ChatViewProvider.viewId), `${ChatViewProvider.viewId} is a declared view`);
    assert.match(
      readFileSync(path.resolve(__dirname, '../../../src/extension.ts'), 'utf8'),
      new RegExp(`CHAT_VIEW_ID = '${ChatViewProvider.viewId.replace('.', '\\.')}'`),
      'the entry registers the chat view under the same id',
    );
  });
});
