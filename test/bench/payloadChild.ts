/**
 * The real ChatController, outside VS Code (its `vscode` import answered by an inert stub), streaming
 * a long answer from the double into a conversation that already holds 1,000 messages. Every message
 * it posts to the view is recorded; the sizes of the `append` messages at the start and at the end
 * of the stream show whether one update grows with the answer or the conversation.
 *
 *   node --import tsx payloadChild.ts <gateway url> <key> <scratch dir> [answer KB]
 */
// First: answers `vscode` for everything imported after it.
import './vscodeStub';
import * as path from 'node:path';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import { ChatController } from '../../src/host/chat/chatController';
import { chatServices } from '../support/chatServices';
import { clientFor } from '../support/client';

const HISTORY = 1000;

async function main(): Promise<void> {
  const [url, key, work, kb = '64'] = process.argv.slice(2);
  if (!url || !key || !work) throw new Error('usage: payloadChild.ts <gateway url> <key> <scratch dir>');
  const dir = path.join(work, 'payload-store');
  const store = new ConversationStore(dir);
  const conversation = await store.create({ title: 'A long conversation' });
  for (let i = 0; i < HISTORY; i++) {
    await store.append(conversation.id, {
      id: `h${i}`,
      role: i % 2 ? 'assistant' : 'user',
      text: i % 2 ? `Answer ${i}: `.padEnd(900, 'lorem ipsum dolor sit amet ') : `Question ${i}?`,
      status: 'done',
      createdAt: Date.now() - (HISTORY - i) * 1000,
    });
  }

  const { http } = clientFor(url, key, {
    timeouts: { connectMs: 5000, firstByteMs: 60_000, idleMs: 60_000, longMs: 60_000 },
  });
  const services = chatServices({ storageDir: work, baseUrl: url, http });

  const posted: Array<{ type: string; bytes: number; chars?: number }> = [];
  const port = {
    post: (m: { type: string; text?: string }) =>
      posted.push({
        type: m.type,
        bytes: Buffer.byteLength(JSON.stringify(m)),
        ...(m.type === 'append' ? { chars: m.text?.length ?? 0 } : {}),
      }),
    isLive: () => true,
    reload: () => undefined,
  };
  const controller = new ChatController(services, store);
  controller.attach(port as never);
  await controller.sendSnapshot();
  // `kb` KB of markdown, one frame (four words) per millisecond or so: a stream of a few seconds.
  const answer = await controller.send(`[[long:${kb}]] [[slow:1]] Write the long version.`);
  controller.dispose();
  await http.close();
  if (!answer || answer.status !== 'done')
    throw new Error(`the answer ended ${answer?.status ?? 'without starting'}: ${answer?.error?.message ?? ''}`);
  const appends = posted.filter((p) => p.type === 'append');
  if (appends.length < 20) throw new Error(`only ${appends.length} appends were posted`);
  const mean = (list: typeof appends) => list.reduce((a, p) => a + p.bytes, 0) / list.length;
  // The very first and the very last post can be partial windows; leave them out.
  const body = appends.slice(1, -1);
  console.log(
    JSON.stringify({
      posts: appends.length,
      firstMeanBytes: mean(body.slice(0, 10)),
      lastMeanBytes: mean(body.slice(-10)),
      maxBytes: Math.max(...appends.map((p) => p.bytes)),
      historyMessages: HISTORY,
      snapshotBytes: Math.max(...posted.filter((p) => p.type === 'snapshot').map((p) => p.bytes)),
      streamedChars: answer.text.length,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
