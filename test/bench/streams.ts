/**
 * Rows 3 and 4: decoding a streamed answer.
 *
 * Row 3: the double (in its own process) streams the same ~10 MB answer over each protocol on
 * loopback; in this process it is read (a) as raw bytes and thrown away (the floor: node:http and
 * undici through our HttpClient, the faster of the two is the floor), (b) by our adapter
 * (`streamChat` on the HttpClient: HTTP + SSE + parsing into events, read in the batches the
 * extension's own readers take), (c) by the official SDK for that protocol. Runs rotate a/b/c; medians.
 *
 * Each protocol is read from two sources in the same run. b/a is taken on the double itself, which
 * renders every answer and writes it one frame (one HTTP chunk) at a time: can ours keep up with the
 * wire. c/b is taken on the burst front (burstOrigin.ts), which serves the double's bytes for the
 * same request again from memory in 64 KiB chunks: on the double, a reader faster than the double
 * waits for it, and two such readers compared there mostly measure the double's pace. The raw
 * drains are measured on both sources, and each row's note gives the other source's figures.
 *
 * Row 4: the first-token overhead: recorded bytes of an ordinary answer are fed to `eventsFromBytes`
 * and the time from handing over the first chunk to the first textDelta is taken, many times.
 */
import Anthropic from '@anthropic-ai/sdk';
import * as http from 'node:http';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import OpenAI from 'openai';
import { eventsFromBytes, streamChat } from '../../src/core/chat/chat';
import type { ChatProtocol } from '../../src/core/models/types';
import { clientFor } from '../support/client';
import { alternate, median, ms, ratio, ServiceChild, type BenchContext, type Row } from './lib';

export interface GatewayInfo {
  url: string;
  catalogUrl: string;
  key: string;
  /** The burst front of the double (burstOrigin.ts). */
  burstUrl: string;
  cdnUrl?: string;
  /** The gateway (and its CDN origin) through a front at each line rate rows 7 and 8 measure at (throttleFront.ts). */
  throttled: Array<{ mbit: number; url: string; cdnUrl?: string }>;
}

v8.setFlagsFromString('--expose-gc');

// The Anthropic SDK warns on every request that names a model it knows to be deprecated.
const warn = console.warn.bind(console);
console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && /^The model '.*' is deprecated/.test(args[0])) return;
  warn(...args);
};
const gc = vm.runInNewContext('gc') as () => void;

const PROTOCOLS: Array<{ protocol: ChatProtocol; label: string; sdk: string; model: string; path: string }> = [
  {
    protocol: 'chatCompletions',
    label: 'Chat Completions',
    sdk: 'openai chat.completions',
    model: 'gpt-4o-mini',
    path: '/v1/chat/completions',
  },
  { protocol: 'responses', label: 'Responses', sdk: 'openai responses', model: 'gpt-4o-mini', path: '/v1/responses' },
  {
    protocol: 'messages',
    label: 'Messages',
    sdk: '@anthropic-ai/sdk messages',
    model: 'claude-sonnet-4-5',
    path: '/v1/messages',
  },
];

/** Large enough for the whole long answer (the double truncates at max_tokens × 4 characters). */
const MESSAGES_MAX_TOKENS = 10_000_000;
const TIMEOUT_MS = 120_000;

/** The JSON body each protocol's request carries, as our adapter and the SDKs send it. */
function wireBody(protocol: ChatProtocol, model: string, prompt: string): Record<string, unknown> {
  switch (protocol) {
    case 'chatCompletions':
      return { model, stream: true, messages: [{ role: 'user', content: prompt }] };
    case 'responses':
      return { model, stream: true, input: [{ role: 'user', content: prompt }] };
    case 'messages':
      return { model, stream: true, max_tokens: MESSAGES_MAX_TOKENS, messages: [{ role: 'user', content: prompt }] };
  }
}

/** Headers of the raw requests; the HttpClient adds the key itself, node:http gets it here. */
function protocolHeaders(protocol: ChatProtocol, key?: string): Record<string, string> {
  return {
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    'content-type': 'application/json',
    accept: 'text/event-stream',
    ...(protocol === 'messages' ? { 'anthropic-version': '2023-06-01' } : {}),
  };
}

