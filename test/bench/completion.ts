/**
 * Row 15: inline completion's client work. Measured in the core, against a minimal HTTP server on
 * loopback in this process (one clock for both ends): what the extension does between VS Code's
 * provider call (after the pause in typing) and the request on the wire; how soon an abort closes
 * the socket; how many of 20 keystrokes typed into a shown completion need a request; and what a
 * 2,000-line file costs against a 20-line one (only the lines near the cursor are read).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Endpoints } from '../../src/core/config';
import { requestCompletion } from '../../src/core/completion/engine';
import { buildPrompt, DEFAULT_PROMPT_BUDGET, type PromptInput } from '../../src/core/completion/prompt';
import { ReuseCache } from '../../src/core/completion/reuse';
import { HttpClient } from '../../src/core/http';
import { DEFAULT_KEY_ID } from '../../src/core/keyQueue';
import type { RefusedProtocolStore } from '../../src/core/models/protocolFallback';
import { DEFAULT_TRUST, DIRECT, TEST_TIMEOUTS } from '../support/client';
import { alternate, median, ms, ratio, type BenchContext, type Row } from './lib';

const FIM_ANSWER =
  'data: {"choices":[{"text":"a + b;","finish_reason":null}]}\n\n' +
  'data: {"choices":[{"text":"","finish_reason":"stop"}],"usage":{"prompt_tokens":900,"completion_tokens":3}}\n\n' +
  'data: [DONE]\n\n';

const NO_REFUSALS: RefusedProtocolStore = {
  load: async () => ({}),
  add: async () => ({}),
  clear: async () => undefined,
};

function fileOf(lines: number): PromptInput['doc'] {
  const text = Array.from({ length: lines }, (_, i) => `  const value${i} = compute(${i}, "item ${i}");`);
  return { lineCount: text.length, lineAt: (i) => text[i] ?? '' };
}

function promptIn(doc: PromptInput['doc']) {
  const line = Math.floor(doc.lineCount / 2);
  return buildPrompt({
    doc,
    line,
    character: 8,
    path: 'src/app.ts',
    language: 'typescript',
    snippets: [],
    budget: DEFAULT_PROMPT_BUDGET,
  });
}

export async function completionRows(ctx: BenchContext): Promise<Row[]> {
  let arrived: (at: number) => void = () => undefined;
  let closed: (at: number) => void = () => undefined;
  let stall = false;
  const server = http.createServer((req, res) => {
    const at = performance.now();
    req.resume();
    req.on('end', () => {
      arrived(at);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (!stall) return void res.end(FIM_ANSWER);
      res.write('data: {"choices":[{"text":"a","finish_reason":null}]}\n\n');
      res.on('close', () => closed(performance.now()));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new HttpClient({
    endpoints: new Endpoints(base),
    getKey: async () => ({ id: DEFAULT_KEY_ID, secret: 'bench' }),
    timeouts: TEST_TIMEOUTS,
    proxy: DIRECT,
    trust: DEFAULT_TRUST,
    userAgent: 'model-gateway-bench',
  });
  const deps = { http: client, refusals: NO_REFUSALS, origin: () => base };
  const target = { model: 'deepseek-chat', chatProtocol: 'chatCompletions' as const };
  const doc = fileOf(2000);
  const cache = new ReuseCache();
  const text = Array.from({ length: 2000 }, (_, i) => doc.lineAt(i)).join('\n');
  const read = (s: number, e: number) => text.slice(s, e);
  try {
    /** From the provider's work after the pause (reuse lookup, prompt, request) to the request's arrival. */
    const toWire = async (): Promise<number> => {
      const got = new Promise<number>((r) => (arrived = r));
      const t0 = performance.now();
      cache.lookup('file:///src/app.ts', 40_000, read);
      const run = requestCompletion(deps, target, promptIn(doc), new AbortController().signal, () => undefined);
      const at = await got;
      await run.done;
      return at - t0;
    };
    const count = ctx.quick ? 200 : 1000;
    for (let i = 0; i < 20; i++) await toWire();
    const wire: number[] = [];
    for (let i = 0; i < count; i++) wire.push(await toWire());
    ctx.log(`completion: ${count} requests to the wire, median ${ms(median(wire))}`);

    stall = true;
    const abortToClose = async (): Promise<number> => {
      const got = new Promise<number>((r) => (arrived = r));
      const gone = new Promise<number>((r) => (closed = r));
      const abort = new AbortController();
      const run = requestCompletion(deps, target, promptIn(doc), abort.signal, () => undefined);
      await got;
      // Let the answer's head and first chunk reach the client: the request is under way.
      await new Promise((r) => setTimeout(r, 5));
      const t0 = performance.now();
      abort.abort();
      const at = await gone;
      await run.done;
      return at - t0;
    };
    const aborts: number[] = [];
    for (let i = 0; i < (ctx.quick ? 20 : 100); i++) aborts.push(await abortToClose());
    stall = false;

    const shown = 'sum + item.price * item.count, 0);';
    const before = 'const total = items.reduce((sum, item) => ';
    let typedDoc = before;
    const typedRead = (s: number, e: number) => typedDoc.slice(s, e);
    const reuse = new ReuseCache();
    reuse.remember('file:///a.ts', before.length, shown, typedRead);
    let misses = 0;
    for (let n = 1; n <= 20; n++) {
      typedDoc = before + shown.slice(0, n);
      if (reuse.lookup('file:///a.ts', typedDoc.length, typedRead) === undefined) misses++;
    }

    // The whole client work per completion (prompt and request to the wire), the two files alternated;
    // the prompt alone is reported in the note (a 20-line file fills less of the budget).
    const small = fileOf(20);
    const wireOf = (d: PromptInput['doc']) => async () => {
      const got = new Promise<number>((r) => (arrived = r));
      const t0 = performance.now();
      const run = requestCompletion(deps, target, promptIn(d), new AbortController().signal, () => undefined);
      const at = await got;
      await run.done;
      return at - t0;
    };
    const sizes = await alternate(ctx.quick ? 100 : 500, { long: wireOf(doc), short: wireOf(small) });
    const promptOnly = (d: PromptInput['doc']) => async () => {
      const t0 = performance.now();
      for (let i = 0; i < 100; i++) promptIn(d);
      return (performance.now() - t0) / 100;
    };
    const prompts = await alternate(20, { long: promptOnly(doc), short: promptOnly(small) });
    const long = median(sizes.long);
    const short = median(sizes.short);
    const wireMedian = median(wire);
    const abortMedian = median(aborts);
    return [
      {
        id: '15a',
        what: 'Completion: provider work to request on the wire (after the pause)',
        ours: ms(wireMedian),
        reference: '—',
        ratio: '—',
        goal: '≤ 1 ms (median of 1,000)',
        pass: wireMedian <= 1,
        note: `median of ${count}; reuse lookup + prompt of a 2,000-line file + request until a loopback server in this process read it`,
        data: { samples: wire.length, median: wireMedian },
      },
      {
        id: '15b',
        what: 'Completion: abort to socket closed',
        ours: ms(abortMedian),
        reference: '—',
        ratio: '—',
        goal: '≤ 20 ms',
        pass: abortMedian <= 20,
        note: `median of ${aborts.length}; the server sees its socket close`,
        data: { median: abortMedian },
      },
      {
        id: '15c',
        what: 'Completion: new requests while typing 20 characters of a shown completion',
        ours: `${misses} of 20`,
        reference: '—',
        ratio: '—',
        goal: '0 of 20',
        pass: misses === 0,
      },
      {
        id: '15d',
        what: 'Completion: client work in a 2,000-line file vs a 20-line file',
        ours: `${ms(long, 3)} vs ${ms(short, 3)}`,
        reference: '—',
        ratio: ratio(long / short),
        goal: '≤ 1.2×',
        pass: long / short <= 1.2,
        note: `medians, the two alternated, prompt + request to the wire; the prompt alone ${ms(median(prompts.long), 3)} vs ${ms(median(prompts.short), 3)} (the long file fills the token budget, the short one cannot)`,
        data: { long, short, promptLong: median(prompts.long), promptShort: median(prompts.short) },
      },
    ];
  } finally {
    await client.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
