/**
 * Row 6: the chat view opened on a long history. A store of 1,000 conversations is written with
 * ConversationStore; the latest (the one the view opens) has 2,000 messages. A twin store differs
 * only in that conversation, which has 200 messages — exactly what a snapshot shows — so the two
 * show the same and differ only in what is stored.
 *
 * Host: historyChild.ts opens each store cold in a fresh process (list, load, snapshot, serialise),
 * alternating the two; medians. Memory: the heap the host keeps with 2,000 stored messages against
 * the heap with 200 (proportional to what is shown means about equal).
 * Webview: the same snapshot posted to the chat app in headless Chromium, until it is on screen.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { toView } from '../../src/core/chat/conversationForms';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import { type StoredMessage } from '../../src/core/chat/store/log';
import { WebviewHarness } from '../webview/harness';
import { snapshot as fixtureSnapshot } from '../webview/fixtures';
import { alternate, bytes, median, ms, ratio, runJsonChild, type BenchContext, type Row } from './lib';

const CONVERSATIONS = 1000;
const LONG_MESSAGES = 2000;
const SNAPSHOT_WINDOW = 200;
const READY_GOAL_MS = 200;
const MEMORY_GOAL = 1.5;

interface ChildResult {
  listMs: number;
  loadMs: number;
  snapshotMs: number;
  totalMs: number;
  retainedBytes: number;
  snapshotBytes: number;
  conversations: number;
  openMessages: number;
  shownMessages: number;
  /** Bytes of the conversation log the store read to open it. */
  openReadBytes: number;
}

/** A realistic answer of about 1.5 KB: prose, a list and a code fence. */
function answer(i: number): string {
  return (
    `Here is what happens in step ${i}. The function reads the input, splits it on commas and counts the parts; ` +
    `an empty input gives one part, which is why the guard below is needed.\n\n` +
    `- check the input for \`null\` first\n- trim each part\n- skip empty parts (see [the docs](https://example.com/docs/${i}))\n\n` +
    '```ts\n' +
    `export function count${i}(input: string | null): number {\n  if (!input) return 0;\n  return input.split(',').map((p) => p.trim()).filter(Boolean).length;\n}\n` +
    '```\n\n' +
    `| case | result |\n| --- | ---: |\n| "" | 0 |\n| "a, b" | 2 |\n\n` +
    `That covers step ${i}. If the input can be very long, stream it instead of splitting it all at once; ` +
    `the count stays the same and memory stays flat. `.repeat(3)
  );
}

export function messagesOf(count: number, base: number): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (let i = 0; i < count; i++) {
    const user = i % 2 === 0;
    out.push({
      id: `m${base}-${i}`,
      role: user ? 'user' : 'assistant',
      text: user
        ? `Question ${i}: how do I count the parts of a comma-separated string in TypeScript, ignoring empty ones?`
        : answer(i),
      status: 'done',
      createdAt: base + i,
      ...(user
        ? {}
        : {
            model: 'gpt-4o-mini',
            protocol: 'chatCompletions' as const,
            usage: { inputTokens: 120, outputTokens: 380, totalTokens: 500 },
          }),
    });
  }
  return out;
}

async function writeStores(
  work: string,
): Promise<{ long: string; short: string; storedBytes: number; openBytes: Record<string, number> }> {
  const long = path.join(work, 'history-2000');
  const short = path.join(work, 'history-200');
  const store = new ConversationStore(long);
  const start = 1_700_000_000_000;
  for (let i = 0; i < CONVERSATIONS - 1; i++) {
    const c = await store.create({ title: `Conversation ${i}: counting parts of a string` });
    for (const m of messagesOf(6, start + i * 10)) await store.append(c.id, m);
    await store.setMeta(c.id, { updatedAt: start + i });
  }
  fs.cpSync(long, short, { recursive: true });
  const openBytes: Record<string, number> = {};
  for (const [dir, count] of [
    [long, LONG_MESSAGES],
    [short, SNAPSHOT_WINDOW],
  ] as const) {
    const s = new ConversationStore(dir);
    const c = await s.create({ title: 'The long one' });
    for (const m of messagesOf(count, start + 1e7)) await s.append(c.id, m);
    openBytes[dir] = fs.statSync(path.join(dir, `${c.id}.log`)).size;
    // The window that wrote the history listed it, as the chat view does (this leaves the summary
    // cache a reloaded window starts from).
    await s.list();
  }
  const storedBytes = fs.readdirSync(long).reduce((a, f) => a + fs.statSync(path.join(long, f)).size, 0);
  return { long, short, storedBytes, openBytes };
}

interface ViewCost {
  ms: number;
  scriptMs: number;
  layoutMs: number;
  styleMs: number;
}

