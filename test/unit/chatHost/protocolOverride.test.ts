/**
 * A conversation that names a protocol (chosen for an earlier model and kept when the model
 * changed) whose relay the gateway refuses for the model now in use: the notice says later
 * answers use the other protocol, and they do.
 */
import { ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChatProtocol } from '../../../src/core/models/types';
import { useDoubleClient } from '../../support/client';
import { until } from '../../support/until';
import { openWindow, type TestWindow } from './windows';

describe('Chat: a refused protocol the conversation names explicitly', function () {
  this.timeout(60_000);
  const double = useDoubleClient();
  let dir: string;
  let w: TestWindow;

  beforeEach(() => {
    ui.shown = [];
    dir = mkdtempSync(path.join(os.tmpdir(), 'mg-chat-override-'));
    w = openWindow(dir, double.gw.url, double.http);
    w.models.splice(0, 1, { ...w.models[0], protocols: ['responses', 'chatCompletions'] });
    // As the registry does (modelRegistry.refuseProtocol): the refused protocol leaves the model's list.
    const registry = w.chat.services.registry as unknown as {
      refuseProtocol(model: string, protocol: ChatProtocol): Promise<void>;
    };
    registry.refuseProtocol = async (id, protocol) => {
      const at = w.models.findIndex((m) => m.id === id);
      const model = w.models[at] as { protocols: ChatProtocol[]; refused?: ChatProtocol[] };
      w.models.splice(at, 1, {
        ...model,
        protocols: model.protocols.filter((p) => p !== protocol),
        refused: [...(model.refused ?? []), protocol],
      });
    };
  });
  afterEach(async () => {
    w.dispose();
    await until(() => w.chat.sessions.all().length === 0, 'every answer has settled');
    rmSync(dir, { recursive: true, force: true });
  });

  it('after the refusal, later answers use the other protocol (the explicit choice of the refused one goes)', async () => {
    const id = w.models[0]?.id as string;
    double.gw.refuseEndpoint(id, 'openai-response');
    await w.chat.sendSnapshot();
    await w.chat.updateConversation({ protocolOverride: 'responses' }, false);
    const first = await w.chat.send('the first question');
    assert.equal(first?.status, 'done');
    assert.equal(first?.protocol, 'chatCompletions');
    const notices = () => ui.shown.filter((s) => /later ones use Chat Completions/.test(s.message));
    assert.equal(notices().length, 1, JSON.stringify(ui.shown));
    const posts = () => double.gw.log.filter((e) => e.method === 'POST').map((e) => `${e.path} ${e.status}`);
    assert.deepEqual(posts(), ['/v1/responses 400', '/v1/chat/completions 200']);
    double.gw.clearLog();
    const second = await w.chat.send('the second question');
    assert.equal(second?.status, 'done');
    assert.deepEqual(posts(), ['/v1/chat/completions 200'], 'the refused protocol is not tried again');
    assert.equal(notices().length, 1, 'and the notice is not shown again');
    const meta = (await w.store.open(w.chat.currentConversationId as string, { limit: 0 }))?.meta;
    assert.equal(meta?.protocolOverride, undefined, 'the conversation no longer names the refused protocol');
  });
});
