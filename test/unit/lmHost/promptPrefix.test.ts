/**
 * The prefix an upstream's prompt cache reuses: each request of a conversation starts with the
 * bytes of the request before it, up to that request's last turn — on every protocol, for an agent
 * loop in VS Code's chat (its messages converted by requestMessages.ts) and a long sidebar chat
 * (its window read by history.ts), with caching asked for and without.
 */
// First: answers `vscode` for every host module imported after it.
import { fake } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import { requestBody } from '../../../src/core/chat/chat';
import type { ChatMessage, ChatRequest, ChatTool } from '../../../src/core/chat/events';
import { promptCacheRequest } from '../../../src/core/chat/promptCache';
import type { StoredMessage } from '../../../src/core/chat/store/log';
import type { ChatProtocol, ModelInfo } from '../../../src/core/models/types';
import { buildHistory, windowStart } from '../../../src/host/chat/history';
import { toChatMessages } from '../../../src/host/lm/requestMessages';
import { ALL_PROTOCOLS as PROTOCOLS, channelModel as model } from '../../support/models';

const MAX_IMAGE = 5 * 1024 * 1024;

/** The models whose families ask for caching in each form, and one that asks nothing. */
const MODELS = [
  model('claude-sonnet-4-5', 'claude'),
  model('qwen-plus', 'ali'),
  model('gpt-5.1', 'openai'),
  model('deepseek-chat', 'deepseek'),
];

/** The body's conversation: Chat Completions `messages`, Messages `messages`, Responses `input`. */
function turns(body: Record<string, unknown>): unknown[] {
  return (body.messages ?? body.input) as unknown[];
}

/**
 * Whether `next` starts with `prev`'s bytes up to its last turn. The conversation is the body's
 * last field, so everything before it (model, tools, system text, settings) is in the prefix too.
 */
export function keepsPrefix(prev: Record<string, unknown>, next: Record<string, unknown>): boolean {
  const prevText = JSON.stringify(prev);
  const lastTurn = JSON.stringify(turns(prev).at(-1));
  const cut = prevText.lastIndexOf(lastTurn);
  assert.ok(cut > 0, 'the last turn is in the body');
  return JSON.stringify(next).startsWith(prevText.slice(0, cut));
}

/**
 * Whether `next` also repeats `prev`'s last turn byte for byte, the breakpoint markers aside: a
 * marker says where to cache and moves on with every request, but the turn it leaves must keep its
 * bytes (its text as blocks, not back to a string), or the prefix the cache holds is not found.
 */
function keepsLastTurn(prev: Record<string, unknown>, next: Record<string, unknown>): boolean {
  const bare = (body: Record<string, unknown>) =>
    JSON.stringify(body, (key, value: unknown) => (key === 'cache_control' ? undefined : value));
  const prevText = bare(prev);
  const lastTurn = bare({ t: turns(prev).at(-1) }).slice(5, -1);
  return bare(next).startsWith(prevText.slice(0, prevText.lastIndexOf(lastTurn) + lastTurn.length));
}

