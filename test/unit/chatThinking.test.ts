import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import { collectChat, streamChat, type ChatResult } from '../../src/core/chat/chat';
import type { ChatRequest } from '../../src/core/chat/events';
import {
  completionsThinkingFields,
  messagesThinking,
  responsesReasoning,
  thinkingChoices,
  thinkingControl,
  thinkingFamily,
  thinkingRequest,
  type ThinkingChoice,
} from '../../src/core/chat/thinking';
import { parseCatalog } from '../../src/core/models/catalogFormats';
import { mergeModels } from '../../src/core/models/classify';
import type { CatalogEntry, ChatProtocol, ModelInfo } from '../../src/core/models/types';
import { DEFAULT_MODELS, DEMO_KEY } from '../gateway';
import { useDoubleClient } from '../support/client';

/** A model as the registry would see it: the gateway's owner and endpoint types, and a catalog entry. */
function model(
  id: string,
  ownedBy: string | undefined,
  catalog: Partial<CatalogEntry> = {},
  endpointTypes = ['openai'],
): ModelInfo {
  const [info] = mergeModels(
    [{ id, ...(ownedBy ? { ownedBy } : {}), endpointTypes }],
    Object.keys(catalog).length ? [{ id, ...catalog }] : [],
  );
  assert.ok(info);
  return info;
}

/** The double's own models, merged as the extension merges the key's list and the double's catalog. */
function doubleModel(id: string): ModelInfo {
  const spec = DEFAULT_MODELS.find((m) => m.id === id);
  assert.ok(spec, id);
  return model(
    id,
    spec.owned_by,
    { reasoning: spec.reasoning ?? false, ...(spec.limit ? { maxOutput: spec.limit.output } : {}) },
    spec.supported_endpoint_types,
  );
}

