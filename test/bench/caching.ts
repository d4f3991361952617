/**
 * Rows 14a–c: prompt caching, by the gateway double's accounting (test/gateway/promptCache.ts).
 * The requests are the bodies the extension sends (core/chat's builders, caching asked for in each
 * family's form); the double's caches say how many of their input tokens are read from a cache.
 * Tokens written to a cache are counted at the full price too (Anthropic bills them above it).
 */
import { requestBody } from '../../src/core/chat/chat';
import type { ChatMessage, ChatRequest, ChatTool } from '../../src/core/chat/events';
import { promptCacheRequest } from '../../src/core/chat/promptCache';
import type { StoredMessage } from '../../src/core/chat/store/log';
import type { ChatProtocol, ModelInfo } from '../../src/core/models/types';
import { buildHistory } from '../../src/host/chat/history';
import { PromptCacheDouble, cacheBlocks } from '../gateway/promptCache';
import { ratio, type BenchContext, type Row } from './lib';
import { channelModel as model } from '../support/models';

/** One model per protocol, of a family that takes caching requests over it. */
const CASES: Array<{ protocol: ChatProtocol; model: ModelInfo }> = [
  { protocol: 'chatCompletions', model: model('qwen-plus', 'ali') },
  { protocol: 'responses', model: model('gpt-5', 'openai') },
  { protocol: 'messages', model: model('claude-sonnet-4-5', 'claude') },
];

const TOOLS: ChatTool[] = ['read_file', 'run_in_terminal', 'search', 'edit_file'].map((name) => ({
  name,
  description: `The ${name} tool of a coding agent.`,
  inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
}));

/** The conversation after `rounds` rounds of an agent loop, each a tool call and its 20 KB result. */
function agentLoop(rounds: number): ChatMessage[] {
  const out: ChatMessage[] = [{ role: 'user', content: 'Fix the failing test in src/parser.ts.' }];
  for (let i = 0; i < rounds; i++) {
    out.push({
      role: 'assistant',
      content: `Reading file ${i}.`,
      toolCalls: [{ id: `call_${i}`, name: 'read_file', input: { path: `src/f${i}.ts` } }],
    });
    out.push({
      role: 'user',
      content: '',
      toolResults: [
        { callId: `call_${i}`, content: `// f${i}.ts\n` + `const value${i} = ${i};\n`.repeat(1200).slice(0, 20_000) },
      ],
    });
  }
  return out;
}

interface Loop {
  inputTokens: number;
  fullPriceTokens: number;
  cachedTokens: number;
  rounds: number;
  prefixKept: number;
}

/** Sends `conversations` (one request each) through a fresh double cache; `caching` asks for caching or not. */
function account(c: (typeof CASES)[number], conversations: ChatMessage[][], caching: boolean, system: string): Loop {
  const cache = new PromptCacheDouble();
  const loop: Loop = { inputTokens: 0, fullPriceTokens: 0, cachedTokens: 0, rounds: 0, prefixKept: 0 };
  let prev: Record<string, unknown> | undefined;
  for (const messages of conversations) {
    const ask = promptCacheRequest(c.model, c.protocol, { enabled: caching, conversation: 'bench' });
    const request: ChatRequest = {
      model: c.model.id,
      protocol: c.protocol,
      messages,
      system,
      stream: true,
      maxTokens: 4096,
      tools: TOOLS,
      ...(ask ? { cache: ask } : {}),
    };
    const body = requestBody(request);
    const key = typeof body.prompt_cache_key === 'string' ? body.prompt_cache_key : '';
    const out = cache.account(`bench\n${c.model.id}\n${key}`, c.model.ownedBy ?? '', body);
    if (!out.ok) throw new Error(out.message);
    const total = cacheBlocks(body).reduce((n, b) => n + b.tokens, 0);
    loop.inputTokens += total;
    loop.cachedTokens += out.account.cachedTokens;
    loop.fullPriceTokens += total - out.account.cachedTokens;
    if (prev) {
      loop.rounds++;
      if (keepsPrefix(prev, body)) loop.prefixKept++;
    }
    prev = body;
  }
  return loop;
}

/** Whether `next` starts with `prev`'s bytes up to its last turn (the conversation is the body's last field). */
function keepsPrefix(prev: Record<string, unknown>, next: Record<string, unknown>): boolean {
  const prevText = JSON.stringify(prev);
  const turns = (prev.messages ?? prev.input) as unknown[];
  const cut = prevText.lastIndexOf(JSON.stringify(turns.at(-1)));
  return cut > 0 && JSON.stringify(next).startsWith(prevText.slice(0, cut));
}