const TOOLS: ChatTool[] = [
  {
    name: 'read_file',
    description: 'Reads a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  },
  { name: 'run_in_terminal', description: 'Runs a command', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'search',
    description: 'Searches the workspace',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  },
];

/** The tools in another order each round: VS Code lists the enabled tools as it finds them. */
function toolsOfRound(round: number): ChatTool[] {
  const shift = round % TOOLS.length;
  return [...TOOLS.slice(shift), ...TOOLS.slice(0, shift)];
}

function request(
  m: ModelInfo,
  protocol: ChatProtocol,
  messages: ChatMessage[],
  extra: Partial<ChatRequest> = {},
  conversation?: string,
): ChatRequest {
  const cache = promptCacheRequest(m, protocol, { enabled: true, ...(conversation ? { conversation } : {}) });
  return {
    model: m.id,
    protocol,
    messages,
    stream: true,
    maxTokens: 4096,
    ...(cache ? { cache } : {}),
    ...extra,
  };
}

/** VS Code's messages after `rounds` rounds of an agent loop: each a tool call and its 20 KB result. */
function agentMessages(rounds: number): unknown[] {
  const user = (content: unknown[]) => ({ role: fake.LanguageModelChatMessageRole.User, content, name: undefined });
  const assistant = (content: unknown[]) => ({
    role: fake.LanguageModelChatMessageRole.Assistant,
    content,
    name: undefined,
  });
  const out: unknown[] = [
    { role: 3, content: [new fake.LanguageModelTextPart('You are a coding agent. '.repeat(200))], name: undefined },
    user([new fake.LanguageModelTextPart('Fix the failing test.')]),
  ];
  for (let i = 0; i < rounds; i++) {
    out.push(
      assistant([
        new fake.LanguageModelTextPart(`Step ${i}.`),
        new fake.LanguageModelToolCallPart(`call_${i}`, 'read_file', { path: `src/f${i}.ts`, line: i }),
      ]),
    );
    out.push(
      user([
        new fake.LanguageModelToolResultPart(`call_${i}`, [
          new fake.LanguageModelTextPart(`// file ${i}\n` + 'x'.repeat(20_000)),
        ]),
      ]),
    );
  }
  return out;
}

describe('prompt caching: every request starts with the bytes of the one before it', () => {
  for (const protocol of PROTOCOLS) {
    for (const m of MODELS) {
      it(`VS Code chat, 50-round agent loop, ${protocol}, ${m.id}`, () => {
        let prev: Record<string, unknown> | undefined;
        for (let round = 1; round <= 50; round++) {
          const converted = toChatMessages(agentMessages(round) as never, MAX_IMAGE, (id) => ({
            text: `thought of ${id}`,
            signature: `sig-${id}`,
          }));
          const body = requestBody(
            request(m, protocol, converted.messages, {
              system: converted.system,
              tools: toolsOfRound(round),
              thinking: undefined,
            }),
          );
          if (prev) {
            assert.ok(keepsPrefix(prev, body), `round ${round} starts with round ${round - 1}'s request`);
            assert.ok(keepsLastTurn(prev, body), `round ${round} repeats round ${round - 1}'s last turn`);
          }
          prev = body;
        }
        // The families that take breakpoints got them, never more than four; the others none.
        const markers = JSON.stringify(prev).split('"cache_control"').length - 1;
        const breakpoints = promptCacheRequest(m, protocol, { enabled: true })?.breakpoints;
        if (breakpoints) assert.ok(markers >= 2 && markers <= 4, `${markers} breakpoints`);
        else assert.equal(markers, 0);
      });
    }
  }

  /** A store of `count` stored messages, a question and its answer in turn. */
  function sidebarStore(count: number) {
    const messages: StoredMessage[] = [];
    for (let i = 0; i < count; i++) {
      const role = i % 2 === 0 ? 'user' : 'assistant';
      messages.push({
        id: `m${i}`,
        role,
        text: `${role} message ${i} `.repeat(40),
        createdAt: i,
        status: 'done',
      } as StoredMessage);
    }
    return {
      open: async (_id: string, options: { limit?: number }) => ({
        meta: {},
        messages: messages.slice(Math.max(0, messages.length - (options.limit ?? 50))),
        total: messages.length,
      }),
      images: { read: async () => undefined },
    };
  }

  for (const protocol of PROTOCOLS) {
    for (const m of MODELS) {
      it(`sidebar chat, 200 messages, ${protocol}, ${m.id}: the start moves only at a window step`, async () => {
        const options = { historyMessages: 40, imageInputModels: [] };
        let prev: Record<string, unknown> | undefined;
        let breaks = 0;
        let steps = 0;
        for (let count = 2; count <= 200; count += 2) {
          // The question just asked is stored; its answer's placeholder is not sent.
          const sent = await buildHistory(sidebarStore(count - 1) as never, 'c', m, options);
          assert.ok(sent);
          const body = requestBody(request(m, protocol, sent, { system: 'Answer briefly.' }, 'c'));
          if (prev) {
            const stepped = windowStart(count - 1, 40) !== windowStart(count - 3, 40);
            if (stepped) steps++;
            if (!keepsPrefix(prev, body)) {
              breaks++;
              assert.ok(stepped, `message ${count - 1} changes the start of the request only at a window step`);
            } else assert.ok(keepsLastTurn(prev, body), `message ${count - 1} repeats the last turn before it`);
          }
          prev = body;
        }
        assert.ok(steps <= 8, `the window stepped ${steps} times in 100 questions`);
        assert.equal(breaks, steps);
      });
    }
  }
});
