import Anthropic from '@anthropic-ai/sdk';
import * as assert from 'node:assert/strict';
import OpenAI from 'openai';
import { collectChat, streamChat, type ChatResult } from '../../src/core/chat/chat';
import type { ResponsesExtras } from '../../src/core/chat/responsesRequest';
import type { HttpClient } from '../../src/core/http';
import type { ChatProtocol } from '../../src/core/models/types';
import type { ChatImage, ChatMessage, ChatRequest, ChatTool } from '../../src/core/chat/events';
import { DEMO_KEY, GatewayDouble, PNG_SIGNATURE, promptPng, ZERO_QUOTA_KEY } from '../gateway';
import { clientFor } from '../support/client';

/**
 * The official SDKs pointed at the double must read the same answers our adapters read. If an SDK
 * chokes on something the double sends, the double is wrong, not the SDK.
 */

const MODEL = 'gpt-4o-mini';
const MAX_TOKENS = 4096; // what our Messages adapter sends by default

const PROMPTS = [
  'Tell me about tides.',
  '[[reasoning]] Why is the sky blue?',
  '[[tool]] What is the weather in Lisbon?',
  '[[reasoning]] [[tool]] Weather for Kyoto please',
  '[[long:3]] write the docs',
  '[[xss]] render this',
  '[[ping]] stay with me',
  '[[incomplete]] explain everything about the sea',
];

/** What both sides must agree on. */
interface Seen {
  text: string;
  reasoning: string;
  toolCalls: Array<{ name: string; args: unknown }>;
  usage: { input?: number; output?: number; total?: number; reasoning?: number };
}

type ImageTool = { type: 'image_generation'; action: 'generate'; model: string; partial_images?: number };

