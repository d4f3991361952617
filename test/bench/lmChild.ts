/**
 * Rows 11, 12 and 13: VS Code's own chat, measured outside VS Code. The real GatewayChatProvider (its
 * `vscode` import answered by the unit tests' stand-in, test/unit/chatHost/fakeVscode.ts) is driven
 * the way VS Code drives it: `provideLanguageModelChatResponse` with a progress callback.
 *
 * Row 11, first-progress overhead: the bytes of an ordinary answer are recorded from the double
 * through the real HTTP client, then handed to the provider by an HTTP client that replays them
 * (as recorded, and one SSE frame per chunk); the time from handing over the first body chunk to
 * the first `progress.report` is taken, many times. Replaying keeps the double's pacing out of it.
 *
 * Row 12, tool round trip: against the double, the model asks for a tool call, the caller hands
 * back the result at once, the model answers. The reference sends the same two HTTP requests
 * (the bodies the provider sent, captured) through the same HTTP client and drains their bodies:
 * the double's own time plus the transport. The client's time is the difference in this process's
 * CPU time (the double runs in its own process); wall times are reported too, but on a shared
 * machine the double's answer time swings by tens of milliseconds from one request to the next.
 *
 * Row 13, a long agent session: see `toolLoop`.
 *
 *   node --import tsx lmChild.ts <gateway url> <key> <runs> [first|tools|both|loop]
 */
// First: answers `vscode` for every host module imported after it.
import { CancellationTokenSource, fake } from '../unit/chatHost/fakeVscode';
import type { HttpClient } from '../../src/core/http';
import type { HttpRequest, HttpResponse } from '../../src/core/httpTypes';
import type { ChatProtocol } from '../../src/core/models/types';
import { GatewayChatProvider } from '../../src/host/lm/chatProvider';
import type { LanguageModelResponsePart } from '../../src/host/lm/lmApi';
import type { GatewayChatInformation } from '../../src/host/lm/modelInfo';
import { clientFor } from '../support/client';
import { hostServices } from '../unit/lmHost/hostServices';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { alternate, median } from './lib';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const PROTOCOLS: Array<{ protocol: ChatProtocol; model: string; label: string }> = [
  { protocol: 'chatCompletions', model: 'gpt-4o-mini', label: 'Chat Completions' },
  { protocol: 'responses', model: 'gpt-4o-mini', label: 'Responses' },
  { protocol: 'messages', model: 'claude-sonnet-4-5', label: 'Messages' },
];

/** A function tool as a caller (an agent) offers it. */
const FORECAST = {
  name: 'get_forecast',
  description: 'The weather forecast for a city.',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
    required: ['city'],
  },
};

const AUTO = { toolMode: fake.LanguageModelChatToolMode.Auto };
const user = (content: unknown[]) => ({ role: fake.LanguageModelChatMessageRole.User, content, name: undefined });
const assistant = (content: unknown[]) => ({
  role: fake.LanguageModelChatMessageRole.Assistant,
  content,
  name: undefined,
});

/** One model per protocol, each listing only that protocol, so the provider speaks it. */
function providerFor(http: HttpClient, p: (typeof PROTOCOLS)[number]): GatewayChatProvider {
  const model = {
    id: p.model,
    name: p.model,
    provider: 'bench',
    ownedBy: 'bench',
    kind: 'chat',
    protocols: [p.protocol],
    protocolSource: 'gateway',
    available: true,
    inCatalog: false,
  };
  return new GatewayChatProvider(hostServices(http, [model]).services);
}

async function information(provider: GatewayChatProvider, id: string): Promise<GatewayChatInformation> {
  const list = await provider.provideLanguageModelChatInformation(
    { silent: true },
    new CancellationTokenSource().token as never,
  );
  const info = list.find((m) => m.id === id);
  if (!info) throw new Error(`the provider does not offer ${id}`);
  return info;
}

/** Runs one request through the provider; `onPart` sees every reported part as it comes. */
async function respond(
  provider: GatewayChatProvider,
  info: GatewayChatInformation,
  messages: unknown[],
  options: object,
  onPart: (part: LanguageModelResponsePart) => void = () => undefined,
): Promise<LanguageModelResponsePart[]> {
  const parts: LanguageModelResponsePart[] = [];
  const progress = {
    report: (part: LanguageModelResponsePart) => {
      onPart(part);
      parts.push(part);
    },
  };
  await provider.provideLanguageModelChatResponse(
    info,
    messages as never,
    options as never,
    progress,
    new CancellationTokenSource().token as never,
  );
  return parts;
}

