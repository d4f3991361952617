/**
 * Row 9: what sending one message costs in a long conversation against a short one. The real
 * ChatController (its `vscode` import answered by an inert stub) sends message 2,000 of one
 * conversation and message 20 of another, the two alternating, into a view that shows the
 * conversation: the history window read for the request, the question and the answer's placeholder
 * stored, the checkpoints written while the answer streams (about one a second), the final state
 * stored. After each send the two new messages are removed again, so every round sends the same
 * message number. Measured per send: this process's CPU time (the double runs in another process;
 * the stream itself is paced by the double), the wall time, and the bytes the store wrote to and
 * read from the conversation logs.
 *
 *   node --import tsx conversationChild.ts <gateway url> <key> <scratch dir> <rounds> <answer KB>
 */
// First: answers `vscode` for everything imported after it.
import './vscodeStub';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import { type StoredMessage } from '../../src/core/chat/store/log';
import { encodeRecord } from '../../src/core/chat/store/log';
import { ChatController } from '../../src/host/chat/chatController';
import { chatServices } from '../support/chatServices';
import { clientFor } from '../support/client';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** The message sent is number LONG (resp. SHORT) of its conversation. */
const LONG = 2000;
const SHORT = 20;

function message(i: number, base: number): StoredMessage {
  const user = i % 2 === 0;
  return {
    id: `m${base}-${i}`,
    role: user ? 'user' : 'assistant',
    text: user
      ? `Question ${i}: how do I count the parts of a comma-separated string, ignoring empty ones?`
      : `Answer ${i}: split on commas, trim each part and skip the empty ones. `.repeat(12),
    status: 'done',
    createdAt: base + i,
    ...(user ? {} : { model: 'gpt-4o-mini', protocol: 'chatCompletions' as const }),
  };
}

/**
 * A conversation of `count` messages. All but the last are written to its log directly in the
 * store's own record format (thousands of fsync'd appends would take minutes on a busy disk); the
 * last goes through `append`, which counts the log and writes the metadata file to match.
 */
async function conversation(store: ConversationStore, dir: string, count: number, title: string): Promise<string> {
  const meta = await store.create({ title, model: 'gpt-4o-mini' });
  const base = Date.now() - count * 1000;
  const lines: string[] = [];
  for (let i = 0; i < count - 1; i++) lines.push(encodeRecord({ k: 'a', at: base + i, i, m: message(i, base) }));
  fs.appendFileSync(path.join(dir, `${meta.id}.log`), lines.join(''));
  if (!(await store.append(meta.id, message(count - 1, base))))
    throw new Error('the conversation could not be written');
  return meta.id;
}

interface Sample {
  cpuMs: number;
  wallMs: number;
  bytesWritten: number;
  bytesRead: number;
  postedBytes: number;
  answerChars: number;
}

async function main(): Promise<void> {
  const [url, key, work, roundsText = '5', kb = '24'] = process.argv.slice(2);
  if (!url || !key || !work)
    throw new Error('usage: conversationChild.ts <gateway url> <key> <scratch dir> [rounds] [answer KB]');
  const dir = path.join(work, 'conversation-store');
  const store = new ConversationStore(dir);
  const ids = {
    long: await conversation(store, dir, LONG - 1, 'A long conversation'),
    short: await conversation(store, dir, SHORT - 1, 'A short conversation'),
  };

  const { http } = clientFor(url, key, {
    timeouts: { connectMs: 5000, firstByteMs: 60_000, idleMs: 60_000, longMs: 60_000 },
  });
  const services = chatServices({ storageDir: work, baseUrl: url, http });

  let postedBytes = 0;
  const port = {
    post: (m: unknown) => (postedBytes += Buffer.byteLength(JSON.stringify(m))),
    isLive: () => true,
    reload: () => undefined,
  };
  const controller = new ChatController(services, store);
  controller.attach(port as never);

  // About one frame per 2 ms: a stream of a few seconds, so that checkpoints are written during it.
  const prompt = `[[long:${kb}]] [[slow:2]] Write the long version.`;
  const send = async (id: string): Promise<Sample> => {
    await controller.switchTo(id);
    gc();
    const before = { ...store.io };
    postedBytes = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const answer = await controller.send(prompt);
    const wallMs = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (!answer || answer.status !== 'done')
      throw new Error(`the answer ended ${answer?.status ?? 'without starting'}: ${answer?.error?.message ?? ''}`);
    const sample = {
      cpuMs: (c.user + c.system) / 1000,
      wallMs,
      bytesWritten: store.io.bytesWritten - before.bytesWritten,
      bytesRead: store.io.bytesRead - before.bytesRead,
      postedBytes,
      answerChars: answer.text.length,
    };
    // Back to the same length: the question and its answer are removed again.
    const page = await store.open(id, { limit: 2 });
    const question = page?.messages[0];
    if (!page || question?.role !== 'user' || !(await store.truncateFrom(id, question.id)))
      throw new Error('the sent messages could not be removed');
    return sample;
  };

  // One untimed round warms up the JIT, the connection and the double.
  await send(ids.short);
  await send(ids.long);
  const samples: Record<'long' | 'short', Sample[]> = { long: [], short: [] };
  for (let round = 0; round < Number(roundsText); round++) {
    for (const which of round % 2 ? (['short', 'long'] as const) : (['long', 'short'] as const))
      samples[which].push(await send(ids[which]));
  }
  controller.dispose();
  await http.close();
  console.log(JSON.stringify({ long: LONG, short: SHORT, samples }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