/**
 * Drains a POST's response with node:http and returns the byte count. A fresh connection each time
 * (a kept-alive one may be closed by the server between rounds; on loopback a connect is ~0.1 ms).
 */
function nodeHttpDrain(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent: false },
      (res) => {
        let n = 0;
        res.on('data', (chunk: Buffer) => (n += chunk.length));
        res.on('end', () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`HTTP ${res.statusCode}`))));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface ProtocolResult {
  protocol: ChatProtocol;
  wireBytes: number;
  textChars: number;
  samples: Record<'rawNode' | 'rawUndici' | 'ours' | 'sdk', number[]>;
  /** CPU time of this process (user + system) per run: the client's own cost, whatever the double does. */
  cpu: Record<string, number[]>;
}

/** Reads the long answer of `p` from `base` (the double, or its burst front) with the four readers. */
async function measureProtocol(
  base: string,
  key: string,
  p: (typeof PROTOCOLS)[number],
  kb: number,
  runs: number,
): Promise<ProtocolResult> {
  const prompt = `[[long:${kb}]] benchmark`;
  const { http: client } = clientFor(base, key, {
    timeouts: { connectMs: 5000, firstByteMs: TIMEOUT_MS, idleMs: TIMEOUT_MS, longMs: TIMEOUT_MS },
  });
  const openai = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0, timeout: TIMEOUT_MS });
  const anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: base, maxRetries: 0, timeout: TIMEOUT_MS });
  const url = base + p.path;
  const body = JSON.stringify(wireBody(p.protocol, p.model, prompt));
  const headers = protocolHeaders(p.protocol, key);

  let wireBytes = 0;
  const texts = new Map<string, number>();
  const cpu: Record<string, number[]> = {};
  const timed = async (name: string, work: () => Promise<number>): Promise<number> => {
    gc();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const count = await work();
    const elapsed = performance.now() - t0;
    const c = process.cpuUsage(c0);
    (cpu[name] ??= []).push((c.user + c.system) / 1000);
    if (name.startsWith('raw')) wireBytes = count;
    else {
      const before = texts.get('text');
      if (before !== undefined && before !== count)
        throw new Error(`${p.label}: ${name} read ${count} characters of text, another reader ${before}`);
      texts.set('text', count);
    }
    return elapsed;
  };

  const ours = async (): Promise<number> => {
    let chars = 0;
    const events = streamChat(client, {
      model: p.model,
      protocol: p.protocol,
      stream: true,
      messages: [{ role: 'user', content: prompt }],
      ...(p.protocol === 'messages' ? { maxTokens: MESSAGES_MAX_TOKENS } : {}),
    });
    // In batches, one per network chunk, as the chat view and VS Code's chat read them.
    for await (const batch of events.batches()) {
      for (const e of batch) {
        if (e.type === 'textDelta') chars += e.text.length;
        else if (e.type === 'error') throw e.error;
      }
    }
    return chars;
  };

  const sdk = async (): Promise<number> => {
    let chars = 0;
    const input = [{ role: 'user' as const, content: prompt }];
    if (p.protocol === 'chatCompletions') {
      const stream = await openai.chat.completions.create({ model: p.model, messages: input, stream: true });
      for await (const chunk of stream) chars += chunk.choices[0]?.delta?.content?.length ?? 0;
    } else if (p.protocol === 'responses') {
      const stream = await openai.responses.create({ model: p.model, input, stream: true });
      for await (const event of stream) if (event.type === 'response.output_text.delta') chars += event.delta.length;
    } else {
      const stream = await anthropic.messages.create({
        model: p.model,
        max_tokens: MESSAGES_MAX_TOKENS,
        messages: input,
        stream: true,
      });
      for await (const event of stream)
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') chars += event.delta.text.length;
    }
    return chars;
  };

  const rawUndici = async (): Promise<number> => {
    const response = await client.send({
      method: 'POST',
      url,
      body,
      headers: protocolHeaders(p.protocol),
      idempotent: false,
    });
    let n = 0;
    for await (const chunk of response.body) n += (chunk as Buffer).length;
    return n;
  };

  try {
    // One untimed round warms up the JIT, the connections and the double (and fills the burst front).
    await ours();
    await sdk();
    await rawUndici();
    await nodeHttpDrain(url, headers, body);
    const samples = await alternate(runs, {
      rawNode: () => timed('rawNode', () => nodeHttpDrain(url, headers, body)),
      rawUndici: () => timed('rawUndici', rawUndici),
      ours: () => timed('ours', ours),
      sdk: () => timed('sdk', sdk),
    });
    return { protocol: p.protocol, wireBytes, textChars: texts.get('text') ?? 0, samples, cpu };
  } finally {
    await client.close();
  }
}

