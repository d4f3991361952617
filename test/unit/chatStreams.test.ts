import * as assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { collectChat, streamChat, type ChatResult } from '../../src/core/chat/chat';
import type { ChatEvent, ChatRequest } from '../../src/core/chat/events';
import type { ResponsesExtras } from '../../src/core/chat/responsesRequest';
import type { HttpClient } from '../../src/core/http';
import type { ChatProtocol } from '../../src/core/models/types';
import {
  CHAT_SCENARIOS,
  DEMO_KEY,
  GatewayDouble,
  PNG_SIGNATURE,
  RATE_LIMITED_KEY,
  VIP_ONLY_MODEL,
  ZERO_QUOTA_KEY,
  type ChatAnswerRecord,
} from '../gateway';
import { htmlErrorPage } from '../gateway/errorBodies';
import { QUOTA_PER_USD } from '../gateway/world';
import { clientFor, TEST_TIMEOUTS } from '../support/client';

const PROTOCOLS: ChatProtocol[] = ['chatCompletions', 'responses', 'messages'];
/** One model every protocol can reach, so the same prompt must give the same text everywhere. */
const MODEL = 'gpt-4o-mini';
const PROMPT = 'What is the capital of France and why?';
const SHORT_TIMEOUTS = { ...TEST_TIMEOUTS, idleMs: 250, firstByteMs: 250 };

