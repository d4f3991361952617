/**
 * Every intent of the view names its conversation, and the host acts on that one whatever it shows
 * by then; a send is acknowledged as stored or refused (the view puts the text back on a refusal);
 * a scripted question leaves the user's attachments alone.
 */
import { ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HostMessage } from '../../../src/shared/protocol';
import { useDoubleClient } from '../../support/client';
import { until } from '../../support/until';
import { openWindow, type TestWindow } from './windows';

const SLOW = '[[slow:40]] [[long:2]]';

describe('Chat: intents name their conversation; sends are acknowledged', function () {
  this.timeout(60_000);
  const double = useDoubleClient(undefined, {
    timeouts: { connectMs: 5000, firstByteMs: 60_000, idleMs: 60_000, longMs: 60_000 },
  });
  let dir: string;
  let w: TestWindow;

  beforeEach(async () => {
    ui.shown = [];
    dir = mkdtempSync(path.join(os.tmpdir(), 'mg-chat-intents-'));
    w = openWindow(dir, double.gw.url, double.http);
    await w.chat.sendSnapshot();
  });
  afterEach(async () => {
    w.dispose();
    await until(() => w.chat.sessions.all().length === 0, 'every answer has settled');
    rmSync(dir, { recursive: true, force: true });
  });

  const results = () =>
    w.posts.filter((p): p is Extract<HostMessage, { type: 'sendResult' }> => p.type === 'sendResult');

  it('a send is accepted once its question is stored (before the answer ends), refused with nothing stored otherwise', async () => {
    const key = w.chat.shown.key;
    const sending = w.chat.handle({ type: 'send', conversationId: key, text: `${SLOW} first`, sendId: 's1' });
    await until(() => results().length === 1, 'the send was acknowledged');
    assert.deepEqual(results()[0], { type: 'sendResult', sendId: 's1', accepted: true });
    assert.ok(w.chat.sessions.all().length === 1, 'acknowledged while the answer is still being written');
    const id = w.chat.currentConversationId as string;
    // Busy in this conversation: refused, and the view is told so it puts the text back.
    await w.chat.handle({ type: 'send', conversationId: id, text: 'while busy', sendId: 's2' });
    assert.deepEqual(results()[1], { type: 'sendResult', sendId: 's2', accepted: false });
    await sending;
    w.setBaseUrl('');
    await w.chat.handle({ type: 'send', conversationId: id, text: 'no base address', sendId: 's3' });
    assert.deepEqual(results()[2], { type: 'sendResult', sendId: 's3', accepted: false });
    assert.ok(ui.shown.some((s) => /still being written/.test(s.message)));
    assert.ok(ui.shown.some((s) => /No gateway base address/.test(s.message)));
    const texts = (await w.store.load(id))?.messages.filter((m) => m.role === 'user').map((m) => m.text);
    assert.deepEqual(texts, [`${SLOW} first`], 'nothing refused was stored');
  });

  it('send, stop, model and search act on the conversation named, not the one shown by then', async () => {
    await w.chat.send('in A');
    const a = w.chat.currentConversationId as string;
    await w.chat.newConversation();
    await w.chat.send('in B');
    const b = w.chat.currentConversationId as string;
    w.models.push({ ...w.models[0], id: 'other-model' });
    // The view still showed A when these were posted; the host shows B.
    await w.chat.handle({ type: 'selectModel', conversationId: a, model: 'other-model' });
    await w.chat.handle({ type: 'setSearch', conversationId: a, enabled: true });
    assert.equal((await w.store.open(a, { limit: 0 }))?.meta.model, 'other-model');
    assert.equal((await w.store.open(a, { limit: 0 }))?.meta.enableSearch, true);
    assert.notEqual((await w.store.open(b, { limit: 0 }))?.meta.model, 'other-model');
    assert.notEqual((await w.store.open(b, { limit: 0 }))?.meta.enableSearch, true);
    // Back to the model the double answers for, again named for A while B is shown.
    await w.chat.handle({ type: 'selectModel', conversationId: a, model: 'gpt-4o-mini' });
    const sending = w.chat.handle({ type: 'send', conversationId: a, text: `${SLOW} second in A`, sendId: 's1' });
    await until(() => w.chat.sessions.answerIn(a)?.message !== undefined, 'A answers');
    w.chat.stop(b);
    assert.equal(w.chat.sessions.answerIn(a)?.abort.signal.aborted, false, 'a Stop named for B leaves A alone');
    await w.chat.handle({ type: 'stop', conversationId: a });
    await sending;
    const inA = (await w.store.load(a))?.messages ?? [];
    assert.deepEqual(
      inA.filter((m) => m.role !== 'notice').map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant'],
    );
    assert.equal(inA.at(-1)?.status, 'stopped');
    assert.deepEqual(
      (await w.store.load(b))?.messages.map((m) => m.text),
      ['in B', 'Echo from gpt-4o-mini: in B'],
    );
    assert.equal(w.chat.currentConversationId, b, 'the view still shows B');
  });

  it('a new chat named by its key after it was stored elsewhere still receives the send', async () => {
    const key = w.chat.shown.key;
    await w.chat.send('first in the new chat');
    const id = w.chat.currentConversationId as string;
    await w.chat.newConversation();
    await w.chat.handle({ type: 'send', conversationId: key, text: 'named by the old key', sendId: 's1' });
    assert.deepEqual(results().at(-1), { type: 'sendResult', sendId: 's1', accepted: true });
    assert.equal((await w.store.load(id))?.messages.at(-2)?.text, 'named by the old key');
  });

  it('a conversation is one object whoever names it (its draft key, its id, a switch to it), and its tray goes with it', async () => {
    const key = w.chat.shown.key;
    const first = w.chat.shown;
    await w.chat.addContext('notes.md', 'for this chat');
    const sending = w.chat.handle({ type: 'send', conversationId: key, text: `${SLOW} first`, sendId: 's1' });
    await until(() => results().length === 1, 'the send was acknowledged');
    await w.chat.addContext('more.md', 'attached while it answers');
    const id = w.chat.currentConversationId as string;
    await w.chat.newConversation();
    assert.equal(w.chat.conversations.targetNow(key), first, 'named by the key the view knew');
    assert.equal(w.chat.conversations.targetNow(id), first, 'named by its id');
    assert.equal(await w.chat.switchTo(id), first, 'shown again');
    assert.deepEqual(
      w.chat.tray.itemsFor(first).map((a) => a.label),
      ['more.md'],
      'what was attached while it answered waits for its next message',
    );
    await sending;
  });

  it("a scripted ask leaves the user's attachments for the user's next message", async () => {
    await w.chat.addContext('notes.md', 'the user attached this');
    const result = await w.chat.ask({ prompt: 'scripted' });
    const question = (await w.store.load(result.conversationId))?.messages[0];
    assert.equal(question?.text, 'scripted');
    assert.equal(question?.context, undefined, 'the scripted question took nothing the user attached');
    assert.deepEqual(
      w.chat.tray.itemsFor(w.chat.shown).map((a) => a.label),
      ['notes.md'],
    );
    await w.chat.send('now the user');
    const mine = (await w.store.load(result.conversationId))?.messages.at(-2);
    assert.equal(mine?.context, 'the user attached this');
    assert.deepEqual(w.chat.tray.itemsFor(w.chat.shown), []);
  });

  it('a scripted ask with withAttachments sends what the user attached, as Send would, and they wait no more', async () => {
    await w.chat.addContext('notes.md', 'the user attached this');
    const result = await w.chat.ask({ prompt: 'scripted, with them', withAttachments: true });
    const question = (await w.store.load(result.conversationId))?.messages[0];
    assert.equal(question?.context, 'the user attached this');
    assert.deepEqual(w.chat.tray.itemsFor(w.chat.shown), []);
  });
});
