/**
 * Model-based interleavings: two windows (two chat controllers, each with its own store instance on
 * one folder) get random sequences of send / stop / retry / edit / continue / delete / switch / new /
 * ask, started without waiting for each other, while the gateway double answers at random paces.
 * What the store is asked to do is recorded on the way (questions and answers stored, messages
 * removed by a retry or an edit, conversations deleted); after each sequence:
 * - every stored question and every finished answer is on disk once, unless a later retry or edit
 *   replaced it or its conversation was deleted;
 * - nothing deleted comes back;
 * - no conversation ever had two answers streaming, and none is left streaming;
 * - every text sent from a view was acknowledged once: stored, or refused (the view puts it back).
 * fast-check prints the seed and the failing sequence; the runs are bounded for a busy machine.
 */
import { ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import type { StoredMessage } from '../../../src/core/chat/store/log';
import type { HostMessage } from '../../../src/shared/protocol';
import { useDoubleClient } from '../../support/client';
import { until } from '../../support/until';
import { openWindow, type TestWindow } from './windows';

type Step =
  | { kind: 'send' | 'ask'; window: number; pace: number }
  | { kind: 'stop' | 'retry' | 'edit' | 'continue' | 'delete' | 'new' | 'wait' | 'follow'; window: number }
  | { kind: 'switch'; window: number; pick: number };

const windowIndex = fc.integer({ min: 0, max: 1 });
const pace = fc.constantFrom(0, 5, 25, 40);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('send' as const), window: windowIndex, pace }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('ask' as const), window: windowIndex, pace }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom(
        'stop' as const,
        'retry' as const,
        'edit' as const,
        'continue' as const,
        'delete' as const,
        'new' as const,
      ),
      window: windowIndex,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('wait' as const), window: windowIndex }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('switch' as const), window: windowIndex, pick: fc.nat(5) }) },
  // The window shows what the other one shows: the two then act on one conversation.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('follow' as const), window: windowIndex }) },
);

/** What the two windows asked of their stores, as it happened. */
interface Record {
  /** Messages stored (questions, answer placeholders, notices) and answers stored in their final state, by id. */
  stored: Map<string, { conversation: string; message: StoredMessage }>;
  /** Ids a retry or an edit removed (they and what followed them at that moment). */
  replaced: Set<string>;
  deleted: Set<string>;
  /** An answer started while another was streaming in the same conversation. */
  doubleStreams: string[];
}

describe('Chat: two windows, random interleavings', function () {
  this.timeout(600_000);
  const double = useDoubleClient(undefined, {
    timeouts: { connectMs: 10_000, firstByteMs: 60_000, idleMs: 60_000, longMs: 60_000 },
  });

  it('keeps every question and answer once, brings nothing deleted back, streams one answer per conversation and loses no typed text', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 12 }), async (steps) => {
        const dir = mkdtempSync(path.join(os.tmpdir(), `mg-chat-interleave-${run++}-`));
        // Claims expire far later than any stall of a busy machine: a claim seen unrefreshed for the
        // expiry is free to take (store/claims.ts), and the window holding it stops only at its next
        // heartbeat, so with a 1 s expiry a stalled heartbeat let the other window start an answer
        // while the first still streamed. Taking over a stale claim is the windows test's business.
        const windows = [0, 1].map(() =>
          openWindow(dir, double.gw.url, double.http, { heartbeatMs: 100, expiryMs: 120_000 }),
        );
        const record: Record = { stored: new Map(), replaced: new Set(), deleted: new Set(), doubleStreams: [] };
        for (const w of windows) watch(w, windows, record);
        const sent = new Map<string, string>();
        const running: Array<Promise<unknown>> = [];
        let n = 0;
        try {
          for (const w of windows) await w.chat.sendSnapshot();
          for (const s of steps) {
            const w = windows[s.window] as TestWindow;
            const other = windows[1 - s.window] as TestWindow;
            // What the view shows changes before the next click (a switch is quick); answers run on.
            if (s.kind === 'follow' || s.kind === 'switch' || s.kind === 'new') {
              await (s.kind === 'follow' ? follow(w, other) : act(w, s, ++n, sent))?.catch(() => undefined);
              continue;
            }
            const work = act(w, s, ++n, sent);
            if (work) running.push(work.catch(() => undefined));
            // Some steps wait for what is running; the others interleave with it.
            if (s.kind === 'wait' && running.length) await Promise.race(running);
            else await new Promise((r) => setImmediate(r));
          }
          await Promise.all(running);
          await until(() => windows.every((w) => w.chat.sessions.all().length === 0), 'every answer has ended', 60_000);
          await check(windows, record, sent);
        } finally {
          for (const w of windows) w.dispose();
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 30, endOnFailure: true },
    );
  });
});

function follow(w: TestWindow, other: TestWindow): Promise<unknown> | undefined {
  const id = other.chat.currentConversationId;
  return id ? w.chat.switchTo(id) : undefined;
}

