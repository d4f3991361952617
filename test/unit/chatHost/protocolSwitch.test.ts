/**
 * The host's part of a protocol fallback, outside VS Code (fakeVscode.ts): the notice the user
 * sees, the log line, the registry told to drop the refused protocol, and the global-state store
 * that keeps the refusals between sessions.
 */
// First: answers `vscode` for every host module imported after it.
import { ui } from './fakeVscode';
import assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { errorFromResponse } from '../../../src/core/errorBody';
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
    this.values.set(key, JSON.parse(JSON.stringify(value)));
  }
}

describe('protocol switch in the host', () => {
  beforeEach(() => (ui.shown.length = 0));

  it('tells the user which protocol was refused, in the gateway’s words, and which one is used now; logs it and drops the refused one', async () => {
    const refused: Array<[string, ChatProtocol]> = [];
    const warnings: string[] = [];
    const services = {
      log: { warn: (line: string) => void warnings.push(line) },
      registry: { refuseProtocol: async (model: string, protocol: ChatProtocol) => void refused.push([model, protocol]) },
    } as unknown as Services;
    const error = errorFromResponse({
      status: 400,
      body: '{"error":{"message":"Model m1 does not support apiType:openai.responses parameter (request id: 20251125X)","type":"bad_response_status_code","param":"","code":"bad_response_status_code"}}',
    });
    await protocolSwitchHandler(services)({ model: 'm1', from: 'responses', to: 'chatCompletions', error });
    assert.deepEqual(ui.shown.map((s) => [s.level, s.message]), [
      ['info', 'The gateway lists the Responses protocol for m1, but refused it: Model m1 does not support apiType:openai.responses parameter. This answer and later ones use Chat Completions instead.'],
    ]);
    assert.deepEqual(refused, [['m1', 'responses']]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /request id: 20251125X/, 'the log keeps the request id');
  });

  it('keeps refusals in the global state and ignores a stored value that does not fit', async () => {
    const state = new Memento();
    const store = refusedProtocolStore(state as unknown as vscode.Memento);
    assert.deepEqual(store.load(), {});
    await store.save({ m1: ['responses'] });
    assert.deepEqual(refusedProtocolStore(state as unknown as vscode.Memento).load(), { m1: ['responses'] });
    await state.update('models.refusedProtocols', { m1: ['telepathy'] });
    assert.deepEqual(store.load(), {});
    await state.update('models.refusedProtocols', 'garbage');
    assert.deepEqual(store.load(), {});
  });
});
