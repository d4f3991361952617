/**
 * Retry, Regenerate, Continue and Edit ask everything that can refuse (the base address, a chat
 * model, the conversation's own model) before they remove anything: a refusal changes nothing.
 */
import { ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { failWrites, type DiskFull } from '../../support/diskFull';
import { useDoubleClient } from '../../support/client';
import { until } from '../../support/until';
import { ConversationStore } from '../../../src/core/chat/conversationStore';
import { openWindow, type TestWindow } from './windows';

describe('Chat: a replacement that cannot start removes nothing', function () {
  this.timeout(60_000);
  const double = useDoubleClient();
  let dir: string;
  let w: TestWindow;

  beforeEach(async () => {
    ui.shown = [];
    dir = mkdtempSync(path.join(os.tmpdir(), 'mg-chat-replace-'));
    w = openWindow(dir, double.gw.url, double.http);
    await w.chat.sendSnapshot();
    await w.chat.send('the question');
  });
  afterEach(async () => {
    w.dispose();
    await until(() => w.chat.sessions.all().length === 0, 'every answer has settled');
    rmSync(dir, { recursive: true, force: true });
  });

  const conversation = async () => w.store.load(w.chat.currentConversationId as string);

  const refusals: Array<{ name: string; refuse(w: TestWindow): void; says: RegExp }> = [
    { name: 'no base address', refuse: (t) => t.setBaseUrl(''), says: /No gateway base address is set/ },
    {
      name: 'no chat model (a first refresh failed)',
      refuse: (t) => t.models.splice(0),
      says: /No chat model is available/,
    },
  ];

  for (const { name, refuse, says } of refusals) {
    it(`${name}: Regenerate, Retry, Continue and Edit keep the answer and say why`, async () => {
      const before = await conversation();
      const [question, answer] = before?.messages ?? [];
      assert.equal(answer?.role, 'assistant');
      refuse(w);
      double.gw.clearLog();
      assert.equal(await w.chat.regenerate(answer?.id as string), undefined);
      await w.chat.handle({ type: 'action', action: 'retry', messageId: answer?.id as string });
      assert.equal(await w.chat.editLast('edited', question?.id as string), undefined);
      assert.deepEqual(await conversation(), before, 'the question and the answer are still stored');
      assert.equal(double.gw.log.length, 0, 'nothing was sent');
      assert.ok(ui.shown.filter((s) => says.test(s.message)).length >= 3, JSON.stringify(ui.shown));
    });
  }

  /** The next write to a conversation log of a buffer holding `matching` fails with ENOSPC (a full disk). */
  function failWriteOnce(matching: string): Promise<DiskFull> {
    return failWrites(dir, (bytes, failedSoFar) => failedSoFar === 0 && bytes.includes(matching));
  }

  const replacements: Array<{
    name: string;
    matching: string;
    act(question: string, answer: string): Promise<unknown>;
  }> = [
    // The new answer's first record is what fails to be written.
    { name: 'Regenerate', matching: '"status":"streaming"', act: (_q, a) => w.chat.regenerate(a) },
    { name: 'Edit & Resend', matching: 'the edited question', act: (q) => w.chat.editLast('the edited question', q) },
  ];
  for (const { name, matching, act } of replacements) {
    it(`${name} whose write fails (a full disk) keeps the old answer and says so`, async () => {
      const before = await conversation();
      const [question, answer] = before?.messages ?? [];
      assert.equal(answer?.role, 'assistant');
      double.gw.clearLog();
      const fault = await failWriteOnce(matching);
      try {
        assert.equal(await act(question?.id as string, answer?.id as string), undefined);
      } finally {
        fault.restore();
      }
      assert.equal(fault.failed(), 1);
      assert.deepEqual(await conversation(), before, 'the question and the answer are still stored');
      assert.deepEqual(
        await new ConversationStore(path.join(dir, 'conversations')).load(before?.id as string),
        before,
        'and another window reads them too',
      );
      assert.equal(double.gw.log.length, 0, 'nothing was sent');
      assert.ok(
        ui.shown.some((s) => /ENOSPC/.test(s.message) && /Nothing was changed/.test(s.message)),
        JSON.stringify(ui.shown),
      );
      const putBack = w.posts.filter((p) => p.type === 'putBack');
      if (name === 'Edit & Resend')
        assert.deepEqual(
          putBack,
          [{ type: 'putBack', conversationId: before?.id, text: 'the edited question' }],
          'the edit is back in the box',
        );
      else assert.deepEqual(putBack, [], 'nothing was typed, nothing goes back');
    });
  }

  it('Edit & Resend refused (no base address): the edited text is back in the box', async () => {
    const before = await conversation();
    const question = before?.messages[0];
    w.setBaseUrl('');
    assert.equal(await w.chat.editLast('edited while refused', question?.id as string), undefined);
    assert.deepEqual(
      w.posts.filter((p) => p.type === 'putBack'),
      [{ type: 'putBack', conversationId: before?.id, text: 'edited while refused' }],
    );
  });

  it("the conversation's own model gone: Regenerate keeps the answer", async () => {
    const before = await conversation();
    const answer = before?.messages[1];
    w.models.splice(0, 1, { ...w.models[0], id: 'another-model' });
    (w.chat.services.registry.snapshot as { keyModels?: unknown }).keyModels = ['another-model'];
    assert.equal(await w.chat.regenerate(answer?.id as string), undefined);
    assert.deepEqual(await conversation(), before);
  });
});