/** Time from posting the snapshot to the frame after it was rendered, in a fresh chat page. */
async function webviewReady(harness: WebviewHarness, state: unknown): Promise<ViewCost> {
  const page = await harness.open();
  try {
    const cdp = await page.context.newCDPSession(page.page);
    await cdp.send('Performance.enable');
    const metrics = async (): Promise<Record<string, number>> => {
      const { metrics: list } = (await cdp.send('Performance.getMetrics')) as {
        metrics: Array<{ name: string; value: number }>;
      };
      return Object.fromEntries(list.map((m) => [m.name, m.value]));
    };
    const before = await metrics();
    const elapsed = await page.page.evaluate(
      async (message) => {
        const probe = (
          globalThis as unknown as { __probe: { push(m: unknown): Promise<void>; frames(n: number): Promise<void> } }
        ).__probe;
        const t0 = performance.now();
        // Posted (a structured clone, as VS Code delivers it); resolves once the app has handled it.
        await probe.push(message);
        await probe.frames(2);
        return performance.now() - t0;
      },
      { type: 'snapshot', state },
    );
    const after = await metrics();
    const diff = (name: string) => ((after[name] ?? 0) - (before[name] ?? 0)) * 1000;
    await cdp.detach();
    return {
      ms: elapsed,
      scriptMs: diff('ScriptDuration'),
      layoutMs: diff('LayoutDuration'),
      styleMs: diff('RecalcStyleDuration'),
    };
  } finally {
    await page.close();
  }
}

export async function historyRows(ctx: BenchContext): Promise<Row[]> {
  const runs = ctx.quick ? 2 : 7;
  ctx.log(`history: writing ${CONVERSATIONS} conversations with ConversationStore`);
  const stores = await writeStores(ctx.work);
  ctx.log(`history: ${runs} cold opens of each store`);
  const results: Record<'long' | 'short', ChildResult[]> = { long: [], short: [] };
  await alternate(runs, {
    long: async () => {
      const r = await runJsonChild<ChildResult>('historyChild.ts', [stores.long]);
      results.long.push(r);
      return r.totalMs;
    },
    short: async () => {
      const r = await runJsonChild<ChildResult>('historyChild.ts', [stores.short]);
      results.short.push(r);
      return r.totalMs;
    },
  });

  // The same snapshot in the webview.
  const store = new ConversationStore(stores.long);
  const conversations = await store.list();
  const open = await store.open(conversations[0]?.id ?? '', { limit: SNAPSHOT_WINDOW });
  const messages = (open?.messages ?? []).map((m) => toView(m));
  const state = fixtureSnapshot({ conversations, conversationId: open?.meta.id, messages, hasOlder: true });
  ctx.log('history: the snapshot in the chat webview (Chromium)');
  const harness = await WebviewHarness.start();
  const webview: ViewCost[] = [];
  try {
    await webviewReady(harness, state); // warm-up: the browser's first page
    for (let i = 0; i < (ctx.quick ? 1 : runs); i++) webview.push(await webviewReady(harness, state));
  } finally {
    await harness.close();
  }

  const host = median(results.long.map((r) => r.totalMs));
  const view = median(webview.map((v) => v.ms));
  const viewPart = (key: keyof ViewCost) => ms(median(webview.map((v) => v[key])));
  const retainedLong = median(results.long.map((r) => r.retainedBytes));
  const retainedShort = median(results.short.map((r) => r.retainedBytes));
  const first = results.long[0] as ChildResult;
  const memoryRatio = retainedLong / retainedShort;
  return [
    {
      id: '6',
      what: `History: view ready, ${CONVERSATIONS} conversations, open one ${LONG_MESSAGES} messages (host + webview)`,
      ours: ms(host + view),
      reference: '—',
      ratio: '—',
      goal: `≤ ${READY_GOAL_MS} ms`,
      pass: host + view <= READY_GOAL_MS,
      note:
        `host (cold process) ${ms(host)}: list ${ms(median(results.long.map((r) => r.listMs)))}, load ${ms(median(results.long.map((r) => r.loadMs)))}, ` +
        `snapshot+serialise ${ms(median(results.long.map((r) => r.snapshotMs)))} (${bytes(first.snapshotBytes)}, ${first.shownMessages} messages); ` +
        `webview snapshot → rendered ${ms(view)} (script ${viewPart('scriptMs')}, layout ${viewPart('layoutMs')}, style ${viewPart('styleMs')})`,
      data: { results, webview, storedBytes: stores.storedBytes, openConversationBytes: stores.openBytes },
    },
    {
      id: '6',
      what: `History: host heap kept, ${LONG_MESSAGES} vs ${SNAPSHOT_WINDOW} messages stored (same ${SNAPSHOT_WINDOW} shown)`,
      ours: bytes(retainedLong),
      reference: bytes(retainedShort),
      ratio: ratio(memoryRatio),
      goal: `≤ ${MEMORY_GOAL}× (∝ shown)`,
      pass: memoryRatio <= MEMORY_GOAL,
      note: `store ${bytes(stores.storedBytes)} on disk; open conversation file ${bytes(stores.openBytes[stores.long] ?? NaN)} vs ${bytes(stores.openBytes[stores.short] ?? NaN)}, of which opening read ${bytes(first.openReadBytes)}; snapshot ${bytes(first.snapshotBytes)}`,
    },
  ];
}