/** Starts what a step does in its window; the promise settles when it has ended. */
function act(w: TestWindow, s: Step, n: number, sent: Map<string, string>): Promise<unknown> | undefined {
  const chat = w.chat;
  // The slowest pace streams a longer answer, so that the other window acts while it streams.
  const marker = (p: number): string => (p >= 40 ? `[[slow:${p}]] [[long:1]] ` : p ? `[[slow:${p}]] ` : '');
  switch (s.kind) {
    case 'send': {
      const sendId = `s${n}`;
      const text = `${marker(s.pace)}question ${n}`;
      sent.set(sendId, text);
      return chat.handle({ type: 'send', conversationId: chat.shown.key, text, sendId });
    }
    case 'ask':
      return chat.ask({ prompt: `${marker(s.pace)}asked ${n}` });
    case 'stop':
      chat.stop();
      return undefined;
    case 'new':
      return chat.newConversation();
    case 'wait':
    case 'follow':
      return undefined;
    case 'switch':
      return chat.store.list().then((list) => {
        const pick = list[s.pick % Math.max(1, list.length)];
        return pick ? chat.switchTo(pick.id) : undefined;
      });
    case 'delete': {
      const id = chat.currentConversationId;
      if (!id) return undefined;
      ui.answers.push('Delete');
      return chat.handle({ type: 'deleteConversation', id });
    }
    case 'retry':
    case 'continue':
    case 'edit': {
      const id = chat.currentConversationId;
      if (!id) return undefined;
      return chat.store.open(id, { limit: 4 }).then((page) => {
        const spoken = (page?.messages ?? []).filter((m) => m.role !== 'notice');
        if (s.kind === 'edit') {
          const question = [...spoken].reverse().find((m) => m.role === 'user');
          return question ? chat.editLast(`edited ${n}`, question.id) : undefined;
        }
        const answer = spoken.at(-1);
        if (answer?.role !== 'assistant') return undefined;
        return s.kind === 'retry' ? chat.regenerate(answer.id) : chat.continueAnswer(answer.id);
      });
    }
  }
}

/** Records what a window's store is asked to do, and whether an answer starts beside another. */
function watch(w: TestWindow, windows: TestWindow[], record: Record): void {
  const store = w.store;
  const startsAnswer = (id: string, message: StoredMessage): void => {
    if (message.role === 'assistant' && message.status === 'streaming') {
      const streaming = windows
        .flatMap((o) => o.chat.sessions.all())
        .filter((s) => s.conversationId === id && s.message?.status === 'streaming');
      if (streaming.length) record.doubleStreams.push(id);
    }
  };
  const append = store.append.bind(store);
  store.append = async (id, message) => {
    startsAnswer(id, message);
    const ok = await append(id, message);
    if (ok) record.stored.set(message.id, { conversation: id, message });
    return ok;
  };
  const update = store.update.bind(store);
  store.update = async (id, message) => {
    const ok = await update(id, message);
    if (ok) record.stored.set(message.id, { conversation: id, message: { ...message } });
    return ok;
  };
  const replaceFrom = store.replaceFrom.bind(store);
  store.replaceFrom = async (id, messageId, messages) => {
    // Read first: the claim keeps any other writer out of the conversation until the replacement.
    const before = (await store.load(id))?.messages ?? [];
    const at = before.findIndex((m) => m.id === messageId);
    for (const m of messages) startsAnswer(id, m);
    const ok = await replaceFrom(id, messageId, messages);
    if (ok && at >= 0) for (const m of before.slice(at)) record.replaced.add(m.id);
    if (ok) for (const m of messages) record.stored.set(m.id, { conversation: id, message: m });
    return ok;
  };
  const remove = store.delete.bind(store);
  store.delete = async (id) => {
    record.deleted.add(id);
    return remove(id);
  };
}

async function check(windows: TestWindow[], record: Record, sent: Map<string, string>): Promise<void> {
  const store = (windows[0] as TestWindow).store;
  assert.deepEqual(record.doubleStreams, [], 'an answer started while another streamed in the same conversation');
  const conversations = new Map<string, StoredMessage[]>();
  for (const summary of await store.list())
    conversations.set(summary.id, (await store.load(summary.id))?.messages ?? []);
  for (const id of record.deleted) {
    assert.equal(conversations.has(id), false, `deleted conversation ${id} is listed again`);
    assert.equal(await store.open(id), undefined, `deleted conversation ${id} opens again`);
    assert.equal(
      existsSync(path.join(path.dirname(store.images.dir), `${id}.log`)),
      false,
      `deleted conversation ${id} has a log again`,
    );
  }
  for (const [messageId, { conversation, message }] of record.stored) {
    if (record.deleted.has(conversation) || record.replaced.has(messageId) || message.role === 'notice') continue;
    const found = (conversations.get(conversation) ?? []).filter((m) => m.id === messageId);
    assert.equal(
      found.length,
      1,
      `${message.role} ${messageId} (${message.text.slice(0, 40)}) is on disk ${found.length} times`,
    );
    if (message.role === 'user') assert.equal(found[0]?.text, message.text);
    else if (message.status !== 'streaming') {
      assert.equal(found[0]?.status, message.status, `answer ${messageId} keeps its final status`);
      assert.equal(found[0]?.text, message.text, `answer ${messageId} keeps its final text`);
    }
  }
  for (const [id, messages] of conversations) {
    assert.deepEqual(
      messages.filter((m) => m.status === 'streaming').map((m) => m.id),
      [],
      `conversation ${id} is left with an answer streaming`,
    );
    const questions = messages.filter((m) => m.role === 'user').map((m) => m.text);
    assert.equal(new Set(questions).size, questions.length, `conversation ${id} holds a question twice`);
  }
  const results = windows.flatMap((w) =>
    w.posts.filter((p): p is Extract<HostMessage, { type: 'sendResult' }> => p.type === 'sendResult'),
  );
  const storedTexts = new Set(
    [...record.stored.values()].filter((s) => s.message.role === 'user').map((s) => s.message.text),
  );
  for (const [sendId, text] of sent) {
    const answers = results.filter((r) => r.sendId === sendId);
    assert.equal(answers.length, 1, `send ${sendId} was acknowledged ${answers.length} times`);
    // Accepted: stored (a refused one the view puts back into the message box).
    if (answers[0]?.accepted) assert.ok(storedTexts.has(text), `accepted send ${sendId} was never stored`);
    else assert.equal(storedTexts.has(text), false, `refused send ${sendId} was stored all the same`);
  }
}
