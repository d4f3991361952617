/**
 * A model change the user did not make is said in the conversation (a stored notice, never sent to
 * a model), and a conversation whose model the key can no longer use asks which model to continue
 * with instead of moving to another silently. The controller runs with a real store and the
 * gateway double, outside VS Code (fakeVscode.ts).
 */
// First: answers `vscode` for every host module imported after it.
import { ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { toMarkdown } from '../../../src/core/chat/conversationForms';
import { ConversationStore } from '../../../src/core/chat/conversationStore';
import { type StoredMessage } from '../../../src/core/chat/store/log';
import type { ModelInfo } from '../../../src/core/models/types';
import type { HostMessage, Snapshot } from '../../../src/shared/protocol';
import { ChatController } from '../../../src/host/chat/chatController';
import { toRequestMessages } from '../../../src/host/chat/history';
import { lastSpoken } from '../../../src/core/chat/turns';
import { chatServices, NO_EVENT } from '../../support/chatServices';
import { useDoubleClient } from '../../support/client';
import { chatModel } from '../../support/models';

const CHAT_PATH = '/v1/chat/completions';

function chatModelOf(id: string, provider = 'openai'): ModelInfo {
  return chatModel(id, { provider, ownedBy: provider });
}

const notice = (id: string, from: string, to: string): StoredMessage => ({
  id,
  role: 'notice',
  text: '',
  status: 'done',
  notice: { kind: 'modelChange', from, to, reason: 'modelGone' },
  createdAt: 3,
});

describe('Model changes said in the conversation', function () {
  this.timeout(60_000);

  describe('the stored form', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'mg-notice-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('a notice survives a reload (a fresh store reads it from the file) and is an italic line of the export', async () => {
      const store = new ConversationStore(dir);
      const c = await store.create({ title: 'Switched', model: 'gpt-5' });
      await store.append(c.id, { id: 'u1', role: 'user', text: 'hi', status: 'done', createdAt: 1 });
      await store.append(c.id, notice('n1', 'gpt-5', 'gpt-4o-mini'));
      const again = await new ConversationStore(dir).load(c.id);
      assert.deepEqual(
        again?.messages.map((m) => m.role),
        ['user', 'notice'],
      );
      assert.deepEqual(again?.messages[1]?.notice, {
        kind: 'modelChange',
        from: 'gpt-5',
        to: 'gpt-4o-mini',
        reason: 'modelGone',
      });
      const markdown = toMarkdown(again!);
      assert.match(markdown, /\n_gpt-5 is no longer available with this API key; continuing with gpt-4o-mini\._\n/);
      assert.doesNotMatch(markdown, /## Assistant/, 'a notice is no answer');
    });

    it('logs written before notices existed still load, and a reason a newer version wrote reads as unset', async () => {
      // A log line by line as the previous version wrote it (no notice anywhere).
      const meta = { id: 'old1', title: 'Old', createdAt: 1, updatedAt: 2, model: 'gpt-5' };
      const lines = [
        { k: 'm', at: 1, meta },
        { k: 'a', at: 1, i: 0, m: { id: 'u1', role: 'user', text: 'q', status: 'done', createdAt: 1 } },
        {
          k: 'a',
          at: 2,
          i: 1,
          m: { id: 'a1', role: 'assistant', text: 'a', status: 'done', model: 'gpt-5', createdAt: 2 },
        },
        {
          k: 'a',
          at: 3,
          i: 2,
          m: {
            id: 'n1',
            role: 'notice',
            text: '',
            status: 'done',
            notice: { kind: 'modelChange', from: 'gpt-5', to: 'o3', reason: 'aReasonFromTheFuture' },
            createdAt: 3,
          },
        },
      ];
      writeFileSync(path.join(dir, 'old1.log'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
      const problems: unknown[] = [];
      const loaded = await new ConversationStore(dir, { onProblem: (p) => problems.push(p) }).load('old1');
      assert.deepEqual(problems, []);
      assert.deepEqual(
        loaded?.messages.map((m) => m.id),
        ['u1', 'a1', 'n1'],
      );
      assert.equal(loaded?.messages[0]?.notice, undefined);
      assert.deepEqual(loaded?.messages[2]?.notice, {
        kind: 'modelChange',
        from: 'gpt-5',
        to: 'o3',
        reason: undefined,
      });
      assert.match(toMarkdown(loaded!), /_Model switched from gpt-5 to o3\._/);
    });

    it('conversations of the format before logs migrate as before (they have no notices)', async () => {
      writeFileSync(
        path.join(dir, 'c1.json'),
        JSON.stringify({
          id: 'c1',
          title: 'One',
          createdAt: 1,
          updatedAt: 5,
          model: 'gpt-5',
          messages: [{ id: 'u1', role: 'user', text: 'hello', status: 'done', createdAt: 1 }],
        }),
      );
      const loaded = await new ConversationStore(dir).load('c1');
      assert.deepEqual(
        loaded?.messages.map((m) => [m.role, m.text]),
        [['user', 'hello']],
      );
    });

    it('history for a request leaves notices out (every protocol builds its request from it)', async () => {
      const store = new ConversationStore(dir);
      const messages: StoredMessage[] = [
        { id: 'u1', role: 'user', text: 'first', status: 'done', createdAt: 1 },
        { id: 'a1', role: 'assistant', text: 'answer', status: 'done', createdAt: 2 },
        // With words of its own (as a newer version might store): still not history.
        { ...notice('n1', 'gpt-5', 'gpt-4o-mini'), text: 'Model switched' },
        { id: 'u2', role: 'user', text: 'second', status: 'done', createdAt: 4 },
      ];
      const sent = await toRequestMessages(store, messages, chatModelOf('gpt-4o-mini'), {
        historyMessages: 10,
        imageInputModels: [],
      });
      assert.deepEqual(
        sent.map((m) => [m.role, m.content]),
        [
          ['user', 'first'],
          ['assistant', 'answer'],
          ['user', 'second'],
        ],
      );
      assert.deepEqual(
        lastSpoken(messages.slice(0, 3)),
        { last: messages[1], after: [messages[2]] },
        'the last answer is found past the notices after it',
      );
    });
  });

  describe('in the chat controller', () => {
    let dir: string;
    let store: ConversationStore;
    let chat: ChatController;
    let posts: HostMessage[];
    let snapshotState: { updatedAt: number; models: ModelInfo[]; keyModels?: unknown[] };
    let keyListeners: Array<() => void>;

    const double = useDoubleClient(undefined, {
      timeouts: { connectMs: 5000, firstByteMs: 60_000, idleMs: 60_000, longMs: 60_000 },
    });

    beforeEach(async () => {
      double.gw.clearLog();
      ui.shown = [];
      ui.answers = [];
      dir = mkdtempSync(path.join(os.tmpdir(), 'mg-notice-host-'));
      store = new ConversationStore(path.join(dir, 'conversations'), { watch: 'poll' });
      keyListeners = [];
      // The key's list was read: gpt-5, qwen-plus and gpt-4o-mini (all chat models the double knows).
      snapshotState = {
        updatedAt: Date.now(),
        models: [chatModelOf('qwen-plus', 'alibaba'), chatModelOf('gpt-5'), chatModelOf('gpt-4o-mini')],
        keyModels: [],
      };
      const services = chatServices({
        storageDir: dir,
        baseUrl: double.gw.url,
        http: double.http,
        registry: {
          get snapshot() {
            return snapshotState;
          },
          onDidChange: NO_EVENT,
          refresh: async () => undefined,
          find: (id: string) => snapshotState.models.find((m) => m.id === id),
        },
        keys: {
          onDidChange: (listener: () => void) => (keyListeners.push(listener), { dispose: () => undefined }),
          has: async () => true,
        },
      });
      posts = [];
      chat = new ChatController(services, store);
      chat.attach({ post: (m) => posts.push(m), isLive: () => true, reload: () => undefined });
      await chat.sendSnapshot();
    });
    afterEach(() => {
      chat.dispose();
      store.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    const lastSnapshot = (): Snapshot => {
      const found = posts.filter((p) => p.type === 'snapshot').at(-1);
      assert.ok(found?.type === 'snapshot');
      return found.state;
    };
    const stored = async () => (await store.load(chat.currentConversationId as string))?.messages ?? [];
    const requestBodies = () =>
      double.gw.log
        .filter((e) => e.path === CHAT_PATH)
        .map(
          (e) =>
            JSON.parse(e.bodyText ?? '{}') as { model: string; messages: Array<{ role: string; content: unknown }> },
        );

    /** A conversation on gpt-5 with one question and answer, then the key's list loses gpt-5. */
    async function strandOnGpt5(): Promise<void> {
      await chat.selectModel('gpt-5');
      assert.equal((await chat.send('first question'))?.status, 'done');
      snapshotState = {
        ...snapshotState,
        models: snapshotState.models.filter((m) => m.id !== 'gpt-5'),
        updatedAt: Date.now(),
      };
      await chat.sendSnapshot();
    }

    it('the model left the list: no silent switch; the conversation asks, Send waits, a pick is recorded and Send works', async () => {
      await strandOnGpt5();
      const state = lastSnapshot();
      assert.deepEqual(
        state.modelGone,
        { model: 'gpt-5', choices: ['gpt-4o-mini', 'qwen-plus'], keyChanged: false },
        'the closest kin first',
      );
      assert.equal(state.model, 'gpt-5', "the header still names the conversation's own model (as not available)");
      assert.equal(chat.selectedModel(), undefined, 'no other model stands in silently');

      double.gw.clearLog();
      const before = (await stored()).length;
      await assert.rejects(
        chat.send('while stranded'),
        /Pick the model to continue with: gpt-5 is not available with this API key\./,
      );
      assert.equal((await stored()).length, before, 'the refused question was not stored');
      assert.equal(requestBodies().length, 0, 'nothing was sent');
      await chat.regenerate((await stored()).at(-1)!.id);
      assert.match(ui.shown.at(-1)?.message ?? '', /gpt-5 is not available/, 'Retry says why it waits');
      assert.equal((await stored()).length, before, 'Retry changed nothing');

      await chat.handle({ type: 'selectModel', conversationId: chat.shown.key, model: 'gpt-4o-mini' });
      const messages = await stored();
      assert.deepEqual(messages.at(-1)?.notice, {
        kind: 'modelChange',
        from: 'gpt-5',
        to: 'gpt-4o-mini',
        reason: 'modelGone',
      });
      assert.equal(lastSnapshot().modelGone, undefined);
      assert.equal(lastSnapshot().messages.at(-1)?.role, 'notice', 'the view shows the notice');

      const answer = await chat.send('second question');
      assert.equal(answer?.status, 'done');
      assert.equal(answer?.model, 'gpt-4o-mini');
      const body = requestBodies().at(-1);
      assert.equal(body?.model, 'gpt-4o-mini');
      assert.deepEqual(
        body?.messages.map((m) => m.role),
        ['user', 'assistant', 'user'],
        'the notice is not history',
      );
      assert.ok(!JSON.stringify(body).includes('gpt-5 is'), 'no notice text went to the model');
      assert.deepEqual(
        (await stored()).map((m) => m.role),
        ['user', 'assistant', 'notice', 'user', 'assistant'],
      );
    });

    it('remembers the key with the model; a removed key is treated like a model that is gone', async () => {
      // gpt-4o-mini is listed by two keys and called with the team key (the user's pick).
      const keyed = (m: ModelInfo, keyIds: string[], keyId = keyIds[0]): ModelInfo => ({ ...m, keyIds, keyId });
      snapshotState = {
        updatedAt: Date.now(),
        models: [
          keyed(chatModelOf('gpt-4o-mini'), ['legacy', 'k-team'], 'k-team'),
          keyed(chatModelOf('qwen-plus', 'alibaba'), ['legacy']),
        ],
        keyModels: [],
      };
      await chat.selectModel('gpt-4o-mini');
      assert.equal((await chat.send('first question'))?.status, 'done');
      const metaOf = async () => (await store.open(chat.currentConversationId as string, { limit: 0 }))?.meta;
      assert.equal((await metaOf())?.keyId, 'k-team');

      // The team key is removed: the model is still listed, by the other key, but not with the conversation's key.
      snapshotState = {
        updatedAt: Date.now(),
        models: [keyed(chatModelOf('gpt-4o-mini'), ['legacy']), keyed(chatModelOf('qwen-plus', 'alibaba'), ['legacy'])],
        keyModels: [],
      };
      await chat.sendSnapshot();
      assert.equal(lastSnapshot().modelGone?.model, 'gpt-4o-mini');
      assert.equal(chat.selectedModel(), undefined, 'no other key stands in silently');
      double.gw.clearLog();
      await assert.rejects(chat.send('while stranded'), /gpt-4o-mini is not available/);
      assert.equal(requestBodies().length, 0, 'nothing was sent');

      // Picking it again calls it with the key that lists it now, and the conversation remembers that key.
      await chat.handle({ type: 'selectModel', conversationId: chat.shown.key, model: 'gpt-4o-mini' });
      assert.equal(lastSnapshot().modelGone, undefined);
      assert.equal((await chat.send('second question'))?.status, 'done');
      assert.equal((await metaOf())?.keyId, 'legacy');
    });

    it('after a key change the pick is recorded as such; the list being read again says nothing yet', async () => {
      await chat.selectModel('gpt-5');
      await chat.send('first');
      for (const l of keyListeners) l();
      // Between the key change and the new list: the list is not known, nothing is said.
      snapshotState = { updatedAt: Date.now(), models: [] };
      await chat.sendSnapshot();
      assert.equal(lastSnapshot().modelGone, undefined);
      snapshotState = { updatedAt: Date.now(), models: [chatModelOf('qwen-plus', 'alibaba')], keyModels: [] };
      await chat.sendSnapshot();
      assert.deepEqual(lastSnapshot().modelGone, { model: 'gpt-5', choices: ['qwen-plus'], keyChanged: true });
      await chat.handle({ type: 'selectModel', conversationId: chat.shown.key, model: 'qwen-plus' });
      assert.equal((await stored()).at(-1)?.notice?.reason, 'keyChanged');
      // The model coming back later changes nothing: the conversation is on qwen-plus now.
      snapshotState = {
        updatedAt: Date.now(),
        models: [chatModelOf('qwen-plus', 'alibaba'), chatModelOf('gpt-5')],
        keyModels: [],
      };
      await chat.sendSnapshot();
      assert.equal(lastSnapshot().model, 'qwen-plus');
    });

    it('Retry and Edit of the last answer and question still work past a notice, and keep it', async () => {
      await strandOnGpt5();
      await chat.handle({ type: 'selectModel', conversationId: chat.shown.key, model: 'gpt-4o-mini' });
      const [, answer] = await stored();
      const retried = await chat.regenerate(answer!.id);
      assert.equal(retried?.status, 'done');
      assert.equal(retried?.model, 'gpt-4o-mini');
      assert.deepEqual(
        (await stored()).map((m) => m.role),
        ['user', 'notice', 'assistant'],
        'the retried answer follows the record of the switch',
      );
      const question = (await stored())[0]!;
      const edited = await chat.editLast('first question, edited', question.id);
      assert.equal(edited?.status, 'done');
      assert.deepEqual(
        (await stored()).map((m) => [m.role, m.role === 'notice' ? m.notice?.to : m.text.slice(0, 22)]),
        [
          ['user', 'first question, edited'],
          ['notice', 'gpt-4o-mini'],
          ['assistant', edited!.text.slice(0, 22)],
        ],
      );
    });

    it('another window sees the notice: it is in the file', async () => {
      await strandOnGpt5();
      await chat.handle({ type: 'selectModel', conversationId: chat.shown.key, model: 'qwen-plus' });
      const id = chat.currentConversationId as string;
      const other = new ConversationStore(path.join(dir, 'conversations'));
      assert.equal((await other.load(id))?.messages.at(-1)?.notice?.to, 'qwen-plus');
      assert.match(readFileSync(path.join(dir, 'conversations', `${id}.log`), 'utf8'), /"role":"notice"/);
    });

    it('a new chat is never stranded: it takes a model the key has', async () => {
      await chat.selectModel('gpt-5');
      await chat.newConversation();
      snapshotState = { ...snapshotState, models: snapshotState.models.filter((m) => m.id !== 'gpt-5') };
      await chat.sendSnapshot();
      assert.equal(lastSnapshot().modelGone, undefined);
      assert.equal(lastSnapshot().model, 'qwen-plus');
    });
  });
});