export async function streamDecodingRows(ctx: BenchContext, gw: GatewayInfo): Promise<Row[]> {
  // ~10 MB on the wire for Chat Completions ([[long:800]]: 800 KB of markdown in four-word chunks).
  const kb = ctx.quick ? 100 : 800;
  const runs = ctx.quick ? 5 : 9;
  const rows: Row[] = [];
  for (const p of PROTOCOLS) {
    ctx.log(
      `stream decoding: ${p.label}, [[long:${kb}]], ${runs} rounds from the double, ${runs} from its burst front`,
    );
    const paced = summary(await measureProtocol(gw.url, gw.key, p, kb, runs));
    const burst = summary(await measureProtocol(gw.burstUrl, gw.key, p, kb, runs));
    const mb = paced.r.wireBytes / 1024 / 1024;
    rows.push({
      id: '3',
      what: `Stream ${p.label}: ours (b) vs raw drain (a), ${mb.toFixed(1)} MB`,
      ours: ms(paced.ours),
      reference: ms(paced.floor),
      ratio: ratio(paced.ours / paced.floor),
      goal: 'b/a ≤ 1.3',
      pass: paced.ours / paced.floor <= 1.3,
      note:
        `from the double, one HTTP chunk per event; floor = the faster raw drain (node:http ${ms(paced.node)}, undici ${ms(paced.undici)}); ${((mb / paced.ours) * 1000).toFixed(0)} MB/s through our adapter; ` +
        `client CPU: drain ${ms(paced.drainCpu)}, ours ${ms(paced.oursCpu)}; ` +
        `from the burst front (64 KiB chunks): ours ${ms(burst.ours)} vs raw drain ${ms(burst.floor)} (${ratio(burst.ours / burst.floor)})`,
      data: {
        wireBytes: paced.r.wireBytes,
        textChars: paced.r.textChars,
        samplesMs: paced.r.samples,
        cpuMs: paced.r.cpu,
      },
    });
    rows.push({
      id: '3',
      what: `Stream ${p.label}: ${p.sdk} (c) vs ours (b)`,
      ours: ms(burst.ours),
      reference: ms(burst.sdk),
      ratio: ratio(burst.sdk / burst.ours),
      goal: 'c/b ≥ 1.5',
      pass: burst.sdk / burst.ours >= 1.5,
      note:
        `from the burst front (the double's bytes again, 64 KiB chunks; raw drain ${ms(burst.floor)}); ${((mb / burst.sdk) * 1000).toFixed(0)} MB/s through the SDK; ` +
        `client CPU: SDK ${ms(burst.sdkCpu)} vs ours ${ms(burst.oursCpu)} (${ratio(burst.sdkCpu / burst.oursCpu)}); ` +
        `from the double itself: SDK ${ms(paced.sdk)} vs ours ${ms(paced.ours)} (${ratio(paced.sdk / paced.ours)})`,
      data: {
        wireBytes: burst.r.wireBytes,
        textChars: burst.r.textChars,
        samplesMs: burst.r.samples,
        cpuMs: burst.r.cpu,
      },
    });
  }
  return rows;
}