describe('thinking controls: which models think, in which form', () => {
  it('knows the families by the gateway owner first, then by the id', () => {
    assert.equal(thinkingFamily({ id: 'glm-4.6', ownedBy: 'zhipu_4v' }), 'zhipu');
    assert.equal(
      thinkingFamily({ id: 'kimi-k2.5', ownedBy: 'ali' }),
      'bailian',
      'the channel decides the form, not the model name',
    );
    assert.equal(thinkingFamily({ id: 'glm-4.5' }), 'zhipu');
    assert.equal(thinkingFamily({ id: 'claude-opus-4-1' }), 'anthropic');
    assert.equal(
      thinkingFamily({ id: 'glm-4.6', ownedBy: 'siliconflow' }),
      undefined,
      'an unknown channel gets no guessed form',
    );
  });

  const cases: Array<[string, string, ChatProtocol, string | undefined]> = [
    ['gpt-5', 'openai', 'responses', 'levels/openaiEffort/no-off'],
    ['gpt-5', 'openai', 'chatCompletions', 'levels/openaiEffort/no-off'],
    ['gpt-5.1', 'openai', 'responses', 'levels/openaiEffort/off'],
    ['o4-mini', 'openai', 'responses', 'levels/openaiEffort/no-off'],
    ['gpt-5-chat-latest', 'openai', 'responses', undefined],
    ['gpt-4o-mini', 'openai', 'responses', undefined],
    ['claude-sonnet-4-5', 'claude', 'messages', 'levels/anthropicBudget/off'],
    ['claude-sonnet-4-5', 'claude', 'chatCompletions', undefined],
    ['claude-3-5-haiku', 'claude', 'messages', undefined],
    ['glm-4.6', 'zhipu_4v', 'chatCompletions', 'switch/glmThinking/off'],
    ['glm-4-plus', 'zhipu', 'chatCompletions', undefined],
    ['glm-4.6', 'ali', 'chatCompletions', 'levels/qwenEnable/off'],
    ['qwen-plus', 'ali', 'chatCompletions', 'levels/qwenEnable/off'],
    ['qwen3-32b', 'ali', 'chatCompletions', 'levels/qwenEnable/off'],
    ['qwen3-235b-a22b-instruct-2507', 'ali', 'chatCompletions', undefined],
    ['qwen-max', 'ali', 'chatCompletions', undefined],
    ['qwen3-235b-a22b-thinking-2507', 'ali', 'chatCompletions', 'always'],
    ['kimi-k2-thinking', 'moonshot', 'chatCompletions', 'always'],
    ['kimi-k2-0905-preview', 'moonshot', 'chatCompletions', undefined],
    ['deepseek-r1', 'deepseek', 'chatCompletions', 'always'],
    ['mistral-large', 'mistral', 'chatCompletions', undefined],
  ];
  for (const [id, owner, protocol, expected] of cases) {
    it(`${id} (${owner}) over ${protocol}: ${expected ?? 'no control'}`, () => {
      const c = thinkingControl(model(id, owner), protocol);
      const got = !c
        ? undefined
        : c.kind === 'always'
          ? 'always'
          : `${c.kind}/${c.wire ?? ''}/${c.canTurnOff ? 'off' : 'no-off'}`;
      assert.equal(got, expected);
    });
  }

  it('takes the catalog’s word on whether a model thinks, and its effort values', () => {
    assert.equal(
      thinkingControl(model('glm-4.6', 'zhipu', { reasoning: false }), 'chatCompletions'),
      undefined,
      'the catalog says it does not think',
    );
    assert.equal(
      thinkingControl(model('kimi-k2.5', 'ali', { reasoning: true }), 'chatCompletions')?.wire,
      'qwenEnable',
      'a Bailian model the table does not name',
    );
    assert.equal(thinkingControl(model('kimi-k2.5', 'ali'), 'chatCompletions'), undefined, 'nothing says it thinks');
    assert.equal(
      thinkingControl(model('magistral', 'mistral', { reasoning: true }), 'chatCompletions'),
      undefined,
      'thinks, but no known form',
    );
    assert.equal(
      thinkingControl(model('glm-4.6', 'openai', { reasoning: true }), 'chatCompletions'),
      undefined,
      'another maker’s model on an OpenAI-type channel',
    );
    assert.equal(
      thinkingControl(model('glm-4.6', 'ali', { reasoning: true }), 'chatCompletions')?.wire,
      'qwenEnable',
      'Bailian hosts other makers’ models',
    );
    const catalog = parseCatalog({
      gw: {
        name: 'GW',
        models: {
          'gpt-5-custom': { reasoning: true, reasoning_options: [{ type: 'effort', values: ['none', 'low', 'high'] }] },
        },
      },
    });
    const [entry] = catalog.entries;
    assert.deepEqual(entry?.reasoningEfforts, ['none', 'low', 'high']);
    const [info] = mergeModels(
      [{ id: 'gpt-5-custom', ownedBy: 'openai', endpointTypes: ['openai-response'] }],
      catalog.entries,
    );
    assert.ok(info);
    assert.equal(thinkingControl(info, 'responses')?.canTurnOff, true, 'the catalog lists effort none');
  });

  it('offers the choices a control can honour, and maps a choice onto the wire', () => {
    const glm = thinkingControl(model('glm-4.6', 'zhipu'), 'chatCompletions');
    const gpt5 = thinkingControl(model('gpt-5', 'openai'), 'responses');
    const kimi = thinkingControl(model('kimi-k2-thinking', 'moonshot'), 'chatCompletions');
    assert.deepEqual(thinkingChoices(glm), ['auto', 'off', 'on']);
    assert.deepEqual(thinkingChoices(gpt5), ['auto', 'on', 'low', 'medium', 'high']);
    assert.deepEqual(thinkingChoices(kimi), []);
    assert.deepEqual(thinkingRequest(glm, 'high'), { wire: 'glmThinking', level: 'on' });
    assert.equal(thinkingRequest(glm, 'auto'), undefined);
    assert.equal(thinkingRequest(gpt5, 'off'), undefined, 'gpt-5 cannot be told off: nothing is sent');
    assert.equal(thinkingRequest(kimi, 'off'), undefined);
    assert.equal(thinkingRequest(undefined, 'on'), undefined);
  });

  it('writes each wire form', () => {
    assert.deepEqual(completionsThinkingFields({ wire: 'qwenEnable', level: 'low' }, true), {
      enable_thinking: true,
      thinking_budget: 2048,
    });
    assert.deepEqual(completionsThinkingFields({ wire: 'qwenEnable', level: 'on' }, true), { enable_thinking: true });
    assert.deepEqual(
      completionsThinkingFields({ wire: 'qwenEnable', level: 'high' }, false),
      { enable_thinking: false },
      'never true on a non-streamed call',
    );
    assert.deepEqual(completionsThinkingFields({ wire: 'glmThinking', level: 'off' }, false), {
      thinking: { type: 'disabled' },
    });
    assert.deepEqual(completionsThinkingFields({ wire: 'openaiEffort', level: 'medium' }, true), {
      reasoning_effort: 'medium',
    });
    assert.deepEqual(
      completionsThinkingFields({ wire: 'anthropicBudget', level: 'medium' }, true),
      {},
      'another protocol’s form',
    );
    assert.deepEqual(responsesReasoning({ wire: 'openaiEffort', level: 'high' }), { effort: 'high', summary: 'auto' });
    assert.deepEqual(responsesReasoning({ wire: 'openaiEffort', level: 'off' }), { effort: 'none' });
    assert.equal(responsesReasoning({ wire: 'glmThinking', level: 'on' }), undefined);
  });

  it('keeps the Anthropic budget at least 1024 and below max_tokens, leaving the answer its room', () => {
    assert.deepEqual(messagesThinking({ wire: 'anthropicBudget', level: 'low' }, 4096), {
      thinking: { type: 'enabled', budget_tokens: 2048 },
      maxTokens: 6144,
    });
    assert.deepEqual(messagesThinking({ wire: 'anthropicBudget', level: 'on' }, 4096, 64_000), {
      thinking: { type: 'enabled', budget_tokens: 8192 },
      maxTokens: 12288,
    });
    // The model's limit cuts in: half for the answer, the rest for thinking.
    assert.deepEqual(messagesThinking({ wire: 'anthropicBudget', level: 'high' }, 4096, 5000), {
      thinking: { type: 'enabled', budget_tokens: 2500 },
      maxTokens: 5000,
    });
    // No room for the minimum: thinking stays off rather than being refused.
    assert.deepEqual(messagesThinking({ wire: 'anthropicBudget', level: 'medium' }, 1500, 2000), { maxTokens: 1500 });
    assert.deepEqual(messagesThinking({ wire: 'anthropicBudget', level: 'off' }, 4096), { maxTokens: 4096 });
  });
});

