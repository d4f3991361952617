import { charge, textQuota } from '../billing';
import { tokensOf, type ChatPlan } from '../chatScenarios';
import type { GatewayContext } from '../route';
import { SseWriter, playStream, type PlayOptions, type Step } from '../sse';
import type { ChatAnswerRecord } from '../types';

/**
 * What the three chat routes share once a plan exists: the log record, billing, the stream
 * player and the non-stream fault endings.
 */

export function recordAnswer(ctx: GatewayContext, record: ChatAnswerRecord): ChatAnswerRecord {
  ctx.http.entry.answer = record;
  return record;
}

/**
 * A complete answer costs its full usage; one that ended early costs what was sent (new-api
 * counts the streamed text when upstream sent no usage); one that sent nothing costs nothing.
 */
export function settle(
  ctx: GatewayContext,
  plan: ChatPlan,
  record: ChatAnswerRecord,
  completed: boolean,
  emitted: string,
  extraQuota = 0,
): void {
  const completion = completed ? plan.usage.completionTokens : tokensOf(emitted);
  const quota = completion > 0 ? textQuota(ctx.model, plan.usage.promptTokens, completion) + extraQuota : 0;
  charge(ctx.key, quota);
  record.chargedQuota = quota;
}

/** Plays a scripted stream and settles its cost however it ended. */
export async function streamAnswer(
  ctx: GatewayContext,
  plan: ChatPlan,
  record: ChatAnswerRecord,
  steps: Step[],
  opts: Omit<PlayOptions, 'ending' | 'slowMs'>,
  extraQuota = 0,
): Promise<void> {
  const writer = new SseWriter(ctx.http);
  const ending = plan.scenarios.ending;
  const result = await playStream(writer, steps, { ...opts, ending, slowMs: plan.scenarios.slowMs });
  // Scripted failures (failed, error-in-200) end the body properly but are billed like cut streams.
  settle(ctx, plan, record, result.completed && ending === 'complete', result.emitted, extraQuota);
}

/**
 * Non-stream endings: `slow` waits once, `stall` never answers, `cut` sends half the body and
 * closes the socket. Returns true when the handler should send the answer normally.
 */
export async function nonStreamPrelude(ctx: GatewayContext, plan: ChatPlan): Promise<boolean> {
  const writer = new SseWriter(ctx.http);
  if (plan.scenarios.slowMs > 0) await writer.sleep(plan.scenarios.slowMs);
  if (writer.isClosed) return false;
  return plan.scenarios.ending !== 'stall';
}

/** Sends half of a JSON body with the full Content-Length, then closes the connection. */
export async function sendHalfThenCut(ctx: GatewayContext, value: unknown): Promise<void> {
  const text = Buffer.from(JSON.stringify(value), 'utf8');
  ctx.http.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': text.length });
  const writer = new SseWriter(ctx.http);
  await writer.write(text.subarray(0, Math.floor(text.length / 2)));
  await writer.cut();
}
