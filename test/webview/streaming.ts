/**
 * Streaming measurements for the chat webview, shared by the tests and the benchmark.
 * The numbers are reported, never asserted: timing depends on the machine.
 */
import MarkdownIt from 'markdown-it';
import type { ChatPage } from './harness';
import { assistantMessage, snapshot, userMessage } from './fixtures';

export interface StreamingMeasurement {
  messageId: string;
  chars: number;
  deltas: number;
  /** From the first delta to the last one handled. */
  feedMs: number;
  /** Until the last delta is on screen. */
  totalMs: number;
  /** Animation frames that rendered (deltas are batched into these). */
  renders: number;
  renderTotalMs: number;
  renderMaxMs: number;
  /** Mean render time over the first and the last tenth of the renders (flat cost: about equal). */
  renderEarlyMeanMs: number;
  renderLateMeanMs: number;
  frames: number;
  frameGapP95Ms: number;
  frameGapMaxMs: number;
  longTasks: number;
  longestTaskMs: number;
}

let counter = 0;

/**
 * Starts a new streaming answer on `page` (a harness page), delivers `markdown` as `deltaSize`-character
 * `append` messages, one per task, then the final `message`, and returns what it cost.
 */
export async function measureStreaming(
  page: ChatPage,
  markdown: string,
  deltaSize: number,
): Promise<StreamingMeasurement> {
  const messageId = `stream-${++counter}`;
  await page.push({
    type: 'snapshot',
    state: snapshot({
      messages: [
        userMessage(`q-${messageId}`, 'Write a long answer.'),
        assistantMessage(messageId, '', { status: 'streaming' }),
      ],
      busy: true,
    }),
  });
  const measured = await page.probe<Omit<StreamingMeasurement, 'messageId'>>('stream', {
    messageId,
    markdown,
    deltaSize,
  });
  await page.push(
    {
      type: 'message',
      conversationId: 'c1',
      message: assistantMessage(messageId, markdown, { usage: { inputTokens: 12, outputTokens: 34_567 } }),
    },
    { type: 'busy', conversationId: 'c1', busy: false },
  );
  return { messageId, ...measured };
}

const reference = new MarkdownIt({ html: false, linkify: true, typographer: false });

/** The text `markdown` shows when rendered whole by markdown-it (whitespace collapsed). */
export function expectedText(page: ChatPage, markdown: string): Promise<string> {
  // Table alignment comes as style attributes, which would trip the page's CSP even in an inert document.
  return page.probe<string>('htmlText', reference.render(markdown).replace(/ style="[^"]*"/g, ''));
}

export function formatMeasurement(label: string, m: StreamingMeasurement): string {
  return (
    `${label}: ${(m.chars / 1024).toFixed(0)} KB in ${m.deltas} deltas: ${m.totalMs} ms total (feed ${m.feedMs} ms), ` +
    `${m.renders} renders (max ${m.renderMaxMs} ms, sum ${m.renderTotalMs} ms, mean early ${m.renderEarlyMeanMs} / late ${m.renderLateMeanMs} ms), frame gap p95 ${m.frameGapP95Ms} ms / max ${m.frameGapMaxMs} ms, ` +
    `${m.longTasks} long tasks (longest ${m.longestTaskMs} ms)`
  );
}