/**
 * An HTTP client whose every POST answers with `chunks`, noting when the first one is handed over.
 * Only `send` and `endpoints` are used by the chat adapters.
 */
function replayClient(real: HttpClient, chunks: Uint8Array[], onFirstChunk: () => void): HttpClient {
  const response = (): HttpResponse => ({
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    body: undefined as never,
    async *chunks() {
      for (const [i, chunk] of chunks.entries()) {
        if (i === 0) onFirstChunk();
        yield chunk;
      }
    },
    complete: () => undefined,
    text: () => Promise.reject(new Error('a replayed stream is read by chunks')),
    json: () => Promise.reject(new Error('a replayed stream is read by chunks')),
  });
  // The cast: a stand-in for the two members the adapters use.
  return { endpoints: real.endpoints, send: async () => response() } as unknown as HttpClient;
}

/** Records the requests a client sends, and the chunks of their answers as the client delivered them. */
function recordingClient(real: HttpClient, requests: HttpRequest[], answers: Uint8Array[][]): HttpClient {
  const send = async (req: HttpRequest): Promise<HttpResponse> => {
    requests.push(req);
    const response = await real.send(req);
    const got: Uint8Array[] = [];
    answers.push(got);
    return {
      ...response,
      async *chunks() {
        for await (const chunk of response.chunks()) {
          got.push(new Uint8Array(chunk));
          yield chunk;
        }
      },
    };
  };
  // The cast: the adapters use `send` and `endpoints` only.
  return { endpoints: real.endpoints, send } as unknown as HttpClient;
}

/** Splits a body into one chunk per SSE frame, as a server that flushes each frame delivers it. */
function perFrame(chunks: Uint8Array[]): Uint8Array[] {
  const text = Buffer.concat(chunks).toString('utf8');
  return text
    .split(/(?<=\n\n)/)
    .filter((f) => f)
    .map((f) => new TextEncoder().encode(f));
}

async function firstProgressMs(real: HttpClient, p: (typeof PROTOCOLS)[number], chunks: Uint8Array[]): Promise<number> {
  let t0 = 0;
  let t1 = 0;
  const provider = providerFor(
    replayClient(real, chunks, () => (t0 = performance.now())),
    p,
  );
  try {
    const info = await information(provider, p.model);
    await respond(provider, info, [user([new fake.LanguageModelTextPart('Why is the sea salty?')])], AUTO, () => {
      if (!t1) t1 = performance.now();
    });
  } finally {
    provider.dispose();
  }
  if (!t0 || !t1) throw new Error(`${p.label}: no progress part from the replayed answer`);
  return t1 - t0;
}

async function firstProgress(real: HttpClient, runs: number) {
  const out: Record<string, { recordedMs: number; perFrameMs: number; coldMs: number; chunks: number }> = {};
  for (const p of PROTOCOLS) {
    // An ordinary answer with reasoning first (VS Code gets no part for it), so the first text is not in the first frame.
    const requests: HttpRequest[] = [];
    const answers: Uint8Array[][] = [];
    const recorder = providerFor(recordingClient(real, requests, answers), p);
    try {
      await respond(
        recorder,
        await information(recorder, p.model),
        [user([new fake.LanguageModelTextPart('[[reasoning]] Why is the sea salty?')])],
        AUTO,
      );
    } finally {
      recorder.dispose();
    }
    const recorded = answers[0];
    if (!recorded?.length) throw new Error(`${p.label}: nothing recorded`);
    const frames = perFrame(recorded);
    const coldMs = await firstProgressMs(real, p, recorded);
    const samples = await alternate(runs, {
      recorded: () => firstProgressMs(real, p, recorded),
      perFrame: () => firstProgressMs(real, p, frames),
    });
    out[p.protocol] = {
      recordedMs: median(samples.recorded),
      perFrameMs: median(samples.perFrame),
      coldMs,
      chunks: recorded.length,
    };
  }
  return out;
}

/** Drains a response's body; the byte count. */
async function drain(response: HttpResponse): Promise<number> {
  let n = 0;
  for await (const chunk of response.chunks()) n += chunk.length;
  return n;
}

export interface ToolResult {
  /** Medians of the wall time and of this process's CPU time, through the provider and raw. */
  oursMs: number;
  rawMs: number;
  oursCpuMs: number;
  rawCpuMs: number;
  /** The client's time over the double's: CPU time through the provider less CPU time raw. */
  overheadMs: number;
  wallOverheadMs: number;
  samples: Record<string, number[]>;
  cpuSamples: Record<string, number[]>;
}