/** The medians of one source's measurement. */
function summary(r: ProtocolResult) {
  const node = median(r.samples.rawNode);
  const undici = median(r.samples.rawUndici);
  const cpuOf = (name: string) => median(r.cpu[name] ?? []);
  return {
    r,
    node,
    undici,
    floor: Math.min(node, undici),
    ours: median(r.samples.ours),
    sdk: median(r.samples.sdk),
    drainCpu: Math.min(cpuOf('rawNode'), cpuOf('rawUndici')),
    oursCpu: cpuOf('ours'),
    sdkCpu: cpuOf('sdk'),
  };
}

/** Records an ordinary answer's body as the HTTP client delivered it, chunk by chunk. */
async function recordChunks(gw: GatewayInfo, p: (typeof PROTOCOLS)[number], prompt: string): Promise<Uint8Array[]> {
  const { http: client } = clientFor(gw.url, gw.key);
  try {
    const response = await client.send({
      method: 'POST',
      url: gw.url + p.path,
      body: JSON.stringify(wireBody(p.protocol, p.model, prompt)),
      headers: protocolHeaders(p.protocol),
      idempotent: false,
    });
    const chunks: Uint8Array[] = [];
    for await (const chunk of response.chunks()) chunks.push(new Uint8Array(chunk));
    return chunks;
  } finally {
    await client.close();
  }
}

/** Splits a body into one chunk per SSE frame, as a slow server delivers it. */
function perFrame(chunks: Uint8Array[]): Uint8Array[] {
  const text = Buffer.concat(chunks).toString('utf8');
  return text
    .split(/(?<=\n\n)/)
    .filter((f) => f)
    .map((f) => new TextEncoder().encode(f));
}

async function firstTextMs(protocol: ChatProtocol, chunks: Uint8Array[]): Promise<number> {
  let t0 = 0;
  async function* feed(): AsyncGenerator<Uint8Array> {
    for (const [i, chunk] of chunks.entries()) {
      if (i === 0) t0 = performance.now();
      yield chunk;
    }
  }
  const events = eventsFromBytes(protocol, feed());
  for await (const e of events) {
    if (e.type === 'textDelta') {
      const t1 = performance.now();
      await events.return(undefined);
      return t1 - t0;
    }
  }
  throw new Error(`${protocol}: no text event`);
}

export async function firstTokenRows(ctx: BenchContext, gw: GatewayInfo): Promise<Row[]> {
  const runs = ctx.quick ? 200 : 1000;
  const perProtocol: Record<string, { cold: number; median: number; medianPerFrame: number; chunks: number }> = {};
  for (const p of PROTOCOLS) {
    // An ordinary answer with reasoning first, so the first text event is not in the first frame.
    const chunks = await recordChunks(gw, p, '[[reasoning]] Why is the sea salty?');
    const frames = perFrame(chunks);
    const cold = await firstTextMs(p.protocol, chunks);
    const samples = await alternate(runs, {
      recorded: () => firstTextMs(p.protocol, chunks),
      perFrame: () => firstTextMs(p.protocol, frames),
    });
    perProtocol[p.protocol] = {
      cold,
      median: median(samples.recorded),
      medianPerFrame: median(samples.perFrame),
      chunks: chunks.length,
    };
  }
  const worst = Math.max(...Object.values(perProtocol).map((v) => Math.max(v.median, v.medianPerFrame)));
  return [
    {
      id: '4',
      what: 'First-token overhead: first body byte → first textDelta (worst protocol)',
      ours: ms(worst, 3),
      reference: '—',
      ratio: '—',
      goal: '≤ 1 ms',
      pass: worst <= 1,
      note:
        `median of ${runs} per protocol, recorded chunks / one chunk per SSE frame: ` +
        PROTOCOLS.map((p) => {
          const v = perProtocol[p.protocol];
          return v
            ? `${p.label} ${v.median.toFixed(3)} / ${v.medianPerFrame.toFixed(3)} ms (cold first run ${v.cold.toFixed(2)} ms)`
            : '';
        }).join('; '),
      data: perProtocol,
    },
  ];
}

/** Starts the double in its own process for the rows that need it. */
export function startGateway(): Promise<ServiceChild<GatewayInfo>> {
  return ServiceChild.start<GatewayInfo>('gatewayChild.ts');
}
