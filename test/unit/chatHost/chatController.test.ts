/**
 * The chat controller with a real store and the gateway double, outside VS Code (fakeVscode.ts):
 * every answer belongs to its conversation and message, whatever the view does meanwhile.
 * Waits are on conditions (a request reached the double, a delta was posted), never fixed sleeps.
 */
// First: answers `vscode` for every host module imported after it.
import { ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConversationStore } from '../../../src/core/chat/conversationStore';
import type { HostMessage } from '../../../src/shared/protocol';
import { ChatController } from '../../../src/host/chat/chatController';
import { CHAT_MODEL, chatServices, NO_EVENT } from '../../support/chatServices';
import { useDoubleClient } from '../../support/client';

const CHAT_PATH = '/v1/chat/completions';
/** An answer that streams for a few seconds: long enough to act while it streams. */
const SLOW = '[[slow:40]] [[long:2]]';

async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Chat controller: answers bound to their conversation', function () {
  this.timeout(90_000);
  let dir: string;
  let store: ConversationStore;
  let chat: ChatController;
  let posts: HostMessage[];
  /** The registry's chat models; a test may add one. */
  let models: Array<Record<string, unknown>>;

  const double = useDoubleClient(undefined, {
    timeouts: { connectMs: 5000, firstByteMs: 60_000, idleMs: 60_000, longMs: 60_000 },
  });

  beforeEach(async () => {
    double.gw.clearLog();
    ui.shown = [];
    ui.answers = [];
    dir = mkdtempSync(path.join(os.tmpdir(), 'mg-chat-host-'));
    store = new ConversationStore(path.join(dir, 'conversations'), { watch: 'poll' });
    models = [{ ...CHAT_MODEL }];
    const registry = {
      snapshot: { updatedAt: Date.now(), models },
      onDidChange: NO_EVENT,
      refresh: async () => undefined,
    };
    const services = chatServices({ storageDir: dir, baseUrl: double.gw.url, http: double.http, registry });
    posts = [];
    chat = new ChatController(services, store);
    chat.attach({ post: (m) => posts.push(m), isLive: () => true, reload: () => undefined });
    await chat.sendSnapshot();
  });
  afterEach(async () => {
    chat.dispose();
    await until('every answer has settled', () => chat.sessions.all().length === 0);
    store.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Read through a call: the compiler would otherwise keep an earlier narrowing of the property. */
  const shownId = (): string => chat.currentConversationId as string;
  const chatRequests = () => double.gw.log.filter((e) => e.path === CHAT_PATH);
  const appendsFor = (id: string | undefined) => posts.filter((p) => p.type === 'append' && p.conversationId === id);
  const files = () => readdirSync(path.join(dir, 'conversations')).filter((n) => !n.startsWith('.') && n !== 'images');

  it('delete while the answer streams: stopped, deleted, and nothing written afterwards', async () => {
    const sending = chat.send(`${SLOW} doomed`);
    await until('a delta was posted', () => posts.some((p) => p.type === 'append'));
    const id = chat.currentConversationId;
    assert.ok(id);
    assert.ok(existsSync(path.join(dir, 'conversations', `${id}.log`)));
    ui.answers.push('Delete');
    await chat.handle({ type: 'deleteConversation', id });
    const answer = await sending;
    assert.equal(answer?.status, 'stopped', 'the stream was stopped by the delete');
    assert.deepEqual(
      files().filter((n) => n.startsWith(id)),
      [],
      'no log or metadata file of the conversation is left',
    );
    assert.equal(
      (await store.list()).some((c) => c.id === id),
      false,
    );
    assert.equal(await store.open(id), undefined);
    // Nothing the stream does later (its last checkpoint, the final update) brings it back.
    const written = store.io.bytesWritten;
    await until('every answer has settled', () => chat.sessions.all().length === 0);
    assert.equal(store.io.bytesWritten, written, 'no write after the delete');
    assert.deepEqual(
      files().filter((n) => n.startsWith(id)),
      [],
    );
    assert.notEqual(chat.currentConversationId, id, 'the view shows a new chat');
  });

  it('switch while the answer streams: it keeps streaming into its own conversation; no post of it reaches the other view', async () => {
    const other = await store.create({ title: 'Other' });
    await store.append(other.id, {
      id: 'o1',
      role: 'user',
      text: 'An older question',
      status: 'done',
      createdAt: Date.now(),
    });
    const sending = chat.send(`${SLOW} stays home`);
    await until('a delta was posted', () => posts.some((p) => p.type === 'append'));
    const home = chat.currentConversationId as string;
    await chat.handle({ type: 'switchConversation', id: other.id });
    const since = posts.length;
    const answer = await sending;
    assert.equal(answer?.status, 'done');
    const after = posts.slice(since);
    assert.deepEqual(
      after.filter(
        (p) =>
          p.type !== 'snapshot' && p.type !== 'focusInput' && p.type !== 'sendResult' && p.conversationId !== other.id,
      ),
      [],
      'no delta, message or busy post of the old conversation after the switch',
    );
    assert.ok(
      after
        .filter((p) => p.type === 'snapshot')
        .every((p) => p.type === 'snapshot' && p.state.conversationId === other.id),
    );
    const homeConversation = await store.load(home);
    assert.equal(homeConversation?.messages.at(-1)?.text, answer?.text);
    assert.match(answer?.text ?? '', /^Echo from gpt-4o-mini: stays home/);
    const otherConversation = await store.load(other.id);
    assert.deepEqual(
      otherConversation?.messages.map((m) => m.id),
      ['o1'],
      'the other conversation got nothing',
    );
  });

  it('new chat while the answer streams: both conversations stream at once, each into its own', async () => {
    const first = chat.send(`${SLOW} first`);
    await until('a delta was posted', () => posts.some((p) => p.type === 'append'));
    const firstId = chat.currentConversationId as string;
    await chat.newConversation();
    assert.equal(chat.currentConversationId, undefined);
    const second = chat.send('second');
    const [a, b] = await Promise.all([first, second]);
    const secondId = shownId();
    assert.notEqual(secondId, firstId);
    assert.equal(a?.status, 'done');
    assert.equal(b?.status, 'done');
    assert.deepEqual(
      (await store.load(firstId))?.messages.map((m) => m.text.slice(0, 30)),
      [`${SLOW} first`.slice(0, 30), a?.text.slice(0, 30)],
    );
    assert.deepEqual(
      (await store.load(secondId))?.messages.map((m) => m.text),
      ['second', 'Echo from gpt-4o-mini: second'],
    );
    assert.equal(appendsFor(firstId).length > 0, true);
    const firstDelta = posts.findIndex((p) => p.type === 'append');
    const newChatAt = posts.findIndex(
      (p, i) =>
        i > firstDelta &&
        p.type === 'snapshot' &&
        p.state.conversationId === undefined &&
        p.state.messages.length === 0,
    );
    assert.ok(newChatAt > firstDelta, 'the view showed the new, empty chat');
    assert.deepEqual(
      posts
        .slice(newChatAt)
        .filter(
          (p) =>
            p.type !== 'snapshot' && p.type !== 'focusInput' && p.type !== 'sendResult' && p.conversationId === firstId,
        ),
      [],
    );
  });

  it('a view send and `ask` racing into one conversation: exactly one request, the other is refused', async () => {
    const viewSend = chat.handle({
      type: 'send',
      conversationId: chat.shown.key,
      sendId: 's1',
      text: `${SLOW} from the view`,
    });
    const ask = chat.ask({ prompt: 'from the command' });
    await assert.rejects(ask, /still being written in this conversation/);
    await viewSend;
    assert.equal(chatRequests().length, 1);
    assert.match(chatRequests()[0]?.bodyText ?? '', /from the view/);
    const c = await store.load(chat.currentConversationId as string);
    assert.deepEqual(
      c?.messages.map((m) => m.role),
      ['user', 'assistant'],
    );
  });

  it('Retry and Send racing: one request; the refused one is told so', async () => {
    await chat.send('first question');
    const last = (await store.load(chat.currentConversationId as string))?.messages.at(-1);
    double.gw.clearLog();
    const retry = chat.regenerate(last?.id as string);
    const send = chat.send('sent while retrying');
    await Promise.all([retry, send]);
    assert.equal(chatRequests().length, 1);
    assert.ok(ui.shown.some((s) => /still being written/.test(s.message)));
  });

  it('Stop stops the answer of the conversation shown, not one streaming in the background', async () => {
    const background = chat.send(`${SLOW} background`);
    await until('a delta was posted', () => posts.some((p) => p.type === 'append'));
    await chat.newConversation();
    const shown = chat.send(`${SLOW} shown`);
    await until('the second request reached the double', () => chatRequests().length === 2);
    await until('the shown answer was stored', () => chat.shown.answer?.message !== undefined);
    chat.stop();
    assert.equal((await shown)?.status, 'stopped');
    assert.equal((await background)?.status, 'done');
  });

  it('a stale Retry (an older answer) is refused and changes nothing', async () => {
    await chat.send('one');
    await chat.send('two');
    const id = chat.currentConversationId as string;
    const before = await store.load(id);
    const older = before?.messages[1];
    assert.equal(older?.role, 'assistant');
    double.gw.clearLog();
    const result = await chat.regenerate(older?.id as string);
    assert.equal(result, undefined);
    assert.equal(chatRequests().length, 0, 'nothing was sent');
    assert.deepEqual(await store.load(id), before, 'nothing was changed');
    assert.ok(ui.shown.some((s) => /only the last answer can be retried/.test(s.message)));
    // The last answer may be retried, and it is that answer that is replaced.
    const last = before?.messages[3];
    const again = await chat.regenerate(last?.id as string);
    assert.equal(again?.status, 'done');
    const afterRetry = await store.load(id);
    assert.deepEqual(afterRetry?.messages.slice(0, 3), before?.messages.slice(0, 3));
    assert.notEqual(afterRetry?.messages[3]?.id, last?.id);
    assert.equal(afterRetry?.messages.length, 4);
  });

  it('an answer cut at max_tokens says so and Continue appends to the same message (usage adds up)', async () => {
    ui.settings['modelGateway.chat.maxTokens'] = 40;
    try {
      await chat.send('[[long:4]] write a lot');
      const id = chat.currentConversationId as string;
      const cut = (await store.load(id))?.messages.at(-1);
      assert.equal(cut?.role, 'assistant');
      assert.equal(cut?.status, 'done');
      assert.equal(cut?.finishReason, 'length', 'the length finish is kept on the stored message');
      const final = posts.filter((p) => p.type === 'message').at(-1);
      assert.equal(final?.type === 'message' ? final.message.finishReason : undefined, 'length', 'the view is told');
      double.gw.clearLog();
      const continued = await chat.continueAnswer(cut?.id as string);
      assert.equal(chatRequests().length, 1);
      const body = JSON.parse(chatRequests()[0]?.bodyText ?? '{}') as {
        messages: Array<{ role: string; content: unknown }>;
      };
      // Chat Completions: the partial answer as an assistant turn, then the instruction to go on.
      assert.deepEqual(
        body.messages.slice(-2).map((m) => m.role),
        ['assistant', 'user'],
      );
      assert.equal(body.messages.at(-2)?.content, cut?.text);
      assert.equal(body.messages.at(-1)?.content, 'Continue exactly where you stopped.');
      const after = await store.load(id);
      assert.equal(after?.messages.length, 2, 'no new message');
      const same = after?.messages.at(-1);
      assert.equal(same?.id, cut?.id);
      assert.equal(continued?.id, cut?.id);
      assert.ok(same && cut && same.text.startsWith(cut.text) && same.text.length > cut.text.length, 'the text grew');
      // The double answers the instruction with a short echo, which ends normally.
      assert.equal(same?.finishReason, 'stop');
      assert.equal(same?.status, 'done');
      assert.ok((same?.usage?.outputTokens ?? 0) > (cut?.usage?.outputTokens ?? Infinity), 'output tokens add up');
      assert.ok((same?.usage?.inputTokens ?? 0) > (cut?.usage?.inputTokens ?? Infinity), 'input tokens add up');
      // Not the last message any more: refused, nothing sent.
      await chat.send('next');
      double.gw.clearLog();
      assert.equal(await chat.continueAnswer(cut?.id as string), undefined);
      assert.equal(chatRequests().length, 0);
      assert.ok(ui.shown.some((s) => /only the last cut answer can be continued/.test(s.message)));
    } finally {
      delete ui.settings['modelGateway.chat.maxTokens'];
    }
  });

  it('Stop during Continue keeps the earlier text in the same message', async () => {
    ui.settings['modelGateway.chat.maxTokens'] = 40;
    let cutText = '';
    let cutId = '';
    try {
      await chat.send('[[long:4]] write a lot');
      const cut = (await store.load(chat.currentConversationId as string))?.messages.at(-1);
      cutText = cut?.text ?? '';
      cutId = cut?.id ?? '';
      assert.equal(cut?.finishReason, 'length');
    } finally {
      delete ui.settings['modelGateway.chat.maxTokens'];
    }
    // The continuation's stream is held open after its headers, so Stop lands while it is under
    // way however busy the machine is (the double's reply to the instruction is otherwise short).
    const before = chatRequests().length;
    double.gw.inject({
      match: { path: CHAT_PATH },
      times: 1,
      action: { type: 'stallAfterHeaders', firstChunk: ': PING\n\n' },
    });
    const continued = chat.continueAnswer(cutId);
    await until(
      'the continuation is under way',
      () => chatRequests().length > before && chat.shown.answer?.message?.id === cutId,
    );
    chat.stop();
    const final = await continued;
    assert.equal(final?.status, 'stopped');
    assert.equal(final?.id, cutId);
    assert.ok(final?.text.startsWith(cutText));
    const stored = (await store.load(chat.currentConversationId as string))?.messages.at(-1);
    assert.equal(stored?.text, final?.text);
    assert.equal(stored?.status, 'stopped');
  });

  it("Continue over Messages: the partial answer goes as the last assistant turn (a prefill), through the view's message", async () => {
    models.push({
      id: 'claude-sonnet-4-5',
      name: 'Claude Sonnet 4.5',
      provider: 'anthropic',
      ownedBy: 'anthropic',
      kind: 'chat',
      protocols: ['messages'],
      protocolSource: 'gateway',
      available: true,
      inCatalog: false,
    });
    ui.settings['modelGateway.chat.maxTokens'] = 40;
    ui.settings['modelGateway.chat.thinking'] = 'off';
    try {
      await chat.handle({ type: 'selectModel', conversationId: chat.shown.key, model: 'claude-sonnet-4-5' });
      await chat.send('[[long:4]] write a lot');
      const id = chat.currentConversationId as string;
      const cut = (await store.load(id))?.messages.at(-1);
      assert.equal(cut?.protocol, 'messages');
      assert.equal(cut?.finishReason, 'length', 'stop_reason max_tokens is a length finish');
      double.gw.clearLog();
      await chat.handle({ type: 'continue', conversationId: chat.shown.key, messageId: cut?.id as string });
      const requests = double.gw.log.filter((e) => e.path === '/v1/messages');
      assert.equal(requests.length, 1);
      const body = JSON.parse(requests[0]?.bodyText ?? '{}') as { messages: Array<{ role: string; content: unknown }> };
      assert.equal(body.messages.at(-1)?.role, 'assistant');
      assert.equal(
        JSON.stringify(body.messages.at(-1)?.content).includes(cut?.text.trimEnd().slice(-10) ?? '\u0000'),
        true,
      );
      const same = (await store.load(id))?.messages;
      assert.equal(same?.length, 2);
      assert.equal(same?.at(-1)?.id, cut?.id);
      assert.ok(
        same?.at(-1)?.text.startsWith(cut?.text ?? '\u0000') &&
          (same.at(-1)?.text.length ?? 0) > (cut?.text.length ?? 0),
      );
    } finally {
      delete ui.settings['modelGateway.chat.maxTokens'];
      delete ui.settings['modelGateway.chat.thinking'];
    }
  });

  it('the request carries only the last `historyMessages` messages, read from the store', async () => {
    ui.settings['modelGateway.chat.historyMessages'] = 3;
    try {
      await chat.send('q1');
      await chat.send('q2');
      double.gw.clearLog();
      await chat.send('q3');
      const body = JSON.parse(chatRequests()[0]?.bodyText ?? '{}') as {
        messages: Array<{ role: string; content: string }>;
      };
      assert.deepEqual(
        body.messages.filter((m) => m.role !== 'system').map((m) => m.content),
        ['q2', 'Echo from gpt-4o-mini: q2', 'q3'],
      );
    } finally {
      delete ui.settings['modelGateway.chat.historyMessages'];
    }
  });

  it('thinking: a new conversation starts from the setting, keeps its own choice afterwards, and sends it in the model’s form', async () => {
    models.push({
      id: 'glm-4.6',
      name: 'GLM-4.6',
      provider: 'zhipu_4v',
      ownedBy: 'zhipu_4v',
      kind: 'chat',
      protocols: ['chatCompletions'],
      protocolSource: 'gateway',
      available: true,
      inCatalog: true,
      catalog: { id: 'glm-4.6', reasoning: true },
    });
    const lastSnapshot = () =>
      posts.filter((p): p is Extract<HostMessage, { type: 'snapshot' }> => p.type === 'snapshot').at(-1)?.state;
    const sentThinking = () => (JSON.parse(chatRequests().at(-1)?.bodyText ?? '{}') as { thinking?: unknown }).thinking;
    ui.settings['modelGateway.chat.thinking'] = 'off';
    try {
      await chat.handle({ type: 'selectModel', conversationId: chat.shown.key, model: 'glm-4.6' });
      assert.equal(lastSnapshot()?.thinking, 'off', 'a new chat shows the setting');
      assert.deepEqual(lastSnapshot()?.models.find((m) => m.id === 'glm-4.6')?.thinking, {
        choices: ['auto', 'off', 'on'],
      });
      assert.equal(lastSnapshot()?.models.find((m) => m.id === 'gpt-4o-mini')?.thinking, undefined);
      await chat.send('q1');
      assert.deepEqual(sentThinking(), { type: 'disabled' });
      const id = shownId();
      assert.equal((await store.open(id, { limit: 0 }))?.meta.thinking, 'off', 'stored with the conversation');
      // The setting changes: this conversation keeps its own choice.
      ui.settings['modelGateway.chat.thinking'] = 'on';
      await chat.send('q2');
      assert.deepEqual(sentThinking(), { type: 'disabled' });
      await chat.handle({ type: 'setThinking', conversationId: chat.shown.key, choice: 'on' });
      assert.equal(lastSnapshot()?.thinking, 'on');
      await chat.send('q3');
      assert.deepEqual(sentThinking(), { type: 'enabled' });
      assert.equal((await store.open(id, { limit: 0 }))?.meta.thinking, 'on');
      await chat.newConversation();
      assert.equal(lastSnapshot()?.thinking, 'on', 'a new chat starts from the setting again');
    } finally {
      delete ui.settings['modelGateway.chat.thinking'];
    }
  });

  it("another window's changes reach this window's list without a reload", async () => {
    const other = new ConversationStore(path.join(dir, 'conversations'), { watch: 'poll' });
    try {
      const made = await other.create({ title: 'Made in another window' });
      await until('a snapshot lists it', () =>
        posts.some((p) => p.type === 'snapshot' && p.state.conversations.some((c) => c.id === made.id)),
      );
      await other.delete(made.id);
      await until('a snapshot no longer lists it', () => {
        const last = posts.filter((p) => p.type === 'snapshot').at(-1);
        return last?.type === 'snapshot' && !last.state.conversations.some((c) => c.id === made.id);
      });
    } finally {
      other.dispose();
    }
  });

  it('a damaged latest conversation is set aside and reported; the chat keeps working', async () => {
    await chat.send('a good conversation');
    const id = chat.currentConversationId as string;
    chat.dispose();
    // Not one line of it is a record (a record this version cannot read would cost only itself).
    writeFileSync(path.join(dir, 'conversations', `${id}.log`), 'not a conversation log\n\u0000\u0001\n');
    const reopened = new ConversationStore(path.join(dir, 'conversations'), {
      watch: 'poll',
      onProblem: (p) => chat.reportStoreProblem(p),
    });
    chat = new ChatController(chat.services, reopened);
    ui.shown = [];
    posts = [];
    chat.attach({ post: (m) => posts.push(m), isLive: () => true, reload: () => undefined });
    await chat.sendSnapshot();
    assert.equal(posts.at(-1)?.type, 'snapshot');
    assert.equal(chat.currentConversationId, undefined, 'a new chat instead of the damaged one');
    const answer = await chat.send('still works');
    assert.equal(answer?.status, 'done');
    await chat.sendSnapshot();
    const notices = ui.shown.filter((n) => /damaged conversation was set aside as/.test(n.message));
    assert.equal(notices.length, 1, `told once: ${JSON.stringify(ui.shown)}`);
    assert.match(
      notices[0]?.message ?? '',
      new RegExp(`set aside as ${id}\\.log\\.damaged-.*; the chat keeps working`),
    );
    reopened.dispose();
  });
});