/**
 * Untimed round trips of every protocol, ours and raw, before any is measured: the code the
 * protocols share (the provider, the transport, undici) would otherwise still be warming up
 * while the first protocol is measured and be hot for the last.
 */
const WARM_UP_ROUNDS = 10;

interface ToolSetup {
  p: (typeof PROTOCOLS)[number];
  /** One round trip through the provider, one with the same two requests sent raw; wall times. */
  ours: () => Promise<number>;
  raw: () => Promise<number>;
  dispose: () => void;
}

async function toolSetup(real: HttpClient, p: (typeof PROTOCOLS)[number]): Promise<ToolSetup> {
  // The provider under test talks to the double directly; a second one, recording, captures the requests.
  const requests: HttpRequest[] = [];
  const recorder = providerFor(recordingClient(real, requests, []), p);
  const provider = providerFor(real, p);
  const dispose = () => {
    provider.dispose();
    recorder.dispose();
  };
  try {
    const info = await information(provider, p.model);
    const question = user([new fake.LanguageModelTextPart('call the tool get_forecast city=Oslo days=3')]);
    const options = { ...AUTO, tools: [FORECAST] };
    /** The round trip through a provider; checks that it went as an agent expects. */
    const roundTrip = async (through: GatewayChatProvider): Promise<number> => {
      const t0 = performance.now();
      const first = await respond(through, info, [question], options);
      const call = first.find((part) => part instanceof fake.LanguageModelToolCallPart);
      if (!call) throw new Error(`${p.label}: no tool call`);
      const said = first
        .filter((part) => part instanceof fake.LanguageModelTextPart)
        .map((part) => part.value)
        .join('');
      // The caller runs the tool (here: answers at once) and sends the result back.
      const result = new fake.LanguageModelToolResultPart(call.callId, [
        new fake.LanguageModelTextPart('Oslo: 3 days of snow'),
      ]);
      const second = await respond(
        through,
        info,
        [question, assistant([new fake.LanguageModelTextPart(said), call]), user([result])],
        options,
      );
      const elapsed = performance.now() - t0;
      const answer = second
        .filter((part) => part instanceof fake.LanguageModelTextPart)
        .map((part) => part.value)
        .join('');
      if (answer !== 'The tool said: Oslo: 3 days of snow')
        throw new Error(`${p.label}: the answer was ${JSON.stringify(answer)}`);
      return elapsed;
    };
    await roundTrip(recorder);
    const pair = requests.map((r) => ({ ...r, signal: undefined }));
    if (pair.length !== 2) throw new Error(`${p.label}: expected two requests, saw ${pair.length}`);
    const raw = async (): Promise<number> => {
      const t0 = performance.now();
      for (const req of pair) {
        const response = await real.send(req);
        if ((await drain(response)) === 0) throw new Error(`${p.label}: an empty answer`);
      }
      return performance.now() - t0;
    };
    return { p, ours: () => roundTrip(provider), raw, dispose };
  } catch (err) {
    dispose();
    throw err;
  }
}

async function toolRoundTrip(real: HttpClient, runs: number) {
  const out: Record<string, ToolResult> = {};
  const setups: ToolSetup[] = [];
  try {
    for (const p of PROTOCOLS) setups.push(await toolSetup(real, p));
    for (let i = 0; i < WARM_UP_ROUNDS; i++) {
      for (const s of setups) {
        await s.ours();
        await s.raw();
      }
    }
    for (const { p, ours, raw } of setups) {
      // Wall time, and this process's CPU time (user + system): the client's own work, whatever
      // else the machine runs. The double runs in another process.
      const cpu: Record<'ours' | 'raw', number[]> = { ours: [], raw: [] };
      const timed = (name: 'ours' | 'raw', work: () => Promise<number>) => async (): Promise<number> => {
        const c0 = process.cpuUsage();
        const wall = await work();
        const c = process.cpuUsage(c0);
        cpu[name].push((c.user + c.system) / 1000);
        return wall;
      };
      const samples = await alternate(runs, { ours: timed('ours', ours), raw: timed('raw', raw) });
      const oursMs = median(samples.ours);
      const rawMs = median(samples.raw);
      const oursCpuMs = median(cpu.ours);
      const rawCpuMs = median(cpu.raw);
      out[p.protocol] = {
        oursMs,
        rawMs,
        oursCpuMs,
        rawCpuMs,
        overheadMs: oursCpuMs - rawCpuMs,
        wallOverheadMs: oursMs - rawMs,
        samples,
        cpuSamples: cpu,
      };
    }
  } finally {
    for (const s of setups) s.dispose();
  }
  return out;
}