describe('chat adapters against the gateway double', function () {
  let gw: GatewayDouble;
  let http: HttpClient;
  const clients: HttpClient[] = [];

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    http = track(clientFor(gw.url, DEMO_KEY).http);
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await gw.stop();
  });
  beforeEach(() => {
    gw.clearLog();
    gw.clearFaults();
  });

  function track(client: HttpClient): HttpClient {
    clients.push(client);
    return client;
  }

  function request(
    protocol: ChatProtocol,
    stream: boolean,
    prompt: string,
    extra: Partial<ChatRequest> = {},
  ): ChatRequest {
    return { model: MODEL, protocol, stream, messages: [{ role: 'user', content: prompt }], ...extra };
  }

  async function chat(
    protocol: ChatProtocol,
    stream: boolean,
    prompt: string,
    opts: { extra?: Partial<ChatRequest>; client?: HttpClient; extras?: ResponsesExtras } = {},
  ): Promise<{ result: ChatResult; events: ChatEvent[]; answer?: ChatAnswerRecord }> {
    const events: ChatEvent[] = [];
    for await (const e of streamChat(opts.client ?? http, request(protocol, stream, prompt, opts.extra), opts.extras))
      events.push(e);
    const result = await collectChat(toAsync(events));
    return { result, events, answer: lastAnswer() };
  }

  function lastAnswer(): ChatAnswerRecord | undefined {
    return [...gw.log].reverse().find((e) => e.answer)?.answer;
  }

  function quotaUnits(key = DEMO_KEY): number {
    return Math.round((gw.quota(key).userUsd ?? 0) * QUOTA_PER_USD);
  }

  /** The usage our adapter reports must be the double's own numbers (Messages has no reasoning count). */
  function assertUsage(protocol: ChatProtocol, result: ChatResult, answer: ChatAnswerRecord): void {
    const u = answer.usage;
    assert.deepEqual(result.usage, {
      inputTokens: u.promptTokens,
      outputTokens: u.completionTokens,
      totalTokens: u.totalTokens,
      ...(protocol === 'messages' ? {} : { reasoningTokens: u.reasoningTokens }),
    });
  }

  function assertPartial(result: ChatResult, answer: ChatAnswerRecord | undefined): void {
    assert.ok(answer);
    assert.ok(result.text.length > 0, 'some text arrived before the failure');
    assert.ok(
      answer.text.startsWith(result.text),
      `partial text is a prefix of the answer: ${JSON.stringify(result.text)}`,
    );
    assert.ok(result.text.length < answer.text.length, 'the answer did not arrive whole');
  }

  for (const protocol of PROTOCOLS) {
    for (const stream of [true, false]) {
      describe(`${protocol}, ${stream ? 'streamed' : 'not streamed'}`, () => {
        it('answers with the double’s text and usage, finishes with stop and charges the quota', async () => {
          const before = quotaUnits();
          const { result, answer } = await chat(protocol, stream, PROMPT);
          assert.ok(answer);
          assert.equal(result.error, undefined);
          assert.equal(result.text, `Echo from ${MODEL}: ${PROMPT}`);
          assert.equal(result.text, answer.text);
          assert.equal(result.reasoning, '');
          assert.deepEqual(result.toolCalls, []);
          assert.equal(result.finishReason, 'stop');
          assertUsage(protocol, result, answer);
          assert.ok(answer.chargedQuota !== undefined && answer.chargedQuota > 0);
          assert.equal(before - quotaUnits(), answer.chargedQuota);
        });

        it('gives reasoning first for [[reasoning]], then the text', async () => {
          const { result, events, answer } = await chat(protocol, stream, `[[reasoning]] ${PROMPT}`);
          assert.ok(answer);
          assert.ok(answer.reasoning.length > 0);
          assert.equal(result.reasoning, answer.reasoning);
          assert.equal(result.text, `Echo from ${MODEL}: ${PROMPT}`);
          const firstText = events.findIndex((e) => e.type === 'textDelta');
          const lastReasoning = events.map((e) => e.type).lastIndexOf('reasoningDelta');
          assert.ok(lastReasoning >= 0 && lastReasoning < firstText, 'reasoning precedes the text');
          assertUsage(protocol, result, answer);
        });

        it('returns a get_weather call with its whole arguments for [[tool]]', async () => {
          const { result, answer } = await chat(protocol, stream, '[[tool]] What is the weather in Oslo today?');
          assert.ok(answer);
          assert.equal(result.toolCalls.length, 1);
          const [call] = result.toolCalls;
          assert.equal(call?.name, 'get_weather');
          assert.deepEqual(JSON.parse(call?.arguments ?? ''), { city: 'Oslo', unit: 'celsius' });
          assert.equal(call?.id, answer.toolCalls[0]?.id);
          assert.equal(result.text, 'Let me look up the weather in Oslo.');
          assert.equal(result.finishReason, 'toolCalls');
          assertUsage(protocol, result, answer);
        });

        it('carries [[long:4]] markdown whole', async () => {
          const { result, answer } = await chat(protocol, stream, '[[long:4]] document the API');
          assert.ok(answer);
          assert.equal(result.text, answer.text);
          assert.ok(result.text.length >= 4 * 1024);
          for (const needle of ['```ts', '| key | value | note |', '- first point', '1. step one', '## Section'])
            assert.ok(result.text.includes(needle), needle);
          assertUsage(protocol, result, answer);
        });

        it('passes the [[xss]] payloads through as plain text', async () => {
          const { result } = await chat(protocol, stream, '[[xss]] show me markup');
          for (const payload of [
            '<script>alert(1)</script>',
            '<img src=x onerror=alert(1)>',
            '[link](javascript:alert(1))',
          ]) {
            assert.ok(result.text.includes(payload), payload);
          }
        });

        it('is not disturbed by keep-alive pings or [[slow:1]] pacing', async () => {
          const { result, answer } = await chat(protocol, stream, `[[ping]] [[slow:1]] ${PROMPT}`);
          assert.ok(answer);
          assert.equal(result.error, undefined);
          assert.equal(result.text, `Echo from ${MODEL}: ${PROMPT}`);
          assertUsage(protocol, result, answer);
        });

        it('finishes with length for [[incomplete]] and for a small max token limit', async () => {
          const marked = await chat(protocol, stream, `[[incomplete]] ${PROMPT}`);
          assert.equal(marked.result.finishReason, 'length');
          assert.equal(marked.result.text, marked.answer?.text);
          assert.ok(`Echo from ${MODEL}: ${PROMPT}`.startsWith(marked.result.text) && marked.result.text.length < 40);

          const limited = await chat(protocol, stream, PROMPT, { extra: { maxTokens: 4 } });
          assert.equal(limited.result.finishReason, 'length');
          assert.equal(limited.result.text, limited.answer?.text);
          assert.ok(limited.result.text.length <= 16 && limited.result.text.length > 0);
        });

        it(
          'ends with a server error for [[midstream-error]]' + (stream ? ', keeping the text that came first' : ''),
          async () => {
            const { result, events, answer } = await chat(protocol, stream, `[[midstream-error]] ${PROMPT}`);
            assert.equal(events.at(-1)?.type, 'error');
            assert.equal(result.error?.kind, 'server');
            assert.equal(result.finishReason, undefined);
            if (stream) assertPartial(result, answer);
            else assert.equal(result.text, '');
          },
        );

        it('treats [[failed]] as a failure', async () => {
          const { result, answer } = await chat(protocol, stream, `[[failed]] ${PROMPT}`);
          assert.equal(result.error?.kind, 'server');
          if (stream) assertPartial(result, answer);
        });

        it('reports an error that arrives in a 200 for [[error-in-200]]', async () => {
          const { result, answer } = await chat(protocol, stream, `[[error-in-200]] ${PROMPT}`);
          assert.equal(result.error?.kind, 'server');
          assert.equal(result.text, '');
          assert.equal(answer?.chargedQuota, 0);
        });

        it('keeps the partial text and reports an error when the connection is [[cut]]', async () => {
          const { result, answer } = await chat(protocol, stream, `[[cut]] ${PROMPT}`);
          assert.ok(result.error, 'an error event ends the answer');
          assert.equal(result.finishReason, undefined);
          if (stream) {
            assertPartial(result, answer);
            assert.match(result.error.message, /closed in the middle of the answer/);
          }
        });

        if (stream) {
          it('reports a stream that ends cleanly without its terminator ([[cut:clean]])', async () => {
            const { result, answer } = await chat(protocol, stream, `[[cut:clean]] ${PROMPT}`);
            assert.equal(result.error?.kind, 'protocol');
            assert.match(result.error?.message ?? '', /cut off/);
            assertPartial(result, answer);
          });

          it('keeps the partial text when cancelled', async () => {
            const controller = new AbortController();
            const events: ChatEvent[] = [];
            for await (const e of streamChat(
              http,
              request(protocol, true, `[[stall]] ${PROMPT}`, { signal: controller.signal }),
            )) {
              events.push(e);
              if (e.type === 'textDelta' && !controller.signal.aborted) controller.abort();
            }
            const result = await collectChat(toAsync(events));
            assert.equal(result.error?.kind, 'cancelled');
            assertPartial(result, lastAnswer());
          });
        }

        it('reports quota and no-channel errors as such', async () => {
          const poor = track(clientFor(gw.url, ZERO_QUOTA_KEY).http);
          const quota = await chat(protocol, stream, PROMPT, { client: poor });
          assert.equal(quota.result.error?.kind, 'quota');
          // The Messages shape of a relay error has no code (§3.5); the message says it.
          assert.equal(quota.result.error?.code, protocol === 'messages' ? undefined : 'insufficient_user_quota');
          assert.match(quota.result.error?.detail ?? '', /用户额度不足/);
          assert.equal(quota.result.error?.status, 403);

          const noChannel = await chat(protocol, stream, PROMPT, { extra: { model: VIP_ONLY_MODEL } });
          assert.equal(noChannel.result.error?.kind, 'modelUnavailable');
          assert.equal(noChannel.result.error?.status, 503);
          assert.match(noChannel.result.error?.message ?? '', new RegExp(VIP_ONLY_MODEL));
        });
      });
    }
  }

  describe('across protocols', () => {
    it('gives the same text and usage for the same prompt on every protocol, streamed or not', async () => {
      const seen: Array<{ text: string; usage: unknown }> = [];
      for (const protocol of PROTOCOLS) {
        for (const stream of [true, false]) {
          const { result } = await chat(protocol, stream, 'Tell me about tides.');
          seen.push({ text: result.text, usage: { ...result.usage, reasoningTokens: undefined } });
        }
      }
      for (const s of seen) assert.deepEqual(s, seen[0]);
      assert.equal(seen[0]?.text, `Echo from ${MODEL}: Tell me about tides.`);
    });

    it('times out a [[stall]] on every protocol: streamed after the idle limit keeping the partial text, else before the first byte', async () => {
      // undici checks its timeouts on a coarse clock (about a second), so the six run side by side.
      const client = track(clientFor(gw.url, DEMO_KEY, { timeouts: SHORT_TIMEOUTS }).http);
      const cases = PROTOCOLS.flatMap((protocol) => [true, false].map((stream) => ({ protocol, stream })));
      const prompts = cases.map((c, i) => `[[stall]] ${PROMPT} (${i})`);
      const results = await Promise.all(cases.map((c, i) => chat(c.protocol, c.stream, prompts[i] ?? '', { client })));
      results.forEach(({ result }, i) => {
        const c = cases[i];
        assert.equal(result.error?.kind, 'timeout', `${c?.protocol} ${c?.stream}`);
        if (c?.stream) {
          const answer = gw.log.find((e) => e.answer && e.bodyText?.includes(`(${i})`))?.answer;
          assertPartial(result, answer);
        } else {
          assert.equal(result.text, '');
        }
      });
    });

    it('gives different answers to different prompts', async () => {
      const a = await chat('chatCompletions', true, 'first prompt');
      const b = await chat('chatCompletions', true, 'second prompt');
      assert.notEqual(a.result.text, b.result.text);
    });

    it('has deepseek-r1 reason on Chat Completions without being asked', async () => {
      for (const stream of [true, false]) {
        const { result, answer } = await chat('chatCompletions', stream, PROMPT, { extra: { model: 'deepseek-r1' } });
        assert.ok(answer);
        assert.ok(result.reasoning.length > 0);
        assert.equal(result.reasoning, answer.reasoning);
        assert.equal(result.usage?.reasoningTokens, answer.usage.reasoningTokens);
        assert.ok((result.usage?.reasoningTokens ?? 0) > 0);
      }
    });

    it('says it searched when enable_search reaches an Alibaba model, and ignores it elsewhere', async () => {
      const qwen = await chat('chatCompletions', true, PROMPT, { extra: { model: 'qwen-plus', enableSearch: true } });
      assert.match(qwen.result.text, /I searched the web for "What is the capital of France and why\?"/);
      const plain = await chat('chatCompletions', false, PROMPT, { extra: { model: 'qwen-plus' } });
      assert.doesNotMatch(plain.result.text, /searched the web/);
      const other = await chat('chatCompletions', true, PROMPT, { extra: { enableSearch: true } });
      assert.equal(other.result.text, `Echo from ${MODEL}: ${PROMPT}`);
      assert.match(gw.log.at(-1)?.bodyText ?? '', /"enable_search":true/);
    });

    it('refuses Responses for channels without a Responses conversion, pointing to Chat Completions', async () => {
      for (const model of ['claude-sonnet-4-5', 'kimi-k2-0905-preview', 'glm-4.6']) {
        for (const stream of [true, false]) {
          const { result } = await chat('responses', stream, PROMPT, { extra: { model } });
          assert.equal(result.error?.kind, 'notImplemented', model);
          assert.equal(result.error?.code, 'convert_request_failed');
          assert.equal(result.error?.status, 500);
          assert.match(result.error?.message ?? '', /Chat Completions/);
          assert.equal(result.text, '');
        }
      }
      // The same models still chat over Chat Completions.
      const ok = await chat('chatCompletions', true, PROMPT, { extra: { model: 'claude-sonnet-4-5' } });
      assert.equal(ok.result.text, `Echo from claude-sonnet-4-5: ${PROMPT}`);
    });

    it('sends Messages with anthropic-version 2023-06-01 and Bearer auth only', async () => {
      await chat('messages', true, PROMPT);
      const entry = gw.log.find((e) => e.path === '/v1/messages');
      assert.ok(entry);
      assert.equal(entry.headers['anthropic-version'], '2023-06-01');
      assert.equal(entry.headers.authorization, `Bearer ${DEMO_KEY}`);
      assert.equal(entry.headers['x-api-key'], undefined);
      assert.equal(entry.answer?.anthropicVersion, '2023-06-01');
    });

    it('sends Messages with max_tokens and with turns that start with the user and alternate', async () => {
      // A history window that starts with an answer, and two questions in a row (the answer between them failed).
      const messages: ChatRequest['messages'] = [
        { role: 'assistant', content: 'an answer whose question fell outside the window' },
        { role: 'user', content: 'first question' },
        { role: 'user', content: PROMPT },
      ];
      const { result } = await chat('messages', false, PROMPT, { extra: { messages, maxTokens: 321 } });
      assert.equal(result.error, undefined, 'the double (as strict as Anthropic) accepted the request');
      const entry = [...gw.log].reverse().find((e) => e.path === '/v1/messages');
      const body = JSON.parse(entry?.bodyText ?? '{}') as {
        max_tokens?: number;
        messages?: Array<{ role: string; content: unknown }>;
      };
      assert.equal(body.max_tokens, 321);
      assert.deepEqual(
        body.messages?.map((m) => m.role),
        ['user'],
      );
      assert.deepEqual(body.messages?.[0]?.content, [
        { type: 'text', text: 'first question' },
        { type: 'text', text: PROMPT },
      ]);
    });

    it('applies the rate limit to chat routes with the middleware error', async () => {
      const limited = track(clientFor(gw.url, RATE_LIMITED_KEY).http);
      for (let i = 0; i < 2; i++)
        assert.equal((await chat('messages', true, PROMPT, { client: limited })).result.error, undefined);
      const third = await chat('messages', true, PROMPT, { client: limited });
      assert.equal(third.result.error?.kind, 'rateLimited');
    });

    it('respects injected faults on the streaming routes', async () => {
      gw.inject({
        match: { path: '/v1/responses' },
        times: 1,
        action: { type: 'status', status: 502, body: htmlErrorPage(502), fromProxy: true },
      });
      const proxied = await chat('responses', true, PROMPT);
      assert.equal(proxied.result.error?.status, 502);

      gw.inject({
        match: { path: '/v1/chat/completions' },
        times: 1,
        action: { type: 'stallAfterHeaders', firstChunk: ': PING\n\n' },
      });
      const client = track(clientFor(gw.url, DEMO_KEY, { timeouts: SHORT_TIMEOUTS }).http);
      const stalled = await chat('chatCompletions', true, PROMPT, { client });
      assert.equal(stalled.result.error?.kind, 'timeout');

      const after = await chat('chatCompletions', true, PROMPT);
      assert.equal(after.result.text, `Echo from ${MODEL}: ${PROMPT}`);
    });
  });

  describe('Responses image generation', () => {
    const tool = (extra: Record<string, unknown> = {}) => ({
      tools: [{ type: 'image_generation', action: 'generate', model: 'gpt-image-1', ...extra }],
    });

    it('streams partial images, then the final PNG drawn from the prompt', async () => {
      const before = quotaUnits();
      const { result, events, answer } = await chat('responses', true, 'a red fox in the snow', {
        extras: tool({ partial_images: 2 }),
      });
      assert.ok(answer?.image);
      assert.equal(result.error, undefined);
      const partials = events.filter((e) => e.type === 'image' && e.partial);
      assert.equal(partials.length, 2);
      assert.equal(result.images.length, 1);
      assert.equal(result.images[0]?.format, 'png');
      assert.equal(result.images[0]?.base64, answer.image.base64);
      assertPng(result.images[0]?.base64 ?? '');
      for (const p of partials) if (p.type === 'image') assertPng(p.base64);
      assert.equal(result.text, 'Echo from gpt-4o-mini: a red fox in the snow');
      // The image costs more than the text alone.
      assert.equal(before - quotaUnits(), answer.chargedQuota);
      const textOnly = (await chat('responses', true, 'a red fox in the snow')).answer?.chargedQuota ?? 0;
      assert.ok((answer.chargedQuota ?? 0) > textOnly);
    });

    it('sends no partial images unless asked, and the same picture without streaming', async () => {
      const streamed = await chat('responses', true, 'a lighthouse', { extras: tool() });
      assert.equal(streamed.events.filter((e) => e.type === 'image' && e.partial).length, 0);
      const whole = await chat('responses', false, 'a lighthouse', { extras: tool() });
      assert.equal(whole.result.images.length, 1);
      assert.equal(whole.result.images[0]?.base64, streamed.result.images[0]?.base64);
      assertPng(whole.result.images[0]?.base64 ?? '');
      const other = await chat('responses', false, 'a windmill', { extras: tool() });
      assert.notEqual(other.result.images[0]?.base64, whole.result.images[0]?.base64, 'pixels depend on the prompt');
    });

    it('refuses an image model as the outer model, and an unknown image tool model', async () => {
      const outer = await chat('responses', true, 'a cat', { extra: { model: 'gpt-image-1' }, extras: tool() });
      assert.equal(outer.result.error?.status, 400);
      assert.equal(outer.result.error?.code, 'model_not_found');
      assert.match(outer.result.error?.detail ?? '', /not supported with the Responses API/);
      const badTool = await chat('responses', false, 'a cat', { extras: tool({ model: 'dall-e-9' }) });
      assert.equal(badTool.result.error?.status, 400);
      assert.equal(badTool.result.error?.code, 'invalid_value');
    });
  });

  describe('the double’s wire format', () => {
    async function raw(
      path: string,
      body: unknown,
      headers: Record<string, string> = {},
    ): Promise<{ status: number; type: string; text: string }> {
      const res = await fetch(gw.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${DEMO_KEY}`, ...headers },
        body: JSON.stringify(body),
      });
      return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
    }

    it('Chat Completions: data-only frames, a choices:[] usage chunk without stream_options, then [DONE]', async () => {
      const { type, text } = await raw('/v1/chat/completions', {
        model: MODEL,
        stream: true,
        messages: [{ role: 'user', content: '[[ping]] hi' }],
      });
      assert.equal(type, 'text/event-stream');
      const frames = text.split('\n\n').filter(Boolean);
      assert.ok(
        frames.every((f) => f.startsWith('data: ') || f === ': PING'),
        'only data: lines and comments',
      );
      assert.ok(frames.includes(': PING'));
      assert.equal(frames.at(-1), 'data: [DONE]');
      const usage = JSON.parse((frames.at(-2) ?? '').slice(6)) as {
        choices: unknown[];
        usage: Record<string, unknown>;
      };
      assert.deepEqual(usage.choices, []);
      assert.equal(
        usage.usage.total_tokens,
        (usage.usage.prompt_tokens as number) + (usage.usage.completion_tokens as number),
      );
      assert.ok('claude_cache_creation_5_m_tokens' in usage.usage, 'new-api’s own Usage struct');

      const opted = await raw('/v1/chat/completions', {
        model: MODEL,
        stream: true,
        stream_options: { include_usage: false },
        messages: [{ role: 'user', content: 'hi' }],
      });
      assert.ok(!opted.text.includes('"choices":[]'), 'no usage chunk when the client opted out');
    });

    it('Responses: event lines equal to the JSON type and sequence numbers from 0', async () => {
      const { text } = await raw('/v1/responses', {
        model: 'gpt-5',
        stream: true,
        input: '[[reasoning]] [[tool]] hi',
        tools: [{ type: 'image_generation', partial_images: 1 }],
      });
      const events = parseSse(text);
      events.forEach((e, i) => {
        assert.equal(e.event, e.json.type);
        assert.equal(e.json.sequence_number, i);
      });
      const types = events.map((e) => String(e.json.type));
      assert.equal(types[0], 'response.created');
      assert.equal(types.at(-1), 'response.completed');
      const added = events
        .filter((e) => e.json.type === 'response.output_item.added')
        .map((e) => (e.json.item as { type: string }).type);
      assert.deepEqual(added, ['reasoning', 'image_generation_call', 'message', 'function_call']);
      const image = types.filter((t) => t.startsWith('response.image_generation_call.'));
      assert.deepEqual(image, [
        'response.image_generation_call.in_progress',
        'response.image_generation_call.generating',
        'response.image_generation_call.partial_image',
        'response.image_generation_call.completed',
      ]);
    });

    it('Responses: both error event shapes, failed and incomplete', async () => {
      const flat = parseSse(
        (await raw('/v1/responses', { model: MODEL, stream: true, input: '[[midstream-error]] one two three four' }))
          .text,
      ).at(-1);
      assert.deepEqual(Object.keys(flat?.json ?? {}).sort(), ['code', 'message', 'param', 'sequence_number', 'type']);
      const nested = parseSse(
        (
          await raw('/v1/responses', {
            model: MODEL,
            stream: true,
            input: '[[midstream-error:nested]] one two three four',
          })
        ).text,
      ).at(-1);
      assert.equal((nested?.json.error as { code: string }).code, 'server_error');
      const failed = parseSse(
        (await raw('/v1/responses', { model: MODEL, stream: true, input: '[[failed]] one two three four' })).text,
      ).at(-1);
      assert.equal(failed?.json.type, 'response.failed');
      assert.equal((failed?.json.response as { status: string }).status, 'failed');
      const incomplete = parseSse(
        (await raw('/v1/responses', { model: MODEL, stream: true, input: '[[incomplete]] one two three four' })).text,
      ).at(-1);
      assert.deepEqual((incomplete?.json.response as { incomplete_details: unknown }).incomplete_details, {
        reason: 'max_output_tokens',
      });
    });

    it('Messages: event names equal to the JSON type, a ping, cumulative output_tokens; x-api-key works without anthropic-version', async () => {
      const { status, text } = await raw(
        '/v1/messages',
        {
          model: 'claude-sonnet-4-5',
          max_tokens: 512,
          stream: true,
          messages: [{ role: 'user', content: '[[reasoning]] hi' }],
        },
        { authorization: '', 'x-api-key': DEMO_KEY },
      );
      assert.equal(status, 200);
      const events = parseSse(text);
      for (const e of events) assert.equal(e.event, e.json.type);
      const names = events.map((e) => e.event);
      assert.deepEqual(names.slice(0, 3), ['message_start', 'content_block_start', 'ping']);
      assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop']);
      const deltas = events
        .filter((e) => e.event === 'content_block_delta')
        .map((e) => (e.json.delta as { type: string }).type);
      assert.ok(
        deltas.includes('thinking_delta') && deltas.includes('signature_delta') && deltas.includes('text_delta'),
      );
      const answer = gw.log.at(-1)?.answer;
      assert.equal(
        (events.at(-2)?.json.usage as { output_tokens: number }).output_tokens,
        answer?.usage.completionTokens,
      );
      assert.equal(answer?.anthropicVersion, undefined);
    });

    it('documents every scenario marker in one table', () => {
      const markers = CHAT_SCENARIOS.map((s) => s.marker);
      for (const m of [
        '[[reasoning]]',
        '[[tool]]',
        '[[long:N]]',
        '[[slow:MS]]',
        '[[stall]]',
        '[[midstream-error]]',
        '[[error-in-200]]',
        '[[cut]]',
        '[[xss]]',
        '[[ping]]',
        '[[incomplete]]',
        '[[failed]]',
      ]) {
        assert.ok(markers.includes(m), m);
      }
    });
  });
});

async function* toAsync<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

function parseSse(text: string): Array<{ event?: string; json: Record<string, unknown> }> {
  return text
    .split('\n\n')
    .filter((f) => f.trim() && !f.startsWith(':'))
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? '';
      return { ...(event ? { event } : {}), json: JSON.parse(data) as Record<string, unknown> };
    });
}

/** A PNG: signature, IHDR first, and IDAT that inflates to exactly the rows the header promises. */
function assertPng(base64: string): void {
  const buf = Buffer.from(base64, 'base64');
  assert.deepEqual(buf.subarray(0, 8), PNG_SIGNATURE);
  assert.equal(buf.subarray(12, 16).toString('ascii'), 'IHDR');
  const width = buf.readUInt32BE(16);
  const height = buf.readUInt32BE(20);
  const colourType = buf[25];
  assert.equal(colourType, 2);
  let offset = 8;
  const idat: Buffer[] = [];
  while (offset < buf.length) {
    const length = buf.readUInt32BE(offset);
    const type = buf.subarray(offset + 4, offset + 8).toString('ascii');
    if (type === 'IDAT') idat.push(buf.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  assert.equal(inflateSync(Buffer.concat(idat)).length, (width * 3 + 1) * height);
}
