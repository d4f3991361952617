/**
 * Row 10: the chat view opened on the long conversation of row 6 (2,000 messages) and scrolled to
 * its very top, in the real chat bundle (headless Chromium, the host's CSP). The page gets the
 * snapshot the host sends (the last 200 messages, `hasOlder`); the reader jumps to the top again and
 * again; every `loadOlder` the page posts is answered as ChatController answers it (a snapshot with
 * 200 more). Done when all 2,000 messages are rendered. Older messages must render lazily: no
 * main-thread task may take longer than the goal, measured by its thread time in a trace (as row 5:
 * on a shared machine wall time also counts waiting for a core).
 */
import type { Browser } from 'playwright-core';
import { toView } from '../../src/core/chat/conversationForms';
import type { ChatMessageView } from '../../src/shared/protocol';
import { snapshot } from '../webview/fixtures';
import { WebviewHarness, type ChatPage } from '../webview/harness';
import { messagesOf } from './history';
import { median, ms, type BenchContext, type Row } from './lib';
import { mainThreadTasks } from './rendering';

const MESSAGES = 2000;
/** ChatController's SNAPSHOT_WINDOW: the first snapshot's messages, and how many each `loadOlder` adds. */
const WINDOW = 200;
const LONGEST_GOAL_MS = 50;

interface ScrollCost {
  /** The longest main-thread task by thread time, and its wall time. */
  longestCpuMs: number;
  longestMs: number;
  /** Tasks over the goal (by thread time). */
  over: number;
  loadOlder: number;
  scrolls: number;
  wallMs: number;
}

/** Whether the conversation's first message is in the page (only the messages near the viewport are). */
const reachedFirst = (page: ChatPage, first: string): Promise<boolean> =>
  page.page.evaluate<boolean>(`document.querySelector('.log .msg[data-id="${first}"]') !== null`);

async function scrollToTop(harness: WebviewHarness, all: ChatMessageView[], trace: boolean): Promise<ScrollCost> {
  const page = await harness.open({ viewport: { width: 420, height: 720 } });
  const browser = page.context.browser() as Browser;
  try {
    let window = WINDOW;
    // The conversation goes into the page once, before the measurement; each snapshot is then made
    // and posted in the page (structured clone, as VS Code delivers it), so that no task of the
    // harness's own (parsing megabytes of messages it sent) is measured as the view's.
    await page.page.evaluate(
      (json) => Object.assign(globalThis, { __conversation: JSON.parse(json) }),
      JSON.stringify(all),
    );
    const base = snapshot({ messages: [] });
    const push = async (): Promise<void> => {
      await page.page.evaluate(
        ({ state, count }) => {
          const g = globalThis as unknown as {
            __conversation: ChatMessageView[];
            __probe: { push(m: unknown): Promise<void> };
          };
          return g.__probe.push({
            type: 'snapshot',
            state: { ...state, messages: g.__conversation.slice(-count), hasOlder: count < g.__conversation.length },
          });
        },
        { state: base, count: window },
      );
      await page.frames();
    };
    if (trace) await browser.startTracing(page.page, { categories: ['toplevel'] });
    const started = Date.now();
    await push();
    let answered = 0;
    let scrolls = 0;
    const first = all[0]?.id ?? '';
    while (!(await reachedFirst(page, first))) {
      if (Date.now() - started > 900_000)
        throw new Error(`the first of ${all.length} messages was not rendered after 15 minutes`);
      // In the page: jump to the top every frame until the first message is rendered or the host is asked for more.
      const round = await page.page.evaluate(
        async ({ target, asked }) => {
          // No named inner functions: the bundler would wrap them in a helper the page does not have.
          const g = globalThis as unknown as {
            __probe: { posted: Array<{ type: string }>; frames(n: number): Promise<void> };
            document: {
              querySelector(s: string): { scrollTop: number };
              querySelectorAll(s: string): { length: number };
            };
          };
          let jumps = 0;
          let askedNow = g.__probe.posted.filter((m) => m.type === 'loadOlder').length;
          const t0 = performance.now();
          while (
            g.document.querySelector(`.log .msg[data-id="${target}"]`) === null &&
            askedNow === asked &&
            performance.now() - t0 < 30_000
          ) {
            g.document.querySelector('.messages').scrollTop = 0;
            jumps++;
            await g.__probe.frames(1);
            askedNow = g.__probe.posted.filter((m) => m.type === 'loadOlder').length;
          }
          return { jumps, asked: askedNow };
        },
        { target: all[0]?.id ?? '', asked: answered },
      );
      scrolls += round.jumps;
      if (round.asked > answered) {
        answered = round.asked;
        window = Math.min(all.length, window + WINDOW);
        await push();
      }
    }
    const wallMs = Date.now() - started;
    const tasks = trace ? mainThreadTasks(await browser.stopTracing()) : [];
    const longest = tasks.reduce<[number, number, number]>((a, t) => (t[1] > a[1] ? t : a), [0, 0, 0]);
    return {
      longestCpuMs: longest[1],
      longestMs: longest[0],
      over: tasks.filter((t) => t[1] > LONGEST_GOAL_MS).length,
      loadOlder: answered,
      scrolls,
      wallMs,
    };
  } finally {
    await page.close();
  }
}

export async function chatScrollRows(ctx: BenchContext): Promise<Row[]> {
  const runs = ctx.quick ? 1 : 3;
  const all = messagesOf(MESSAGES, 1_700_010_000_000).map((m) => toView(m));
  ctx.log(`chat scroll: ${MESSAGES} messages, opened at the end and scrolled to the top, ${runs} traced runs`);
  const harness = await WebviewHarness.start();
  const costs: ScrollCost[] = [];
  try {
    await scrollToTop(harness, all.slice(-WINDOW), false); // warm-up: the browser's first page
    for (let i = 0; i < runs; i++) costs.push(await scrollToTop(harness, all, true));
  } finally {
    await harness.close();
  }
  const longest = median(costs.map((c) => c.longestCpuMs));
  const worst = Math.max(...costs.map((c) => c.longestCpuMs));
  return [
    {
      id: '10',
      what: `Chat view: open a ${MESSAGES}-message conversation and scroll to the top, longest main-thread task (CPU time)`,
      ours: ms(longest),
      reference: '—',
      ratio: '—',
      goal: `≤ ${LONGEST_GOAL_MS} ms in every run`,
      pass: worst <= LONGEST_GOAL_MS,
      note:
        `median of ${runs} traced runs (worst ${ms(worst)}, wall ${ms(median(costs.map((c) => c.longestMs)))}); tasks over ${LONGEST_GOAL_MS} ms: ${costs.map((c) => c.over).join(', ')}; ` +
        `${costs[0]?.loadOlder ?? 0} loadOlder answered with ${WINDOW} more messages each, ${costs[0]?.scrolls ?? 0} jumps to the top, ${ms(median(costs.map((c) => c.wallMs)))} to reach the first message`,
      data: { costs },
    },
  ];
}