export interface LoopResult {
  /** Per round of one loop (index 0 = round 1): this process's CPU time, the request body's size, the heap after a GC. */
  cpuMs: number[];
  bodyBytes: number[];
  heapBytes: number[];
  /** The characters of the history the caller holds after each round (its own memory, not the provider's). */
  historyChars: number[];
  /**
   * Rounds 5 and 50 again, many times, alternating: this process's CPU time through the provider,
   * and for the same request sent raw through the same HTTP client and drained.
   */
  at: Record<string, { oursCpuMs: number[]; rawCpuMs: number[]; ownCpuMs: number[] }>;
  /** The heap's growth (after a GC) over the second half of the repeated requests to the double (and raw): what requests leave behind. */
  repeatedHeapGrowthBytes: number;
  repeatedRequests: number;
}

/** The tool result of every round: 20 KB of text, as a file read or a search result page would be. */
const LOOP_RESULT = 'line of a tool result, as a file read or a search answer would give it;\n'
  .repeat(300)
  .slice(0, 20 * 1024);
const LOOP_ASK = 'call the tool get_forecast city=Oslo days=3';
const LOOP_ROUNDS = 50;
/** The rounds compared: the fifth and the last. */
const LOOP_COMPARED = [5, LOOP_ROUNDS];
/** Samples of the provider's own work per request to the double (it costs a tenth as much). */
const OWN_SAMPLES_PER_REQUEST = 10;

function cpuOf<T>(work: () => Promise<T>): Promise<{ value: T; cpuMs: number }> {
  const c0 = process.cpuUsage();
  return work().then((value) => {
    const c = process.cpuUsage(c0);
    return { value, cpuMs: (c.user + c.system) / 1000 };
  });
}

/**
 * An agent session of LOOP_ROUNDS tool rounds against the double, as VS Code's agent runs it:
 * every request sends the whole history (each earlier call and its 20 KB result) and the model
 * answers with the next call. The double calls a tool when the conversation does not end with
 * results, so the user turn that carries a result also repeats the ask (a line after the result).
 * Per round: this process's CPU time for the request (building it, sending it, reading the
 * answer), the request body's size and the heap after a GC. Then the requests of rounds 5 and 50
 * are made again `repeats` times each, alternating three ways: through the provider to the double;
 * the same body sent raw through the same HTTP client and drained (the transport, which grows with
 * the body); and through a provider whose client answers with one recorded answer without
 * serialising or sending anything (the provider's own work: converting the history, building the
 * protocol's body, decoding the answer). The heap's growth over those repeats is what the
 * requests leave behind.
 */
