/**
 * Rows 11, 12 and 13: VS Code's own chat (the language model provider), driven outside VS Code in a
 * process of its own (lmChild.ts, which says how each is measured).
 */
import { bytes, median, ms, ratio, runJsonChild, type BenchContext, type Row } from './lib';
import type { LoopResult, ToolResult } from './lmChild';
import type { GatewayInfo } from './streams';

const LABELS: Record<string, string> = {
  chatCompletions: 'Chat Completions',
  responses: 'Responses',
  messages: 'Messages',
};

interface FirstResult {
  recordedMs: number;
  perFrameMs: number;
  coldMs: number;
  chunks: number;
}

interface ChildResult {
  first?: Record<string, FirstResult>;
  tools?: Record<string, ToolResult>;
  loop?: Record<string, LoopResult>;
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
          .map(
            ([p, v]) =>
              `${LABELS[p] ?? p} ${v.recordedMs.toFixed(3)} / ${v.perFrameMs.toFixed(3)} ms (cold first run ${v.coldMs.toFixed(2)} ms)`,
          )
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
          .map(
            ([p, v]) =>
              `${LABELS[p] ?? p} ${ms(v.oursCpuMs)} vs ${ms(v.rawCpuMs)} (+${ms(v.overheadMs)}; wall ${ms(v.oursMs)} vs ${ms(v.rawMs)})`,
          )
          .join('; '),
      data: tools,
    },
  ];
}

/** What each request may leave on the heap over the repeated requests of row 13, in all. */
const FLAT_HEAP_BYTES = 1024 * 1024;

export async function lmToolLoopRows(ctx: BenchContext, gw: GatewayInfo): Promise<Row[]> {
  const repeats = ctx.quick ? 20 : 60;
  ctx.log(`VS Code chat, 50-round agent tool loop: rounds 5 and 50 made again ${repeats} times per protocol`);
  const r = await runJsonChild<ChildResult>('lmChild.ts', [gw.url, gw.key, String(repeats), 'loop'], 1_200_000);
  const loop = r.loop ?? {};
  const figures = Object.entries(loop).map(([p, v]) => {
    // The two rounds compared (5 and 50), as the child names them.
    const [first = '', last = ''] = Object.keys(v.at).sort((a, b) => Number(a) - Number(b));
    const at = (round: string, key: 'oursCpuMs' | 'rawCpuMs' | 'ownCpuMs') => median(v.at[round]?.[key] ?? []);
    const retainedBeyondHistory = (i: number) => (v.heapBytes[i] ?? 0) - (v.historyChars[i] ?? 0);
    return {
      protocol: p,
      first,
      last,
      /** The client's growth from round 5 to 50 over the growth of sending the same bodies raw. */
      growth: at(last, 'oursCpuMs') / at(first, 'oursCpuMs') / (at(last, 'rawCpuMs') / at(first, 'rawCpuMs')),
      own5: at(first, 'ownCpuMs'),
      own50: at(last, 'ownCpuMs'),
      ours5: at(first, 'oursCpuMs'),
      ours50: at(last, 'oursCpuMs'),
      raw5: at(first, 'rawCpuMs'),
      raw50: at(last, 'rawCpuMs'),
      body5: v.bodyBytes[Number(first) - 1] ?? 0,
      body50: v.bodyBytes[Number(last) - 1] ?? 0,
      heapGrowth: v.repeatedHeapGrowthBytes,
      requests: v.repeatedRequests,
      loopRetained: retainedBeyondHistory(Number(last) - 1) - retainedBeyondHistory(Number(first) - 1),
    };
  });
  const [, topCpu] = worst(Object.fromEntries(figures.map((f) => [f.protocol, f])), (f) => f.growth);
  const [, topHeap] = worst(Object.fromEntries(figures.map((f) => [f.protocol, f])), (f) => f.heapGrowth);
  return [
    {
      id: '13',
      what: 'VS Code chat: 50-round agent tool loop, 20 KB tool results: client CPU per request, round 50 vs round 5 (worst protocol)',
      ours: ms(topCpu.ours50),
      reference: ms(topCpu.ours5),
      ratio: ratio(topCpu.ours50 / topCpu.ours5),
      goal: "≤ 1.2 × the raw requests' growth",
      pass: topCpu.growth <= 1.2,
      note:
        `${LABELS[topCpu.protocol] ?? topCpu.protocol}: ${ratio(topCpu.ours50 / topCpu.ours5)} against ${ratio(topCpu.raw50 / topCpu.raw5)} for the same bodies sent raw through the same HTTP client and drained (${ratio(topCpu.growth)} of it). ` +
        'Every request carries the whole history (the body grows twelvefold), so serialising and sending it grow with the body in any client; a flat 1.2× per request cannot be had, and what is held to it is the growth beyond the bytes. ' +
        `Medians of ${repeats} alternating requests per round through the client and raw, and ${repeats * 10} of the provider's own work (history converted, the protocol's body built, a recorded tool-call answer decoded; nothing serialised or sent). ` +
        `Round ${topCpu.first} → ${topCpu.last}, client / raw / own work: ` +
        figures
          .map(
            (f) =>
              `${LABELS[f.protocol] ?? f.protocol} ${ms(f.ours5)} → ${ms(f.ours50)} / ${ms(f.raw5)} → ${ms(f.raw50)} / ${ms(f.own5, 2)} → ${ms(f.own50, 2)} (body ${bytes(f.body5)} → ${bytes(f.body50)})`,
          )
          .join('; ') +
        '.',
      data: loop,
    },
    {
      id: '13',
      what: 'VS Code chat: 50-round agent tool loop: heap left behind by the requests of round 5 and 50, made again (worst protocol)',
      ours: bytes(Math.max(0, topHeap.heapGrowth)),
      reference: '—',
      ratio: '—',
      goal: `≤ ${bytes(FLAT_HEAP_BYTES)} in all`,
      pass: topHeap.heapGrowth <= FLAT_HEAP_BYTES,
      note:
        `heap after a GC before and after ${topHeap.requests} requests of rounds ${topHeap.first} and ${topHeap.last} (through the provider and raw, after as many untimed): ` +
        figures
          .map(
            (f) =>
              `${LABELS[f.protocol] ?? f.protocol} ${f.heapGrowth >= 0 ? '+' : '−'}${bytes(Math.abs(f.heapGrowth))}`,
          )
          .join('; ') +
        `. During the loop the heap beyond the caller's own history grew by ` +
        figures.map((f) => `${bytes(Math.max(0, f.loopRetained))} (${LABELS[f.protocol] ?? f.protocol})`).join(', ') +
        ` from round ${topHeap.first} to ${topHeap.last} (the history's own strings taken out).`,
    },
  ];
}
