/**
 * One cold open of the chat view's history, in a fresh Node process (as in a fresh window): what
 * ChatController does before its first snapshot — ConversationStore.list(), open() of the latest
 * conversation's last 200 messages, those as views, the snapshot serialised as postMessage would —
 * timed, and the heap the host keeps afterwards (store index + the open conversation).
 *
 *   node --import tsx historyChild.ts <store dir>
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { toView } from '../../src/core/chat/conversationForms';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import { type ConversationPage } from '../../src/core/chat/store/readPath';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** ChatController's SNAPSHOT_WINDOW: how many messages a snapshot carries. */
const SNAPSHOT_WINDOW = 200;

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: historyChild.ts <store dir>');
  const heap0 = heapUsed();
  const t0 = performance.now();
  const store = new ConversationStore(dir);
  const conversations = await store.list();
  const t1 = performance.now();
  const latest = conversations[0];
  const conversation: ConversationPage | undefined = latest
    ? await store.open(latest.id, { limit: SNAPSHOT_WINDOW })
    : undefined;
  const t2 = performance.now();
  const messages = conversation?.messages ?? [];
  const snapshot = {
    conversations,
    ...(conversation ? { conversationId: conversation.meta.id } : {}),
    messages: messages.map((m) => toView(m)),
    hasOlder: (conversation?.total ?? 0) > messages.length,
    models: [],
    enableSearch: false,
    attachments: [],
    busy: false,
    remoteImageHosts: [],
  };
  const json = JSON.stringify(snapshot);
  const t3 = performance.now();
  // What the controller keeps: the store (with its index) and the open conversation.
  const kept = { store, conversation };
  const heap1 = heapUsed();
  console.log(
    JSON.stringify({
      listMs: t1 - t0,
      loadMs: t2 - t1,
      snapshotMs: t3 - t2,
      totalMs: t3 - t0,
      retainedBytes: heap1 - heap0,
      snapshotBytes: Buffer.byteLength(json),
      conversations: conversations.length,
      openMessages: kept.conversation?.total ?? 0,
      shownMessages: snapshot.messages.length,
      openReadBytes: store.io.bytesRead,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