async function toolLoop(real: HttpClient, p: (typeof PROTOCOLS)[number], repeats: number): Promise<LoopResult> {
  // The last request, kept to send it raw and to measure its body after the round's timing ends.
  let sent: HttpRequest | undefined;
  const recording = {
    endpoints: real.endpoints,
    send: (req: HttpRequest) => ((sent = req), real.send(req)),
  } as unknown as HttpClient;
  const provider = providerFor(recording, p);
  const out: LoopResult = {
    cpuMs: [],
    bodyBytes: [],
    heapBytes: [],
    historyChars: [],
    at: {},
    repeatedHeapGrowthBytes: 0,
    repeatedRequests: 0,
  };
  const snapshots = new Map<number, { history: unknown[]; request: HttpRequest }>();
  try {
    const info = await information(provider, p.model);
    const options = { ...AUTO, tools: [FORECAST] };
    const ask = `Check the forecast again and again. ${LOOP_ASK}`;
    const history: unknown[] = [user([new fake.LanguageModelTextPart(ask)])];
    let historyChars = ask.length;
    for (let round = 1; round <= LOOP_ROUNDS; round++) {
      gc();
      const { value: parts, cpuMs } = await cpuOf(() => respond(provider, info, history, options));
      const call = parts.find((part) => part instanceof fake.LanguageModelToolCallPart);
      if (!call || !sent) throw new Error(`${p.label}, round ${round}: no tool call`);
      if (LOOP_COMPARED.includes(round))
        snapshots.set(round, { history: [...history], request: { ...sent, signal: undefined } });
      const said = parts
        .filter((part) => part instanceof fake.LanguageModelTextPart)
        .map((part) => part.value)
        .join('');
      const result = `${round}: ${LOOP_RESULT}`;
      history.push(assistant([...(said ? [new fake.LanguageModelTextPart(said)] : []), call]));
      history.push(
        user([
          new fake.LanguageModelToolResultPart(call.callId, [new fake.LanguageModelTextPart(result)]),
          new fake.LanguageModelTextPart(LOOP_ASK),
        ]),
      );
      historyChars += said.length + JSON.stringify(call.input).length + result.length + LOOP_ASK.length;
      gc();
      out.cpuMs.push(cpuMs);
      out.bodyBytes.push(Buffer.byteLength(JSON.stringify(sent.json ?? null)));
      out.heapBytes.push(process.memoryUsage().heapUsed);
      out.historyChars.push(historyChars);
    }
    // The provider's own work: the same histories through a provider whose client answers every
    // request with one recorded answer (a tool call) and never serialises or sends the body.
    const answers: Uint8Array[][] = [];
    const recorder = providerFor(recordingClient(real, [], answers), p);
    try {
      await respond(recorder, info, snapshots.get(LOOP_COMPARED[0] ?? 5)?.history ?? [], options);
    } finally {
      recorder.dispose();
    }
    const replayed = providerFor(
      replayClient(real, answers[0] ?? [], () => undefined),
      p,
    );
    const replayedInfo = await information(replayed, p.model);
    // The provider's own work costs about a millisecond: many samples, alternating, apart from
    // the requests to the double.
    const own: Record<string, () => Promise<number>> = {};
    const http: Record<string, () => Promise<number>> = {};
    for (const [round, snap] of snapshots) {
      const at = (out.at[round] = { oursCpuMs: [] as number[], rawCpuMs: [] as number[], ownCpuMs: [] as number[] });
      own[`own${round}`] = async () => {
        const { value: parts, cpuMs } = await cpuOf(() => respond(replayed, replayedInfo, snap.history, options));
        if (!parts.some((part) => part instanceof fake.LanguageModelToolCallPart))
          throw new Error(`${p.label}: the replayed answer made no call`);
        at.ownCpuMs.push(cpuMs);
        return cpuMs;
      };
      http[`ours${round}`] = async () => {
        const { cpuMs } = await cpuOf(() => respond(provider, info, snap.history, options));
        at.oursCpuMs.push(cpuMs);
        return cpuMs;
      };
      http[`raw${round}`] = async () => {
        const { cpuMs } = await cpuOf(async () => {
          if ((await drain(await real.send(snap.request))) === 0) throw new Error(`${p.label}: an empty answer`);
        });
        at.rawCpuMs.push(cpuMs);
        return cpuMs;
      };
    }
    try {
      await alternate(repeats * OWN_SAMPLES_PER_REQUEST, own);
      // The first half warms up whatever grows once (compiled code, connection buffers); what the
      // second half leaves is what requests leave.
      await alternate(Math.ceil(repeats / 2), http);
      gc();
      const before = process.memoryUsage().heapUsed;
      await alternate(Math.floor(repeats / 2), http);
      gc();
      out.repeatedHeapGrowthBytes = process.memoryUsage().heapUsed - before;
      out.repeatedRequests = Math.floor(repeats / 2) * Object.keys(http).length;
    } finally {
      replayed.dispose();
    }
  } finally {
    provider.dispose();
  }
  return out;
}

async function toolLoops(real: HttpClient, repeats: number): Promise<Record<string, LoopResult>> {
  const out: Record<string, LoopResult> = {};
  // Warm-up: a few rounds of every protocol, so the code they share is warm for all of them.
  for (const p of PROTOCOLS) await toolLoop(real, p, 1);
  for (const p of PROTOCOLS) out[p.protocol] = await toolLoop(real, p, repeats);
  return out;
}

async function main(): Promise<void> {
  const [url, key, runsArg = '200', which = 'both'] = process.argv.slice(2);
  if (!url || !key) throw new Error('usage: lmChild.ts <gateway url> <key> [runs] [first|tools|both|loop]');
  const runs = Number(runsArg);
  const { http } = clientFor(url, key, {
    timeouts: { connectMs: 5000, firstByteMs: 60_000, idleMs: 60_000, longMs: 60_000 },
  });
  try {
    if (which === 'loop') {
      // `runs`: how many times the requests of rounds 5 and 50 are sent again, each way.
      console.log(JSON.stringify({ loop: await toolLoops(http, runs) }));
      return;
    }
    const first = which === 'tools' ? undefined : await firstProgress(http, runs);
    // A round trip is two requests to the double: fewer rounds.
    const tools = which === 'first' ? undefined : await toolRoundTrip(http, Math.max(5, Math.round(runs / 3)));
    console.log(JSON.stringify({ first, tools }));
  } finally {
    await http.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
