/**
 * The host's part of a protocol fallback, outside VS Code (fakeVscode.ts): the notice the user
 * sees, the log line, the registry told to drop the refused protocol, and the global-state store
 * that keeps the refusals between sessions.
 */
// First: answers `vscode` for every host module imported after it.
import { fake, ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { errorFromResponse } from '../../../src/core/errorBody';
import type { RefusedProtocolStore } from '../../../src/core/models/protocolFallback';
import type { ChatProtocol } from '../../../src/core/models/types';
import { protocolSwitchHandler, refusedProtocolStore } from '../../../src/host/protocolSwitch';
import type { Services } from '../../../src/host/services';

class Memento {
  readonly values = new Map<string, unknown>();
  keys(): readonly string[] {
    return [...this.values.keys()];
  }
  get<T>(key: string, fallback?: T): T | undefined {
    return (this.values.has(key) ? this.values.get(key) : fallback) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    // As VS Code's: undefined removes the key.
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, JSON.parse(JSON.stringify(value)));
  }
}

describe('protocol switch in the host', () => {
  beforeEach(() => (ui.shown.length = 0));

  it('tells the user which protocol was refused, in the gateway’s words, and which one is used now; logs it and drops the refused one', async () => {
    const refused: Array<[string, ChatProtocol]> = [];
    const warnings: string[] = [];
    const services = {
      log: { warn: (line: string) => void warnings.push(line) },
      registry: {
        refuseProtocol: async (model: string, protocol: ChatProtocol) => void refused.push([model, protocol]),
      },
    } as unknown as Services;
    const error = errorFromResponse({
      status: 400,
      body: '{"error":{"message":"Model m1 does not support apiType:openai.responses parameter (request id: 20251125X)","type":"bad_response_status_code","param":"","code":"bad_response_status_code"}}',
    });
    await protocolSwitchHandler(services)({ model: 'm1', from: 'responses', to: 'chatCompletions', error });
    assert.deepEqual(
      ui.shown.map((s) => [s.level, s.message]),
      [
        [
          'info',
          'The gateway lists the Responses protocol for m1, but refused it: Model m1 does not support apiType:openai.responses parameter. This answer and later ones use Chat Completions instead.',
        ],
      ],
    );
    assert.deepEqual(refused, [['m1', 'responses']]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /request id: 20251125X/, 'the log keeps the request id');
  });

  describe('the shared file of refusals', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'refusals-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));
    const context = (state: Memento) => ({
      globalState: state as unknown as vscode.Memento,
      globalStorageUri: fake.Uri.file(dir) as unknown as vscode.Uri,
    });

    it('moves the refusals an older version kept in the global state into the file, once, under the gateway in use', async () => {
      const state = new Memento();
      await state.update('models.refusedProtocols', { m1: ['responses'], m2: ['messages', 'chatCompletions'] });
      const store = refusedProtocolStore(
        context(state),
        () => 'https://gw.example',
        () => undefined,
      );
      assert.deepEqual(await store.load('https://gw.example'), {
        m1: ['responses'],
        m2: ['messages', 'chatCompletions'],
      });
      assert.deepEqual(await store.load('https://other.example'), {}, 'another gateway has none');
      assert.equal(state.get('models.refusedProtocols'), undefined, 'the old copy is dropped');
      // Another window still holding the old value in its cache does not bring it back over the file.
      const stale = new Memento();
      await stale.update('models.refusedProtocols', { m3: ['responses'] });
      const other = refusedProtocolStore(
        context(stale),
        () => 'https://gw.example',
        () => undefined,
      );
      await store.clear();
      assert.deepEqual(await other.load('https://gw.example'), {});
    });

    it('ignores an old value that does not fit, and drops it', async () => {
      const state = new Memento();
      await state.update('models.refusedProtocols', { m1: ['telepathy'] });
      const store = refusedProtocolStore(
        context(state),
        () => 'https://gw.example',
        () => undefined,
      );
      assert.deepEqual(await store.load('https://gw.example'), {});
      assert.equal(state.get('models.refusedProtocols'), undefined);
    });

    it('two windows recording refusals at once lose none of them', async () => {
      const windows = [0, 1].map(() =>
        refusedProtocolStore(
          context(new Memento()),
          () => 'https://gw.example',
          () => undefined,
        ),
      );
      const models = Array.from({ length: 12 }, (_, i) => `m${i}`);
      await Promise.all(models.map((m, i) => windows[i % 2]?.add('https://gw.example', m, 'responses')));
      const seen = await (windows[0] as RefusedProtocolStore).load('https://gw.example');
      assert.deepEqual(Object.keys(seen).sort(), [...models].sort());
    });
  });
});