describe('official SDKs against the gateway double', function () {
  let gw: GatewayDouble;
  let http: HttpClient;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    http = clientFor(gw.url, DEMO_KEY).http;
    openai = new OpenAI({ apiKey: DEMO_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 5000 });
    // authToken sends `Authorization: Bearer`, as our adapter does; apiKey null keeps x-api-key out.
    anthropic = new Anthropic({ authToken: DEMO_KEY, apiKey: null, baseURL: gw.url, maxRetries: 0, timeout: 5000 });
  });
  after(async () => {
    await http.close();
    await gw.stop();
  });
  beforeEach(() => gw.clearLog());

  async function ours(
    protocol: ChatProtocol,
    stream: boolean,
    prompt: string,
    extras?: ResponsesExtras,
  ): Promise<ChatResult> {
    return collectChat(
      streamChat(http, { model: MODEL, protocol, stream, messages: [{ role: 'user', content: prompt }] }, extras),
    );
  }

  /** Our side must actually contain what the prompt asked for, so agreeing on nothing cannot pass. */
  function fromOurs(r: ChatResult, protocol: ChatProtocol, prompt: string): Seen {
    assert.equal(r.error, undefined, r.error?.message);
    assert.ok(r.text.length > 0);
    assert.equal(r.reasoning.length > 0, prompt.includes('[[reasoning]]'), 'reasoning present exactly when asked');
    assert.equal(r.toolCalls.length, prompt.includes('[[tool]]') ? 1 : 0);
    assert.equal(
      r.finishReason,
      prompt.includes('[[incomplete]]') ? 'length' : prompt.includes('[[tool]]') ? 'toolCalls' : 'stop',
    );
    return {
      text: r.text,
      reasoning: r.reasoning,
      toolCalls: r.toolCalls.map((c) => ({ name: c.name, args: JSON.parse(c.arguments) as unknown })),
      usage: {
        input: r.usage?.inputTokens,
        output: r.usage?.outputTokens,
        total: r.usage?.totalTokens,
        ...(protocol === 'messages' ? {} : { reasoning: r.usage?.reasoningTokens }),
      },
    };
  }

  async function openaiChat(prompt: string, stream: boolean): Promise<Seen> {
    const messages = [{ role: 'user' as const, content: prompt }];
    if (!stream) {
      const r = await openai.chat.completions.create({ model: MODEL, messages });
      const message = r.choices[0]?.message as
        (OpenAI.Chat.ChatCompletionMessage & { reasoning_content?: string }) | undefined;
      return {
        text: message?.content ?? '',
        reasoning: message?.reasoning_content ?? '',
        toolCalls: (message?.tool_calls ?? []).map((c) =>
          c.type === 'function'
            ? { name: c.function.name, args: JSON.parse(c.function.arguments) as unknown }
            : { name: '', args: null },
        ),
        usage: {
          input: r.usage?.prompt_tokens,
          output: r.usage?.completion_tokens,
          total: r.usage?.total_tokens,
          reasoning: r.usage?.completion_tokens_details?.reasoning_tokens,
        },
      };
    }
    // No stream_options: new-api still appends its usage chunk.
    const s = await openai.chat.completions.create({ model: MODEL, messages, stream: true });
    const seen: Seen = { text: '', reasoning: '', toolCalls: [], usage: {} };
    const args: string[] = [];
    for await (const chunk of s) {
      if (chunk.usage) {
        const u = chunk.usage;
        seen.usage = {
          input: u.prompt_tokens,
          output: u.completion_tokens,
          total: u.total_tokens,
          reasoning: u.completion_tokens_details?.reasoning_tokens,
        };
      }
      const delta = chunk.choices[0]?.delta as
        (OpenAI.Chat.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null }) | undefined;
      seen.text += delta?.content ?? '';
      seen.reasoning += delta?.reasoning_content ?? '';
      for (const tc of delta?.tool_calls ?? []) {
        if (tc.function?.name) seen.toolCalls[tc.index] = { name: tc.function.name, args: null };
        args[tc.index] = (args[tc.index] ?? '') + (tc.function?.arguments ?? '');
      }
    }
    seen.toolCalls.forEach((c, i) => (c.args = JSON.parse(args[i] ?? '') as unknown));
    return seen;
  }

  async function openaiResponses(
    prompt: string,
    stream: boolean,
    tools?: ImageTool[],
  ): Promise<{ seen: Seen; response: OpenAI.Responses.Response; events: string[] }> {
    const params = { model: MODEL, input: prompt, ...(tools ? { tools } : {}) };
    let response: OpenAI.Responses.Response;
    const events: string[] = [];
    let reasoning = '';
    if (stream) {
      const s = openai.responses.stream(params);
      for await (const event of s) {
        events.push(event.type);
        if (event.type === 'response.reasoning_summary_text.delta') reasoning += event.delta;
      }
      response = await s.finalResponse();
    } else {
      response = await openai.responses.create(params);
      for (const item of response.output)
        if (item.type === 'reasoning') reasoning += item.summary.map((p) => p.text).join('');
    }
    const u = response.usage;
    return {
      seen: {
        text: response.output_text,
        reasoning,
        toolCalls: response.output.flatMap((item) =>
          item.type === 'function_call' ? [{ name: item.name, args: JSON.parse(item.arguments) as unknown }] : [],
        ),
        usage: {
          input: u?.input_tokens,
          output: u?.output_tokens,
          total: u?.total_tokens,
          reasoning: u?.output_tokens_details.reasoning_tokens,
        },
      },
      response,
      events,
    };
  }

  async function anthropicMessages(prompt: string, stream: boolean): Promise<Seen> {
    const params = { model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user' as const, content: prompt }] };
    const message = stream
      ? await anthropic.messages.stream(params).finalMessage()
      : await anthropic.messages.create(params);
    return {
      text: message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
      reasoning: message.content.map((b) => (b.type === 'thinking' ? b.thinking : '')).join(''),
      toolCalls: message.content.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, args: b.input }] : [])),
      usage: {
        input: message.usage.input_tokens,
        output: message.usage.output_tokens,
        total: message.usage.input_tokens + message.usage.output_tokens,
      },
    };
  }

  for (const stream of [true, false]) {
    const how = stream ? 'streamed' : 'not streamed';
    for (const prompt of PROMPTS) {
      describe(`${JSON.stringify(prompt)}, ${how}`, () => {
        it('Chat Completions: openai reads what our adapter reads (reasoning_content from the raw chunks)', async () => {
          assert.deepEqual(
            await openaiChat(prompt, stream),
            fromOurs(await ours('chatCompletions', stream, prompt), 'chatCompletions', prompt),
          );
        });

        it('Responses: openai reads what our adapter reads (reasoning from the summary events)', async () => {
          const { seen } = await openaiResponses(prompt, stream);
          assert.deepEqual(seen, fromOurs(await ours('responses', stream, prompt), 'responses', prompt));
        });

        it('Messages: anthropic reads what our adapter reads (thinking blocks)', async () => {
          assert.deepEqual(
            await anthropicMessages(prompt, stream),
            fromOurs(await ours('messages', stream, prompt), 'messages', prompt),
          );
        });
      });
    }
  }

  describe('request shapes: the SDKs’ request types are the reference', () => {
    const png = promptPng('conformance picture');
    const base64 = png.toString('base64');
    const image: ChatImage = { mediaType: 'image/png', base64 };
    const dataUrl = `data:image/png;base64,${base64}`;
    const question = 'Describe this picture.';

    /** The JSON body of the last request to `path` (the double logs bodies under 1 MB). */
    function lastBody(path: string): unknown {
      const entry = [...gw.log].reverse().find((e) => e.path === path);
      assert.ok(entry?.bodyText, `a request went to ${path}`);
      return JSON.parse(entry.bodyText) as unknown;
    }

    async function oursBody(
      request: Omit<ChatRequest, 'messages'> & { images?: ChatImage[] },
      path: string,
      extras?: ResponsesExtras,
    ): Promise<unknown> {
      const { images, ...rest } = request;
      const r = await collectChat(
        streamChat(
          http,
          { ...rest, messages: [{ role: 'user', content: question, ...(images ? { images } : {}) }] },
          extras,
        ),
      );
      assert.equal(r.error, undefined, r.error?.message);
      return lastBody(path);
    }

    it('Chat Completions: an image_url part with a data URL, and enable_search in the body, exactly as the openai SDK sends them', async () => {
      const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
        {
          role: 'user',
          content: [
            { type: 'text', text: question },
            { type: 'image_url', image_url: { url: dataUrl } },
          ],
        },
      ];
      const sdkStream = await openai.chat.completions.create({
        model: MODEL,
        messages,
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const chunk of sdkStream) void chunk;
      const sdk = lastBody('/v1/chat/completions');
      assert.deepEqual(
        await oursBody(
          { model: MODEL, protocol: 'chatCompletions', stream: true, images: [image] },
          '/v1/chat/completions',
        ),
        sdk,
      );

      // enable_search is not in the SDK's types; the Node SDK sends extra body fields top level.
      const withSearch: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming & { enable_search: boolean } = {
        model: 'qwen-plus',
        messages: [{ role: 'user', content: question }],
        stream: false,
        enable_search: true,
      };
      await openai.chat.completions.create(withSearch);
      const sdkSearch = lastBody('/v1/chat/completions');
      assert.deepEqual(
        await oursBody(
          { model: 'qwen-plus', protocol: 'chatCompletions', stream: false, enableSearch: true },
          '/v1/chat/completions',
        ),
        sdkSearch,
      );
    });

    it('Responses: an input_image part with a data URL and detail, and the web_search tool, exactly as the openai SDK sends them', async () => {
      const input: OpenAI.Responses.ResponseInput = [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: question },
            { type: 'input_image', image_url: dataUrl, detail: 'auto' },
          ],
        },
      ];
      const tools: OpenAI.Responses.Tool[] = [{ type: 'web_search' }];
      const sdkStream = await openai.responses.create({ model: MODEL, input, tools, stream: true });
      for await (const event of sdkStream) void event;
      const sdk = lastBody('/v1/responses');
      assert.deepEqual(
        await oursBody(
          { model: MODEL, protocol: 'responses', stream: true, images: [image], enableSearch: true },
          '/v1/responses',
        ),
        sdk,
      );

      const withImageTool: OpenAI.Responses.Tool[] = [
        { type: 'image_generation', action: 'generate', model: 'gpt-image-1' },
        { type: 'web_search' },
      ];
      await openai.responses.create({
        model: MODEL,
        input: [{ role: 'user', content: [{ type: 'input_text', text: question }] }],
        tools: withImageTool,
        stream: false,
      });
      const sdkTools = lastBody('/v1/responses');
      assert.deepEqual(
        await oursBody({ model: MODEL, protocol: 'responses', stream: false, enableSearch: true }, '/v1/responses', {
          tools: [{ type: 'image_generation', action: 'generate', model: 'gpt-image-1' }],
        }),
        sdkTools,
      );
    });

    it('Messages: an image block with a base64 source and media_type, exactly as the anthropic SDK sends it', async () => {
      const messages: Anthropic.MessageParam[] = [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: base64 } },
            { type: 'text', text: question },
          ],
        },
      ];
      await anthropic.messages.stream({ model: MODEL, max_tokens: MAX_TOKENS, messages }).finalMessage();
      const sdk = lastBody('/v1/messages');
      assert.deepEqual(
        await oursBody({ model: MODEL, protocol: 'messages', stream: true, images: [image] }, '/v1/messages'),
        sdk,
      );
    });

    it('the SDKs read the double’s description of the image they sent, as our adapters do', async () => {
      const r = await openai.chat.completions.create({
        model: MODEL,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: question },
              { type: 'image_url', image_url: { url: dataUrl } },
            ],
          },
        ],
      });
      const mine = await collectChat(
        streamChat(http, {
          model: MODEL,
          protocol: 'chatCompletions',
          stream: false,
          messages: [{ role: 'user', content: question, images: [image] }],
        }),
      );
      assert.equal(r.choices[0]?.message.content, mine.text);
      assert.match(mine.text, /image 1: PNG 48x48/);
      const m = await anthropic.messages.create({
        model: MODEL,
        max_tokens: MAX_TOKENS,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: base64 } },
              { type: 'text', text: question },
            ],
          },
        ],
      });
      const mineM = await collectChat(
        streamChat(http, {
          model: MODEL,
          protocol: 'messages',
          stream: false,
          maxTokens: MAX_TOKENS,
          messages: [{ role: 'user', content: question, images: [image] }],
        }),
      );
      assert.equal(m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), mineM.text);
      await assert.rejects(
        anthropic.messages.create({
          model: MODEL,
          max_tokens: 16,
          messages: [
            {
              role: 'user',
              content: [{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: base64 } }],
            },
          ],
        }),
        (err: unknown) =>
          err instanceof Anthropic.BadRequestError && /appears to be a image\/png image/.test(err.message),
      );
      await assert.rejects(
        openai.chat.completions.create({
          model: MODEL,
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: base64 } }] }],
        }),
        (err: unknown) =>
          err instanceof OpenAI.BadRequestError &&
          err.code === 'invalid_value' &&
          err.param === 'messages[0].content[0].image_url.url',
      );
    });
  });

  describe('function tools: the SDKs read the same calls and send the same round trip as our adapters', () => {
    const schema = {
      type: 'object' as const,
      properties: { city: { type: 'string' }, days: { type: 'integer' } },
      required: ['city'],
    };
    const WEATHER: ChatTool = {
      name: 'get_weather',
      description: 'The current weather in a city',
      inputSchema: schema,
    };
    const prompt = '[[reasoning]] Please call the tool get_weather for Zürich days=2';
    type Call = { id: string; name: string; input: unknown };

    /** The ids the double issued for the last answer, which whoever read it must report. */
    function issuedIds(): string[] {
      return (gw.log.at(-1)?.answer?.toolCalls ?? []).map((c) => c.id);
    }

    async function oursCalls(protocol: ChatProtocol, stream: boolean): Promise<{ calls: Call[]; result: ChatResult }> {
      const result = await collectChat(
        streamChat(http, {
          model: MODEL,
          protocol,
          stream,
          tools: [WEATHER],
          messages: [{ role: 'user', content: prompt }],
        }),
      );
      assert.equal(result.error, undefined, result.error?.message);
      const calls = result.toolCalls.map(({ id, name, input }) => ({ id, name, input }));
      assert.deepEqual(
        calls.map((c) => c.id),
        issuedIds(),
      );
      return { calls, result };
    }

    /** Same names and arguments on both sides, each with the ids the double issued to it; never nothing. */
    function sameCalls(sdk: Call[], ours: Call[]): void {
      assert.equal(ours.length, 1);
      assert.deepEqual(ours[0]?.input, { city: 'Zürich', days: 2 });
      assert.deepEqual(
        sdk.map(({ name, input }) => ({ name, input })),
        ours.map(({ name, input }) => ({ name, input })),
      );
    }

    for (const stream of [true, false]) {
      const how = stream ? 'streamed' : 'not streamed';

      it(`Chat Completions, ${how}: openai (its stream helper accumulating the deltas) reads the same calls`, async () => {
        const params = {
          model: MODEL,
          messages: [{ role: 'user' as const, content: prompt }],
          tools: [{ type: 'function' as const, function: { name: WEATHER.name, parameters: schema } }],
        };
        const completion = stream
          ? await openai.chat.completions.stream(params).finalChatCompletion()
          : await openai.chat.completions.create(params);
        const sdk = (completion.choices[0]?.message.tool_calls ?? []).flatMap((c) =>
          c.type === 'function'
            ? [{ id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) as unknown }]
            : [],
        );
        assert.deepEqual(
          sdk.map((c) => c.id),
          issuedIds(),
        );
        sameCalls(sdk, (await oursCalls('chatCompletions', stream)).calls);
      });

      it(`Responses, ${how}: openai reads the same function_call items`, async () => {
        const params = {
          model: MODEL,
          input: prompt,
          tools: [{ type: 'function' as const, name: WEATHER.name, parameters: schema, strict: false }],
        };
        const response = stream
          ? await openai.responses.stream(params).finalResponse()
          : await openai.responses.create(params);
        const sdk = response.output.flatMap((o) =>
          o.type === 'function_call'
            ? [{ id: o.call_id, name: o.name, input: JSON.parse(o.arguments) as unknown }]
            : [],
        );
        assert.deepEqual(
          sdk.map((c) => c.id),
          issuedIds(),
        );
        sameCalls(sdk, (await oursCalls('responses', stream)).calls);
      });

      it(`Messages, ${how}: anthropic reads the same tool_use blocks and a signed thinking block`, async () => {
        const params = {
          model: MODEL,
          max_tokens: MAX_TOKENS,
          messages: [{ role: 'user' as const, content: prompt }],
          tools: [{ name: WEATHER.name, input_schema: schema }],
        };
        const message = stream
          ? await anthropic.messages.stream(params).finalMessage()
          : await anthropic.messages.create(params);
        const sdk = message.content.flatMap((b) =>
          b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : [],
        );
        assert.deepEqual(
          sdk.map((c) => c.id),
          issuedIds(),
        );
        const thinking = message.content.find((b) => b.type === 'thinking');
        assert.ok(thinking?.type === 'thinking' && thinking.signature.length > 0);
        const ours = await oursCalls('messages', stream);
        assert.ok(
          ours.result.reasoningSignature && ours.result.reasoningSignature.length === thinking.signature.length,
          'our adapter surfaces the signature too',
        );
        sameCalls(sdk, ours.calls);
      });
    }

    const turns: ChatMessage[] = [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c1', name: 'get_weather', input: { city: 'Oslo' } }],
        reasoning: { text: 'I need the weather.', signature: 'c2lnbmF0dXJl' },
      },
      { role: 'user', content: '', toolResults: [{ callId: 'c1', content: 'rain' }] },
    ];

    function lastBody(path: string): unknown {
      const entry = [...gw.log].reverse().find((e) => e.path === path);
      assert.ok(entry?.bodyText, `a request went to ${path}`);
      return JSON.parse(entry.bodyText) as unknown;
    }

    async function oursBody(protocol: ChatProtocol, stream: boolean, path: string): Promise<unknown> {
      const r = await collectChat(
        streamChat(http, { model: MODEL, protocol, stream, tools: [WEATHER], toolMode: 'required', messages: turns }),
      );
      assert.equal(r.error, undefined, r.error?.message);
      assert.equal(r.text, 'The tool said: rain');
      return lastBody(path);
    }

    it('Chat Completions: tools, tool_choice required, assistant tool_calls with reasoning_content, a tool message — as the openai SDK sends them', async () => {
      // reasoning_content is not in the SDK's types; the SDK sends extra message fields as given.
      const assistant: OpenAI.Chat.ChatCompletionAssistantMessageParam & { reasoning_content: string } = {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        reasoning_content: 'I need the weather.',
      };
      await openai.chat.completions.create({
        model: MODEL,
        stream: false,
        messages: [
          { role: 'user', content: 'weather?' },
          assistant,
          { role: 'tool', tool_call_id: 'c1', content: 'rain' },
        ],
        tools: [
          {
            type: 'function',
            function: { name: WEATHER.name, description: 'The current weather in a city', parameters: schema },
          },
        ],
        tool_choice: 'required',
      });
      const sdk = lastBody('/v1/chat/completions');
      assert.deepEqual(await oursBody('chatCompletions', false, '/v1/chat/completions'), sdk);
    });

    it('Responses: function tools, tool_choice required, function_call and function_call_output items — as the openai SDK sends them', async () => {
      await openai.responses.create({
        model: MODEL,
        stream: false,
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
          { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
          { type: 'function_call_output', call_id: 'c1', output: 'rain' },
        ],
        tools: [
          {
            type: 'function',
            name: WEATHER.name,
            description: 'The current weather in a city',
            parameters: schema,
            strict: false,
          },
        ],
        tool_choice: 'required',
      });
      const sdk = lastBody('/v1/responses');
      assert.deepEqual(await oursBody('responses', false, '/v1/responses'), sdk);
    });

    it('Messages: tools, tool_choice any, a signed thinking block, tool_use and tool_result — as the anthropic SDK sends them', async () => {
      await anthropic.messages
        .stream({
          model: MODEL,
          max_tokens: MAX_TOKENS,
          messages: [
            { role: 'user', content: 'weather?' },
            {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: 'I need the weather.', signature: 'c2lnbmF0dXJl' },
                { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Oslo' } },
              ],
            },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'rain' }] },
          ],
          tools: [{ name: WEATHER.name, description: 'The current weather in a city', input_schema: schema }],
          tool_choice: { type: 'any' },
        })
        .finalMessage();
      const sdk = lastBody('/v1/messages');
      assert.deepEqual(await oursBody('messages', true, '/v1/messages'), sdk);
    });
  });

  describe('SDK helpers and failures', () => {
    it('the Chat Completions stream helper accumulates the double’s tool-call deltas', async () => {
      const s = openai.chat.completions.stream({
        model: MODEL,
        messages: [{ role: 'user', content: '[[tool]] weather in Rome' }],
        stream_options: { include_usage: true },
      });
      const final = await s.finalChatCompletion();
      const call = final.choices[0]?.message.tool_calls?.[0];
      assert.ok(call?.type === 'function');
      assert.equal(call.function.name, 'get_weather');
      assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Rome', unit: 'celsius' });
      assert.equal(final.choices[0]?.finish_reason, 'tool_calls');
      assert.equal(final.usage?.total_tokens, gw.log.at(-1)?.answer?.usage.totalTokens);
    });

    it('Responses image generation: the SDK gets the same PNG as our adapter, with partial images', async () => {
      const tools: ImageTool[] = [
        { type: 'image_generation', action: 'generate', model: 'gpt-image-1', partial_images: 2 },
      ];
      const streamed = await openaiResponses('a red fox', true, tools);
      assert.equal(streamed.events.filter((t) => t === 'response.image_generation_call.partial_image').length, 2);
      const item = streamed.response.output.find((o) => o.type === 'image_generation_call');
      assert.ok(item?.type === 'image_generation_call' && item.result);
      assert.deepEqual(Buffer.from(item.result, 'base64').subarray(0, 8), PNG_SIGNATURE);
      const mine = await ours('responses', true, 'a red fox', { tools });
      assert.equal(mine.images[0]?.base64, item.result);
      const whole = await openaiResponses('a red fox', false, tools);
      const wholeItem = whole.response.output.find((o) => o.type === 'image_generation_call');
      assert.equal(wholeItem?.type === 'image_generation_call' ? wholeItem.result : undefined, item.result);
      assert.equal(whole.seen.text, mine.text);
    });

    it('Responses incomplete: the SDK sees status incomplete with max_output_tokens', async () => {
      const { response } = await openaiResponses('[[incomplete]] one two three four five', true);
      assert.equal(response.status, 'incomplete');
      assert.equal(response.incomplete_details?.reason, 'max_output_tokens');
      const r = await openai.responses.create({ model: MODEL, input: '[[failed]] one two three four five' });
      assert.equal(r.status, 'failed');
      assert.equal(r.error?.code, 'server_error');
    });

    it('Chat Completions in-band errors throw from the SDK after the partial text our adapter keeps', async () => {
      for (const prompt of ['[[midstream-error]] one two three four five', '[[error-in-200]] one two three']) {
        let text = '';
        await assert.rejects(
          (async () => {
            for await (const chunk of await openai.chat.completions.create({
              model: MODEL,
              messages: [{ role: 'user', content: prompt }],
              stream: true,
            })) {
              text += chunk.choices[0]?.delta.content ?? '';
            }
          })(),
          (err: unknown) =>
            err instanceof OpenAI.APIError && (err.error as { type?: string } | undefined)?.type === 'server_error',
        );
        const mine = await ours('chatCompletions', true, prompt);
        assert.equal(mine.error?.kind, 'server');
        assert.equal(text, mine.text);
      }
    });

    it('Responses error events: the nested shape throws, the flat shape arrives as an error event', async () => {
      let text = '';
      await assert.rejects(
        (async () => {
          for await (const e of await openai.responses.create({
            model: MODEL,
            input: '[[midstream-error:nested]] one two three four',
            stream: true,
          })) {
            if (e.type === 'response.output_text.delta') text += e.delta;
          }
        })(),
        (err: unknown) =>
          err instanceof OpenAI.APIError && (err.error as { code?: string } | undefined)?.code === 'server_error',
      );
      assert.equal(text, (await ours('responses', true, '[[midstream-error:nested]] one two three four')).text);

      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const e of await openai.responses.create({
        model: MODEL,
        input: '[[midstream-error]] one two three four',
        stream: true,
      }))
        events.push(e);
      const last = events.at(-1);
      assert.ok(last?.type === 'error');
      assert.equal(last.code, 'server_error');
      assert.equal(last.sequence_number, events.length - 1);
    });

    it('Responses web search: the SDK reads the same web_search_call and url_citation sources as our adapter', async () => {
      const tools: OpenAI.Responses.WebSearchTool[] = [{ type: 'web_search' }];
      for (const stream of [true, false]) {
        const prompt = 'latest regatta results';
        const response = stream
          ? await openai.responses.stream({ model: MODEL, input: prompt, tools }).finalResponse()
          : await openai.responses.create({ model: MODEL, input: prompt, tools });
        const call = response.output.find((o) => o.type === 'web_search_call');
        assert.ok(call?.type === 'web_search_call' && call.action.type === 'search');
        assert.equal(call.status, 'completed');
        const message = response.output.find((o) => o.type === 'message');
        const part = message?.type === 'message' ? message.content[0] : undefined;
        assert.ok(part?.type === 'output_text');
        const sdkCitations = part.annotations.flatMap((a) =>
          a.type === 'url_citation' ? [{ url: a.url, title: a.title }] : [],
        );
        assert.equal(sdkCitations.length, 2);
        const mine = await collectChat(
          streamChat(http, {
            model: MODEL,
            protocol: 'responses',
            stream,
            enableSearch: true,
            messages: [{ role: 'user', content: prompt }],
          }),
        );
        assert.deepEqual(mine.citations, sdkCitations);
        assert.deepEqual(
          mine.searches.map((x) => x.queries),
          [call.action.type === 'search' ? (call.action.queries ?? [call.action.query]) : []],
        );
        assert.equal(mine.text, response.output_text);
      }
    });

    it('Responses on a channel without conversion fails with convert_request_failed in the SDK too', async () => {
      await assert.rejects(
        openai.responses.create({ model: 'claude-sonnet-4-5', input: 'hi' }),
        (err: unknown) =>
          err instanceof OpenAI.InternalServerError &&
          (err.error as { code?: string } | undefined)?.code === 'convert_request_failed',
      );
    });

    it('Messages: the SDK sends Bearer auth, throws overloaded_error mid-stream, and reads the relay error shape', async () => {
      let text = '';
      const s = anthropic.messages.stream({
        model: MODEL,
        max_tokens: MAX_TOKENS,
        messages: [{ role: 'user', content: '[[midstream-error]] one two three four' }],
      });
      s.on('text', (delta) => (text += delta));
      await assert.rejects(
        s.finalMessage(),
        (err: unknown) => err instanceof Anthropic.APIError && err.type === 'overloaded_error',
      );
      assert.equal(text, (await ours('messages', true, '[[midstream-error]] one two three four')).text);
      const sdkRequest = gw.log.find((e) => e.path === '/v1/messages' && e.headers['x-stainless-lang']);
      assert.equal(sdkRequest?.headers.authorization, `Bearer ${DEMO_KEY}`);
      assert.equal(sdkRequest?.headers['anthropic-version'], '2023-06-01');
      assert.equal(sdkRequest?.headers['x-api-key'], undefined);

      const poor = new Anthropic({ authToken: ZERO_QUOTA_KEY, apiKey: null, baseURL: gw.url, maxRetries: 0 });
      await assert.rejects(
        poor.messages.create({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
        (err: unknown) =>
          err instanceof Anthropic.PermissionDeniedError &&
          String(err.type) === 'new_api_error' &&
          /用户额度不足/.test(err.message),
      );
    });
  });
});