/** The requests of a 200-message sidebar conversation, each further message, read as the sidebar reads them. */
async function sidebarConversations(m: ModelInfo): Promise<ChatMessage[][]> {
  const stored: StoredMessage[] = [];
  const out: ChatMessage[][] = [];
  const store = {
    open: async (_id: string, options: { limit?: number }) => ({
      meta: {},
      messages: stored.slice(Math.max(0, stored.length - (options.limit ?? 50))),
      total: stored.length,
    }),
    images: { read: async () => undefined },
  };
  for (let i = 0; i < 200; i += 2) {
    stored.push({
      id: `q${i}`,
      role: 'user',
      text: `Question ${i}: ` + 'how does this part of the code work? '.repeat(30),
      createdAt: i,
      status: 'done',
    } as StoredMessage);
    const sent = await buildHistory(store as never, 'c', m, { historyMessages: 40, imageInputModels: [] });
    if (!sent) throw new Error('the conversation is gone');
    out.push(sent);
    stored.push({
      id: `a${i}`,
      role: 'assistant',
      text: `Answer ${i}: ` + 'it reads the input and builds the tree. '.repeat(60),
      createdAt: i + 1,
      status: 'done',
    } as StoredMessage);
  }
  return out;
}

export async function cachingRows(ctx: BenchContext): Promise<Row[]> {
  ctx.log('Prompt caching: 50-round agent loops and a 200-message sidebar chat through the double’s caches');
  const system = 'You are a coding agent working in the user’s repository. Follow the instructions exactly. '.repeat(
    40,
  );
  const rounds = Array.from({ length: 50 }, (_, i) => agentLoop(i + 1));
  const agent = Object.fromEntries(
    CASES.map((c) => [c.protocol, { on: account(c, rounds, true, system), off: account(c, rounds, false, system) }]),
  );
  const sidebar: Record<string, { on: Loop; off: Loop }> = {};
  for (const c of CASES) {
    const conversations = await sidebarConversations(c.model);
    sidebar[c.protocol] = {
      on: account(c, conversations, true, 'Answer briefly.'),
      off: account(c, conversations, false, 'Answer briefly.'),
    };
  }
  const share = (l: Loop) => l.fullPriceTokens / l.inputTokens;
  const worst = (all: Record<string, { on: Loop; off: Loop }>) =>
    Math.max(...Object.values(all).map((r) => share(r.on)));
  const describe = (all: Record<string, { on: Loop; off: Loop }>) =>
    Object.entries(all)
      .map(([p, r]) => `${p} ${ratio(share(r.on))} (caching requests off: ${ratio(share(r.off))})`)
      .join('; ');
  const kept = [...Object.values(agent), ...Object.values(sidebar)].map((r) => r.on);
  const agentKept = Object.values(agent).map((r) => r.on);
  const keptShare = agentKept.reduce((n, l) => n + l.prefixKept, 0) / agentKept.reduce((n, l) => n + l.rounds, 0);
  const sidebarKept = Object.values(sidebar).map((r) => r.on);
  return [
    {
      id: '14a',
      what: 'Prompt caching: 50-round agent loop, 20 KB tool results, input tokens at the full price / all input tokens (worst protocol)',
      ours: ratio(worst(agent)),
      reference: '1.00× (no cache)',
      ratio: ratio(worst(agent)),
      goal: '≤ 0.25×',
      pass: worst(agent) <= 0.25,
      note: `Qwen (Chat Completions), GPT-5 (Responses), Claude (Messages): ${describe(agent)}. Writes count at the full price.`,
      data: agent,
    },
    {
      id: '14b',
      what: 'Prompt caching: 200-message sidebar conversation, each further message (worst protocol)',
      ours: ratio(worst(sidebar)),
      reference: '1.00× (no cache)',
      ratio: ratio(worst(sidebar)),
      goal: '≤ 0.25×',
      pass: worst(sidebar) <= 0.25,
      note: `historyMessages 40 (window steps of 20): ${describe(sidebar)}`,
      data: sidebar,
    },
    {
      id: '14c',
      what: 'Prompt caching: round n+1 starts with round n’s request up to its last turn (agent loops)',
      ours: `${(keptShare * 100).toFixed(1)} %`,
      reference: '—',
      ratio: '—',
      goal: '100 %',
      pass: keptShare === 1,
      note: `sidebar: ${sidebarKept.map((l) => `${l.prefixKept}/${l.rounds}`).join(', ')} rounds (the window's steps start anew by design); all: ${kept.length} loops`,
    },
  ];
}
