import * as assert from 'node:assert/strict';
import { collectChat, streamChat, type ChatResult } from '../../src/core/chat/chat';
import type { ChatEvent, ChatMessage, ChatRequest, ChatTool } from '../../src/core/chat/events';
import type { ChatProtocol } from '../../src/core/models/types';
import { DEMO_KEY } from '../gateway';
import { useDoubleClient } from '../support/client';

/**
 * Tool calling through our adapters against the gateway double: the call, the result sent back,
 * the answer from it, the upstream checks of the round trip, and the request bodies.
 */

const PROTOCOLS: ChatProtocol[] = ['chatCompletions', 'responses', 'messages'];
const MODEL = 'gpt-4o-mini';
const KIMI = 'kimi-k2-thinking';
const PATHS: Record<ChatProtocol, string> = {
  chatCompletions: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
};

const WEATHER: ChatTool = {
  name: 'get_weather',
  description: 'The current weather in a city',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
    required: ['city'],
  },
};
const TIME: ChatTool = { name: 'get_time', inputSchema: { type: 'object', properties: {} } };

describe('tool calling through the chat adapters', function () {
  const double = useDoubleClient();

  async function run(request: ChatRequest): Promise<{ result: ChatResult; events: ChatEvent[] }> {
    const events: ChatEvent[] = [];
    for await (const e of streamChat(double.http, request)) events.push(e);
    const result = await collectChat(
      (async function* () {
        yield* events;
      })(),
    );
    return { result, events };
  }

  function lastBody(protocol: ChatProtocol): Record<string, unknown> {
    const entry = [...double.gw.log].reverse().find((e) => e.path === PATHS[protocol]);
    assert.ok(entry?.bodyText, `a request went to ${PATHS[protocol]}`);
    return JSON.parse(entry.bodyText) as Record<string, unknown>;
  }

  /** The assistant turn a caller stores from a finished answer: text, calls, and the reasoning with its signature. */
  function assistantTurn(r: ChatResult): ChatMessage {
    return {
      role: 'assistant',
      content: r.text,
      toolCalls: r.toolCalls.map(({ id, name, input }) => ({ id, name, input })),
      ...(r.reasoning
        ? { reasoning: { text: r.reasoning, ...(r.reasoningSignature ? { signature: r.reasoningSignature } : {}) } }
        : {}),
    };
  }

  for (const protocol of PROTOCOLS) {
    for (const stream of [true, false]) {
      it(`${protocol}, ${stream ? 'streamed' : 'not streamed'}: call → result → answer from the result`, async () => {
        const ask: ChatMessage = {
          role: 'user',
          content: '[[reasoning]] Please call the tool get_weather for Zürich days=3',
        };
        const base = { model: MODEL, protocol, stream, tools: [WEATHER, TIME] };
        const first = await run({ ...base, messages: [ask] });
        assert.equal(first.result.error, undefined, first.result.error?.message);
        assert.equal(first.result.finishReason, 'toolCalls');
        const calls = first.events.filter((e) => e.type === 'toolCall');
        assert.equal(calls.length, 1, 'exactly one event per finished call');
        const call = first.result.toolCalls[0];
        assert.equal(call?.name, 'get_weather');
        assert.deepEqual(call?.input, { city: 'Zürich', days: 3 });
        assert.equal(call?.id, double.gw.log.at(-1)?.answer?.toolCalls[0]?.id, 'the id the double issued');
        assert.ok(first.result.reasoning.length > 0);
        if (protocol === 'messages') assert.ok(first.result.reasoningSignature, 'the thinking signature is surfaced');

        const second = await run({
          ...base,
          messages: [
            ask,
            assistantTurn(first.result),
            { role: 'user', content: '', toolResults: [{ callId: call?.id ?? '', content: '12°C and sunny' }] },
          ],
        });
        assert.equal(second.result.error, undefined, second.result.error?.message);
        assert.equal(second.result.text, 'The tool said: 12°C and sunny');
        assert.equal(second.result.finishReason, 'stop');
        assert.deepEqual(second.result.toolCalls, []);
      });
    }

    it(`${protocol}: toolMode required calls a tool unasked, and the body says so`, async () => {
      const r = await run({
        model: MODEL,
        protocol,
        stream: true,
        tools: [TIME],
        toolMode: 'required',
        messages: [{ role: 'user', content: 'What now?' }],
      });
      assert.equal(r.result.error, undefined, r.result.error?.message);
      assert.deepEqual(
        r.result.toolCalls.map(({ name, input }) => ({ name, input })),
        [{ name: 'get_time', input: {} }],
      );
      const body = lastBody(protocol);
      assert.deepEqual(body.tool_choice, protocol === 'messages' ? { type: 'any' } : 'required');
      const auto = await run({
        model: MODEL,
        protocol,
        stream: false,
        tools: [TIME],
        messages: [{ role: 'user', content: 'What now?' }],
      });
      assert.deepEqual(auto.result.toolCalls, [], 'auto: no call when none is asked for');
      assert.equal(lastBody(protocol).tool_choice, undefined);
    });

    it(`${protocol}: a tool result that answers no call gets the upstream's 400`, async () => {
      const r = await run({
        model: MODEL,
        protocol,
        stream: true,
        tools: [WEATHER],
        messages: [
          { role: 'user', content: 'hello' },
          { role: 'assistant', content: 'Hi.' },
          { role: 'user', content: 'and?', toolResults: [{ callId: 'call_nowhere', content: 'x' }] },
        ],
      });
      assert.equal(r.result.error?.kind, 'badRequest');
      const expected = {
        chatCompletions: /role 'tool' must be a response to a preceeding message with 'tool_calls'/,
        responses: /No tool call found for function call output with call_id call_nowhere/,
        messages: /unexpected `tool_use_id` found in `tool_result` blocks: call_nowhere/,
      }[protocol];
      assert.match(r.result.error?.message ?? '', expected);
    });
  }

  it('calls sent back without their results get each upstream’s 400', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'get_weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: 'never mind' },
    ];
    const expected: Record<ChatProtocol, RegExp> = {
      chatCompletions:
        /An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'\. The following tool_call_ids did not have response messages: c1/,
      responses: /No tool output found for function call c1\./,
      messages: /messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: c1/,
    };
    for (const protocol of PROTOCOLS) {
      const r = await run({ model: MODEL, protocol, stream: true, tools: [WEATHER], messages });
      assert.equal(r.result.error?.kind, 'badRequest', protocol);
      assert.match(r.result.error?.message ?? '', expected[protocol]);
      assert.equal(r.result.text, '');
    }
  });

  it('request bodies: tools, calls sent back, results, reasoning echo, error flag, per protocol', async () => {
    const turns: ChatMessage[] = [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c1', name: 'get_weather', input: { city: 'Oslo' } }],
        reasoning: { text: 'I need the weather.', signature: 'sig==' },
      },
      { role: 'user', content: 'thanks', toolResults: [{ callId: 'c1', content: 'rain', isError: true }] },
    ];
    await run({ model: MODEL, protocol: 'chatCompletions', stream: false, tools: [WEATHER], messages: turns });
    const cc = lastBody('chatCompletions');
    assert.deepEqual(cc.tools, [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'The current weather in a city',
          parameters: WEATHER.inputSchema,
        },
      },
    ]);
    assert.deepEqual(cc.messages, [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        reasoning_content: 'I need the weather.',
      },
      { role: 'tool', tool_call_id: 'c1', content: 'rain' },
      { role: 'user', content: 'thanks' },
    ]);

    await run({ model: MODEL, protocol: 'responses', stream: false, tools: [WEATHER], messages: turns });
    const rs = lastBody('responses');
    assert.deepEqual(rs.tools, [
      {
        type: 'function',
        name: 'get_weather',
        description: 'The current weather in a city',
        parameters: WEATHER.inputSchema,
        strict: false,
      },
    ]);
    assert.deepEqual(rs.input, [
      { role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'rain' },
      { role: 'user', content: [{ type: 'input_text', text: 'thanks' }] },
    ]);

    const answer = await run({
      model: MODEL,
      protocol: 'messages',
      stream: false,
      tools: [WEATHER],
      messages: [
        ...turns.slice(0, 2),
        { role: 'user', content: '', toolResults: [{ callId: 'c1', content: 'rain', isError: true }] },
      ],
    });
    const ms = lastBody('messages');
    assert.deepEqual(ms.tools, [
      { name: 'get_weather', description: 'The current weather in a city', input_schema: WEATHER.inputSchema },
    ]);
    assert.deepEqual(ms.messages, [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I need the weather.', signature: 'sig==' },
          { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Oslo' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'rain', is_error: true }] },
    ]);
    assert.equal(answer.result.text, 'The tool said: error: rain');

    // Reasoning goes back only with turns that made calls; a plain turn carries none.
    await run({
      model: MODEL,
      protocol: 'chatCompletions',
      stream: false,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Hello.', reasoning: { text: 'greet' } },
        { role: 'user', content: 'bye' },
      ],
    });
    assert.deepEqual((lastBody('chatCompletions').messages as unknown[])[1], { role: 'assistant', content: 'Hello.' });
  });

  it('a user turn that answers the calls and then asks again gets a new call on every protocol (an agent loop goes on)', async () => {
    for (const protocol of ['chatCompletions', 'responses', 'messages'] as const) {
      const model = protocol === 'messages' ? 'claude-sonnet-4-5' : MODEL;
      const ask = { role: 'user' as const, content: 'call the tool get_weather city=Oslo' };
      const first = await run({ model, protocol, stream: true, tools: [WEATHER], messages: [ask] });
      const call = first.result.toolCalls[0];
      assert.ok(call, `${protocol}: the first call`);
      const again = await run({
        model,
        protocol,
        stream: true,
        tools: [WEATHER],
        messages: [
          ask,
          assistantTurn(first.result),
          {
            role: 'user',
            content: 'call the tool get_weather city=Rome',
            toolResults: [{ callId: call.id, content: 'rain' }],
          },
        ],
      });
      assert.equal(again.result.error, undefined, again.result.error?.message);
      assert.deepEqual(
        again.result.toolCalls.map((c) => c.input),
        [{ city: 'Rome' }],
        `${protocol}: a new call, not "The tool said"`,
      );
    }
  });

  it('Claude with thinking on: the answered tool-use turn must start with its thinking block (Anthropic’s 400)', async () => {
    const send = async (assistant: unknown[]) => {
      const res = await fetch(`${double.gw.url}/v1/messages`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${DEMO_KEY}`,
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 2048,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          tools: [{ name: 'get_weather', input_schema: WEATHER.inputSchema }],
          messages: [
            { role: 'user', content: 'weather?' },
            { role: 'assistant', content: assistant },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'fog' }] },
          ],
        }),
      });
      return {
        status: res.status,
        body: (await res.json()) as {
          error?: { type?: string; message?: string };
          content?: Array<{ type: string; text?: string }>;
        },
      };
    };
    const use = { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } };
    const refused = await send([use]);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error?.type, 'invalid_request_error');
    assert.match(
      refused.body.error?.message ?? '',
      /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`\./,
    );
    const accepted = await send([{ type: 'thinking', thinking: 'Need the weather.', signature: 'c2ln' }, use]);
    assert.equal(accepted.status, 200);
    assert.ok(accepted.body.content?.some((b) => b.type === 'text' && b.text === 'The tool said: fog'));
  });

  describe('a Kimi-type thinking model', () => {
    const ask: ChatMessage = { role: 'user', content: 'use the tool get_weather in Lisbon' };

    for (const stream of [true, false]) {
      it(`${stream ? 'streamed' : 'not streamed'}: refuses the tool-call turn without its reasoning_content (400), accepts it with`, async () => {
        const first = await run({
          model: KIMI,
          protocol: 'chatCompletions',
          stream,
          tools: [WEATHER],
          messages: [ask],
        });
        assert.equal(first.result.error, undefined, first.result.error?.message);
        assert.deepEqual(
          first.result.toolCalls.map(({ id, name, input }) => ({ id, name, input })),
          [{ id: 'get_weather:0', name: 'get_weather', input: { city: 'Lisbon' } }],
        );
        assert.ok(first.result.reasoning, 'the model thought');
        const result = {
          role: 'user' as const,
          content: '',
          toolResults: [{ callId: 'get_weather:0', content: '21°C' }],
        };
        const { reasoning: _dropped, ...withoutReasoning } = assistantTurn(first.result);
        const refused = await run({
          model: KIMI,
          protocol: 'chatCompletions',
          stream,
          tools: [WEATHER],
          messages: [ask, withoutReasoning, result],
        });
        assert.equal(refused.result.error?.kind, 'badRequest');
        assert.equal(refused.result.error?.status, 400);
        assert.match(
          refused.result.error?.message ?? '',
          /thinking is enabled but reasoning_content is missing in assistant tool call message at index 1/,
        );

        const accepted = await run({
          model: KIMI,
          protocol: 'chatCompletions',
          stream,
          tools: [WEATHER],
          messages: [ask, assistantTurn(first.result), result],
        });
        assert.equal(accepted.result.error, undefined, accepted.result.error?.message);
        assert.equal(accepted.result.text, 'The tool said: 21°C');
        assert.equal(
          (lastBody('chatCompletions').messages as Array<Record<string, unknown>>)[1]?.reasoning_content,
          first.result.reasoning,
        );
      });
    }

    it('streams argument fragments without index, which our adapter still joins', async () => {
      const raw = await fetchRaw({
        model: KIMI,
        messages: [{ role: 'user', content: ask.content }],
        stream: true,
        tools: [{ type: 'function', function: { name: WEATHER.name, parameters: WEATHER.inputSchema } }],
      });
      const fragments = raw
        .split('\n\n')
        .filter((f) => f.startsWith('data: {'))
        .flatMap(
          (f) =>
            (JSON.parse(f.slice(6)) as { choices?: Array<{ delta?: { tool_calls?: Array<Record<string, unknown>> } }> })
              .choices?.[0]?.delta?.tool_calls ?? [],
        );
      assert.ok(fragments.length > 2);
      assert.ok(
        fragments.some((f) => !('index' in f)),
        'some fragments have no index',
      );
      assert.equal(fragments.filter((f) => 'id' in f).length, 1, 'the id only in the first fragment');
      const ours = await run({
        model: KIMI,
        protocol: 'chatCompletions',
        stream: true,
        tools: [WEATHER],
        messages: [ask],
      });
      assert.deepEqual(
        ours.result.toolCalls[0]?.input,
        JSON.parse(double.gw.log.at(-1)?.answer?.toolCalls[0]?.arguments ?? ''),
      );
    });

    async function fetchRaw(body: unknown): Promise<string> {
      const res = await fetch(`${double.gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 200);
      return res.text();
    }
  });

  for (const [protocol, model] of [...PROTOCOLS.map((p) => [p, MODEL] as const), ['chatCompletions', KIMI] as const]) {
    it(`${protocol} (${model}): the double's [[tools:…]] agent loop calls one tool per round, then answers`, async () => {
      const ask: ChatMessage = {
        role: 'user',
        content: '[[tools:get_time,weather,get_time]] check three things city=Oslo',
      };
      const messages: ChatMessage[] = [ask];
      const called: string[] = [];
      for (let round = 1; round <= 3; round++) {
        const { result } = await run({ model, protocol, stream: true, tools: [WEATHER, TIME], messages });
        assert.equal(result.error, undefined, result.error?.message);
        const call = result.toolCalls[0];
        assert.ok(call, `round ${round} calls a tool (text: ${result.text})`);
        called.push(call.name);
        messages.push(assistantTurn(result), {
          role: 'user',
          content: '',
          toolResults: [{ callId: call.id, content: `result ${round}` }],
        });
      }
      // `weather` matched get_weather by its ending; a Kimi thinking model refuses a turn sent back without its reasoning.
      assert.deepEqual(called, ['get_time', 'get_weather', 'get_time']);
      const { result } = await run({ model, protocol, stream: true, tools: [WEATHER, TIME], messages });
      assert.equal(result.error, undefined, result.error?.message);
      assert.equal(result.text, 'After 3 tool rounds. The tool said: result 3');
    });
  }
});