describe('a conversation’s thinking choice in the store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'thinking-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is kept with the conversation and read back by a new store (a reload)', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create({ title: 'Tides', model: 'glm-4.6', thinking: 'off' });
    assert.equal((await new ConversationStore(dir).open(c.id))?.meta.thinking, 'off');
    await store.setMeta(c.id, { thinking: 'high' });
    assert.equal((await new ConversationStore(dir).open(c.id))?.meta.thinking, 'high');
  });

  it('reads a choice it does not know (from a newer version) as unset, and keeps the conversation', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create({ title: 'Later', thinking: 'low' });
    // Written as a newer version might write it; the cast stands for that version's type.
    await store.setMeta(c.id, { thinking: 'extreme' as unknown as 'low' });
    const page = await new ConversationStore(dir).open(c.id);
    assert.ok(page, 'the conversation still opens');
    assert.equal(page.meta.thinking, undefined);
    assert.equal(page.meta.title, 'Later');
  });
});

describe('thinking parameters against the gateway double', function () {
  const double = useDoubleClient();
  const PROMPT = 'Why is the sky blue?';

  async function ask(
    id: string,
    protocol: ChatProtocol,
    choice: ThinkingChoice,
    extra: Partial<ChatRequest> = {},
  ): Promise<{ result: ChatResult; body: Record<string, unknown> }> {
    const info = doubleModel(id);
    const thinking = thinkingRequest(thinkingControl(info, protocol), choice);
    const request: ChatRequest = {
      model: id,
      protocol,
      stream: true,
      maxTokens: 4096,
      modelMaxOutput: info.catalog?.maxOutput,
      messages: [{ role: 'user', content: PROMPT }],
      ...(thinking ? { thinking } : {}),
      ...extra,
    };
    const result = await collectChat(streamChat(double.http, request));
    return { result, body: JSON.parse(double.gw.log.at(-1)?.bodyText ?? '{}') as Record<string, unknown> };
  }

  async function raw(
    path: string,
    body: Record<string, unknown>,
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await fetch(`${double.gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  describe('Bailian-type (qwen-plus): enable_thinking', () => {
    it('on, with a depth: enable_thinking and thinking_budget on a streamed call, and reasoning streams', async () => {
      const { result, body } = await ask('qwen-plus', 'chatCompletions', 'high');
      assert.equal(result.error, undefined, result.error?.message);
      assert.equal(body.enable_thinking, true);
      assert.equal(body.thinking_budget, 24576);
      assert.equal(body.thinking, undefined, 'not the GLM form');
      assert.ok(result.reasoning.length > 0);
    });

    it('off: enable_thinking false and no reasoning', async () => {
      const { result, body } = await ask('qwen-plus', 'chatCompletions', 'off');
      assert.equal(body.enable_thinking, false);
      assert.equal(result.reasoning, '');
      assert.ok(result.text.length > 0);
    });

    it('a non-streamed request with thinking on is sent streamed, never with enable_thinking true unstreamed', async () => {
      const { result, body } = await ask('qwen-plus', 'chatCompletions', 'on', { stream: false });
      assert.equal(result.error, undefined, result.error?.message);
      assert.equal(body.stream, true);
      assert.equal(body.enable_thinking, true);
      assert.ok(result.reasoning.length > 0);
    });

    it('the double refuses enable_thinking true on a non-streamed call as Bailian does', async () => {
      const { status, json } = await raw('/v1/chat/completions', {
        model: 'qwen-plus',
        messages: [{ role: 'user', content: PROMPT }],
        enable_thinking: true,
      });
      assert.equal(status, 400);
      assert.deepEqual(json.error, {
        message: 'parameter.enable_thinking must be set to false for non-streaming calls',
        type: 'invalid_request_error',
        param: '',
        code: 'invalid_parameter_error',
      });
    });
  });

  describe('GLM-type (glm-4.6): thinking.type', () => {
    it('off sends {type: "disabled"} and no reasoning comes; on sends {type: "enabled"} and it does', async () => {
      const off = await ask('glm-4.6', 'chatCompletions', 'off');
      assert.deepEqual(off.body.thinking, { type: 'disabled' });
      assert.equal(off.body.enable_thinking, undefined, 'not the Bailian form');
      assert.equal(off.result.reasoning, '');
      const on = await ask('glm-4.6', 'chatCompletions', 'medium');
      assert.deepEqual(on.body.thinking, { type: 'enabled' });
      assert.ok(on.result.reasoning.length > 0);
    });

    it('auto sends nothing, and GLM thinks by default; the Bailian field does not switch it off', async () => {
      const auto = await ask('glm-4.6', 'chatCompletions', 'auto');
      assert.equal(auto.body.thinking, undefined);
      assert.ok(auto.result.reasoning.length > 0, 'GLM-4.5 and newer think unless told not to');
      const unstreamed = await ask('glm-4.6', 'chatCompletions', 'auto', { stream: false });
      assert.ok(unstreamed.result.reasoning.length > 0, 'unstreamed too');
      const { status, json } = await raw('/v1/chat/completions', {
        model: 'glm-4.6',
        messages: [{ role: 'user', content: PROMPT }],
        enable_thinking: false,
      });
      assert.equal(status, 200);
      const choice = (json.choices as Array<{ message: { reasoning_content?: string } }>)[0];
      assert.ok(choice?.message.reasoning_content, 'enable_thinking is ignored by Zhipu');
    });
  });

  describe('Messages (claude-sonnet-4-5): thinking budget', () => {
    it('on: thinking enabled with a budget below max_tokens, reasoning and its signature come back', async () => {
      const { result, body } = await ask('claude-sonnet-4-5', 'messages', 'medium', { temperature: 0.2 });
      assert.equal(result.error, undefined, result.error?.message);
      assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 8192 });
      assert.equal(body.max_tokens, 4096 + 8192);
      assert.equal(body.temperature, undefined, 'Anthropic takes no other temperature with thinking');
      assert.ok(result.reasoning.length > 0);
      assert.ok(result.reasoningSignature);
    });

    it('off: no thinking field and no reasoning', async () => {
      const { result, body } = await ask('claude-sonnet-4-5', 'messages', 'off');
      assert.equal(body.thinking, undefined);
      assert.equal(body.max_tokens, 4096);
      assert.equal(result.reasoning, '');
    });

    it('a forced tool choice goes without thinking, which Anthropic refuses with it', async () => {
      const tools = [
        { name: 'get_weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
      ];
      const { result, body } = await ask('claude-sonnet-4-5', 'messages', 'high', { tools, toolMode: 'required' });
      assert.equal(result.error, undefined, result.error?.message);
      assert.equal(body.thinking, undefined);
      const { status, json } = await raw('/v1/messages', {
        ...body,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        max_tokens: 8192,
      });
      assert.equal(status, 400);
      assert.match(String((json.error as { message?: string }).message), /tool_choice forces tool use/);
    });

    it('the double refuses a budget under 1024 or not below max_tokens, and another temperature, as Anthropic does', async () => {
      const base = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: PROMPT }] };
      const small = await raw('/v1/messages', {
        ...base,
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 512 },
      });
      assert.equal(small.status, 400);
      assert.equal(
        (small.json.error as { message?: string }).message,
        'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
      );
      const over = await raw('/v1/messages', {
        ...base,
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 2048 },
      });
      assert.equal(over.status, 400);
      assert.match(
        String((over.json.error as { message?: string }).message),
        /^`max_tokens` must be greater than `thinking.budget_tokens`/,
      );
      const warm = await raw('/v1/messages', {
        ...base,
        max_tokens: 4096,
        temperature: 0.5,
        thinking: { type: 'enabled', budget_tokens: 2048 },
      });
      assert.equal(warm.status, 400);
      assert.match(String((warm.json.error as { message?: string }).message), /temperature` may only be set to 1/);
    });
  });

  describe('OpenAI reasoning (gpt-5): effort', () => {
    it('Responses: reasoning {effort, summary auto}; the summary streams', async () => {
      const { result, body } = await ask('gpt-5', 'responses', 'low');
      assert.equal(result.error, undefined, result.error?.message);
      assert.deepEqual(body.reasoning, { effort: 'low', summary: 'auto' });
      assert.ok(result.reasoning.length > 0);
    });

    it('Responses: gpt-5 cannot be turned off, so "off" sends nothing (and no summary is shown)', async () => {
      const { result, body } = await ask('gpt-5', 'responses', 'off');
      assert.equal(body.reasoning, undefined);
      assert.equal(result.reasoning, '');
    });

    it('Chat Completions: reasoning_effort', async () => {
      const { result, body } = await ask('gpt-5', 'chatCompletions', 'high');
      assert.equal(result.error, undefined, result.error?.message);
      assert.equal(body.reasoning_effort, 'high');
    });

    it('the double refuses an effort the model does not take, and effort on a model that does not reason, as OpenAI does', async () => {
      const none = await raw('/v1/responses', { model: 'gpt-5', input: PROMPT, reasoning: { effort: 'none' } });
      assert.equal(none.status, 400);
      assert.deepEqual(none.json.error, {
        message:
          "Unsupported value: 'reasoning.effort' does not support 'none' with this model. Supported values are: 'minimal', 'low', 'medium', and 'high'.",
        type: 'invalid_request_error',
        param: 'reasoning.effort',
        code: 'unsupported_value',
      });
      const mini = await raw('/v1/chat/completions', {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: PROMPT }],
        reasoning_effort: 'low',
      });
      assert.equal(mini.status, 400);
      assert.equal((mini.json.error as { code?: string }).code, 'unsupported_parameter');
    });

    it('a model without a control gets nothing, whatever the choice', async () => {
      const { body } = await ask('gpt-4o-mini', 'responses', 'high');
      assert.equal(body.reasoning, undefined);
    });
  });

  it('Kimi-type thinking models think always, with no parameter sent', async () => {
    const { result, body } = await ask('kimi-k2-thinking', 'chatCompletions', 'off');
    assert.equal(body.thinking, undefined);
    assert.equal(body.enable_thinking, undefined);
    assert.ok(result.reasoning.length > 0);
  });
});
