/**
 * What a newcomer trips over in the chat, host side: a send without a key stores nothing and says
 * what is missing; what waits to be sent belongs to its conversation; "Chat with This Model"
 * starts a conversation of its own and the conversation says which model it uses; Export writes a
 * file where the user chose; a web link asks once.
 */
import { fake, ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HostMessage, Snapshot } from '../../../src/shared/protocol';
import { useDoubleClient } from '../../support/client';
import { until } from '../../support/until';
import { openWindow, type TestWindow } from './windows';
import { chatWithModel } from '../../../src/host/commands/modelActions';
import type { CommandContext } from '../../../src/host/commands/types';
import { openExternalLink } from '../../../src/host/links';
import { shownTitle } from '../../../src/host/chat/snapshot';

describe('Chat for a newcomer (host)', function () {
  this.timeout(60_000);
  const double = useDoubleClient(undefined, {
    timeouts: { connectMs: 5000, firstByteMs: 60_000, idleMs: 60_000, longMs: 60_000 },
  });
  let dir: string;
  let w: TestWindow;

  beforeEach(async () => {
    ui.shown = [];
    ui.answers = [];
    ui.choices = [];
    ui.saveDialogs = [];
    ui.saveTo = [];
    ui.openedExternally = [];
    ui.openedDocuments = [];
    dir = mkdtempSync(path.join(os.tmpdir(), 'mg-chat-newcomer-'));
    w = openWindow(dir, double.gw.url, double.http);
    await w.chat.sendSnapshot();
  });
  afterEach(async () => {
    w.dispose();
    await until(() => w.chat.sessions.all().length === 0, 'every answer has settled');
    rmSync(dir, { recursive: true, force: true });
  });

  const lastSnapshot = (): Snapshot => {
    const s = w.posts.filter((p): p is Extract<HostMessage, { type: 'snapshot' }> => p.type === 'snapshot').at(-1);
    if (!s) throw new Error('no snapshot was posted');
    return s.state;
  };

  it('what waits to be sent stays with its conversation: not in a new chat, not in another conversation, back in its own', async () => {
    await w.chat.send('conversation A');
    const a = w.chat.currentConversationId as string;
    await w.chat.addContext('notes.md', 'for A only');
    await w.chat.sendSnapshot();
    assert.deepEqual(
      lastSnapshot().attachments.map((x) => x.label),
      ['notes.md'],
    );
    await w.chat.newConversation();
    assert.deepEqual(lastSnapshot().attachments, [], 'a new chat starts with nothing attached');
    await w.chat.send('conversation B');
    const b = w.chat.currentConversationId as string;
    assert.notEqual(a, b);
    assert.deepEqual(lastSnapshot().attachments, []);
    await w.chat.switchTo(a);
    assert.deepEqual(
      lastSnapshot().attachments.map((x) => x.label),
      ['notes.md'],
      'back in A, its attachment waits there',
    );
    await w.chat.switchTo(b);
    assert.deepEqual(lastSnapshot().attachments, []);
  });

  it('without a key a send is refused before anything is stored, and the reason is the missing key, not "this key"', async () => {
    (w.chat.services as { keys: object }).keys = {
      onDidChange: () => ({ dispose: () => undefined }),
      has: async () => false,
    };
    const key = w.chat.shown.key;
    await w.chat.handle({ type: 'send', conversationId: key, text: 'hello?', sendId: 's1' });
    const result = w.posts.filter((p) => p.type === 'sendResult').at(-1);
    assert.deepEqual(result, { type: 'sendResult', sendId: 's1', accepted: false }, 'the view puts the text back');
    assert.deepEqual(await w.store.list(), [], 'no conversation was stored (none in History)');
    assert.equal(double.gw.log.length, 0, 'nothing went to the gateway');
    const said = ui.shown.map((s) => s.message);
    assert.ok(
      said.some((m) => /No API key is set/.test(m)),
      said.join(' | '),
    );
    assert.ok(!said.some((m) => /this key/.test(m)), `nothing blames "this key": ${said.join(' | ')}`);
  });

  it('"Chat with This Model" starts a new chat with that model; the conversation under way keeps its model and its thinking choice', async () => {
    w.models.push({ ...w.models[0], id: 'qwen-plus', provider: 'alibaba', name: 'Qwen Plus' });
    await w.chat.send('with the first model');
    const first = w.chat.currentConversationId as string;
    await w.chat.updateConversation({ thinking: 'on' });
    const ctx = { services: w.chat.services, chat: w.chat } as unknown as CommandContext;
    assert.deepEqual(await chatWithModel.run(ctx, 'qwen-plus'), { model: 'qwen-plus' });
    assert.equal(w.chat.currentConversationId, undefined, 'a new chat is shown');
    assert.equal(lastSnapshot().model, 'qwen-plus');
    assert.notEqual(lastSnapshot().thinking, 'on', 'the thinking choice stayed with the other conversation');
    const kept = await w.store.open(first, { limit: 10 });
    assert.equal(kept?.meta.model, 'gpt-4o-mini', 'the conversation under way kept its model');
    assert.equal(kept?.meta.thinking, 'on');
    assert.deepEqual(
      kept?.messages.map((m) => m.role),
      ['user', 'assistant'],
      'and nothing was added to it',
    );
  });

  it('a change of model in a conversation under way is said in it, as a notice line', async () => {
    w.models.push({ ...w.models[0], id: 'qwen-plus', provider: 'alibaba', name: 'Qwen Plus' });
    await w.chat.send('first answer');
    const id = w.chat.currentConversationId as string;
    await w.chat.handle({ type: 'selectModel', conversationId: id, model: 'qwen-plus' });
    const messages = (await w.store.load(id))?.messages ?? [];
    assert.deepEqual(
      messages.map((m) => m.role),
      ['user', 'assistant', 'notice'],
    );
    assert.deepEqual(messages.at(-1)?.notice, { kind: 'modelChange', from: 'gpt-4o-mini', to: 'qwen-plus' });
    assert.equal(lastSnapshot().messages.at(-1)?.role, 'notice', 'the view shows it');
    // Picking the model it already has says nothing.
    await w.chat.handle({ type: 'selectModel', conversationId: id, model: 'qwen-plus' });
    assert.equal((await w.store.load(id))?.messages.length, 3);
  });

  it('Edit & Resend of the first question gives the conversation the new title, in plain text; a title the user gave stays', async () => {
    await w.chat.send('**Explain** the `sort` function');
    const id = w.chat.currentConversationId as string;
    assert.equal(
      (await w.store.open(id, { limit: 0 }))?.meta.title,
      'Explain the sort function',
      'no Markdown marks in the title',
    );
    const question = (await w.store.load(id))?.messages[0];
    await w.chat.editLast('# Explain the *map* function', question?.id as string, id);
    assert.equal((await w.store.open(id, { limit: 0 }))?.meta.title, 'Explain the map function');
    await w.chat.models.writeMeta(id, { title: 'My own title' });
    const edited = (await w.store.load(id))?.messages[0];
    await w.chat.editLast('Explain the filter function', edited?.id as string, id);
    assert.equal((await w.store.open(id, { limit: 0 }))?.meta.title, 'My own title');
  });

  it('after Edit & Resend of the first question the view has been told the new title, not only the store', async () => {
    await w.chat.send('Explain the sort function');
    const id = w.chat.currentConversationId as string;
    const question = (await w.store.load(id))?.messages[0];
    await w.chat.editLast('Explain the map function', question?.id as string, id);
    // The store's watch is quiet for the shown conversation while its answer runs: the title
    // reaches the view with the answer's own snapshot, before the answer ends.
    assert.equal(shownTitle(lastSnapshot()), 'Explain the map function');
  });

  it('Export asks where to save, offering a file named after the title, writes it there and opens it', async () => {
    await w.chat.send('Sorting in TypeScript?');
    const target = path.join(dir, 'chosen.md');
    ui.saveTo.push(fake.Uri.file(target));
    const exported = await w.chat.exportMarkdown();
    assert.equal(ui.saveDialogs.length, 1);
    assert.equal(path.basename(ui.saveDialogs[0]?.defaultUri?.path ?? ''), 'Sorting in TypeScript.md');
    assert.equal(exported?.uri.fsPath, target);
    assert.equal(readFileSync(target, 'utf8'), exported?.markdown);
    assert.match(exported?.markdown ?? '', /^# Sorting in TypeScript\?/);
    // Opened without a click: an offer in a toast vanishes before a user who looked away sees it.
    await until(() => ui.openedDocuments.length === 1, 'the file was opened');
    assert.ok(ui.shown.some((s) => s.message === 'Exported the conversation to chosen.md.' && s.actions.length === 0));
    // Cancelled: nothing written, nothing opened.
    const before = ui.openedDocuments.length;
    assert.equal(await w.chat.exportMarkdown(), undefined);
    assert.equal(ui.openedDocuments.length, before);
  });

  it('a web link is confirmed once (by VS Code); a mail link asks here', async () => {
    assert.equal(await openExternalLink('https://news.example.com/a'), true);
    assert.equal(ui.shown.length, 0, "no question of ours before VS Code's own");
    assert.equal(ui.openedExternally.length, 1);
    ui.answers.push('Open');
    assert.equal(await openExternalLink('mailto:someone@example.com'), true);
    assert.equal(ui.shown.length, 1);
    assert.match(ui.shown[0]?.message ?? '', /Open mailto:someone@example.com\?/);
    assert.equal(await openExternalLink('javascript:alert(1)'), false);
    assert.equal(ui.openedExternally.length, 2);
  });
});
