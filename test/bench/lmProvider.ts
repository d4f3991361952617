/**
 * Rows 10 and 11: VS Code's own chat (the language model provider), driven outside VS Code in a
 * process of its own (lmChild.ts, which says how each is measured).
 */
import { ms, ratio, runJsonChild, type BenchContext, type Row } from './lib';
import type { ToolResult } from './lmChild';
import type { GatewayInfo } from './streams';

const LABELS: Record<string, string> = { chatCompletions: 'Chat Completions', responses: 'Responses', messages: 'Messages' };

interface FirstResult {
  recordedMs: number;
  perFrameMs: number;
  coldMs: number;
  chunks: number;
}

interface ChildResult {
  first?: Record<string, FirstResult>;
  tools?: Record<string, ToolResult>;
}

function worst<T>(results: Record<string, T>, value: (r: T) => number): [string, T] {
  const entries = Object.entries(results);
  entries.sort((a, b) => value(b[1]) - value(a[1]));
  const top = entries[0];
  if (!top) throw new Error('no protocol was measured');
  return top;
}

export async function lmFirstProgressRows(ctx: BenchContext, gw: GatewayInfo): Promise<Row[]> {
  const runs = ctx.quick ? 200 : 1000;
  ctx.log(`VS Code chat, first progress part: ${runs} rounds per protocol`);
  const r = await runJsonChild<ChildResult>('lmChild.ts', [gw.url, gw.key, String(runs), 'first'], 600_000);
  const first = r.first ?? {};
  const [, top] = worst(first, (v) => Math.max(v.recordedMs, v.perFrameMs));
  const value = Math.max(top.recordedMs, top.perFrameMs);
  return [
    {
      id: '11',
      what: 'VS Code chat: first body byte → first progress part (worst protocol)',
      ours: ms(value, 3),
      reference: '—',
      ratio: '—',
      goal: '≤ 1 ms',
      pass: value <= 1,
      note:
        `provideLanguageModelChatResponse on the double's recorded answer, median of ${runs} per protocol, recorded chunks / one chunk per SSE frame: ` +
        Object.entries(first)
          .map(([p, v]) => `${LABELS[p] ?? p} ${v.recordedMs.toFixed(3)} / ${v.perFrameMs.toFixed(3)} ms (cold first run ${v.coldMs.toFixed(2)} ms)`)
          .join('; '),
      data: first,
    },
  ];
}

export async function lmToolRoundTripRows(ctx: BenchContext, gw: GatewayInfo): Promise<Row[]> {
  // The child runs a third as many round trips as this (two requests to the double each), after
  // warming every protocol up; a few tens of samples of a few milliseconds of CPU time each swung
  // by a millisecond from run to run on a shared machine.
  const runs = ctx.quick ? 100 : 300;
  ctx.log(`VS Code chat, tool round trip: ${Math.round(runs / 3)} rounds per protocol`);
  const r = await runJsonChild<ChildResult>('lmChild.ts', [gw.url, gw.key, String(runs), 'tools'], 600_000);
  const tools = r.tools ?? {};
  const [, top] = worst(tools, (v) => v.overheadMs);
  return [
    {
      id: '12',
      what: 'VS Code chat: tool round trip (call, result, answer), client CPU time over the raw requests (worst protocol)',
      ours: ms(top.oursCpuMs),
      reference: ms(top.rawCpuMs),
      ratio: ratio(top.oursCpuMs / top.rawCpuMs),
      goal: 'ours − reference ≤ 2 ms',
      pass: top.overheadMs <= 2,
      note:
        "client CPU time, through the provider vs the same two requests sent raw through the same HTTP client and drained (the double's own time and the transport); medians, alternating: " +
        Object.entries(tools)
          .map(([p, v]) => `${LABELS[p] ?? p} ${ms(v.oursCpuMs)} vs ${ms(v.rawCpuMs)} (+${ms(v.overheadMs)}; wall ${ms(v.oursMs)} vs ${ms(v.rawMs)})`)
          .join('; '),
      data: tools,
    },
  ];
}
