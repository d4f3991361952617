/**
 * The gateway double's /v1/completions (fill-in-the-middle), driven with plain fetch, and the
 * extension's completion engine (core/completion/engine.ts) against it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { requestCompletion, type CompletionTarget } from '../../src/core/completion/engine';
import { FIM_ROUTE } from '../../src/core/completion/learning';
import { buildPrompt } from '../../src/core/completion/prompt';
import { linesOf } from '../../src/core/completion/window';
import { RefusalMemory } from '../../src/core/models/refusalMemory';
import { DEFAULT_GROUPS, DEFAULT_MODELS, DEMO_KEY, GatewayDouble, type RequestLogEntry } from '../gateway';
import { clientFor } from '../support/client';

type Json = Record<string, unknown>;

describe('gateway double: /v1/completions (fill-in-the-middle)', function () {
  let gw: GatewayDouble;
  before(async () => {
    // A model whose id suggests FIM but whose channel (Zhipu's) has no conversion for it.
    const elsewhere = 'deepseek-coder-elsewhere';
    gw = new GatewayDouble({
      models: [...DEFAULT_MODELS, { id: elsewhere, owned_by: 'zhipu_4v', supported_endpoint_types: ['openai'] }],
      groups: { ...DEFAULT_GROUPS, default: [...(DEFAULT_GROUPS.default ?? []), elsewhere] },
    });
    await gw.start();
  });
  after(() => gw.stop());
  beforeEach(() => gw.clearLog());

  const post = (body: Json, signal?: AbortSignal) =>
    fetch(`${gw.url}/v1/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  const entry = (): RequestLogEntry => {
    const e = gw.log.filter((l) => l.path === '/v1/completions').at(-1);
    assert.ok(e, 'the request was logged');
    return e;
  };
  /** The SSE data payloads of a streamed body. */
  const frames = (text: string) =>
    text
      .split('\n\n')
      .filter((f) => f.startsWith('data: '))
      .map((f) => f.slice(6));

  it('answers a DeepSeek-type model given prompt + suffix, honouring stop, and logs prefix and suffix', async () => {
    const res = await post({
      model: 'deepseek-chat',
      prompt: '// [[fim:a + b;\\nreturn x;]]\nconst s = ',
      suffix: '\nconsole.log(s);',
      stop: ['\n'],
      max_tokens: 48,
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { choices: Array<{ text: string; finish_reason: string }>; usage: Json };
    assert.equal(body.choices[0]?.text, 'a + b;');
    assert.equal(body.choices[0]?.finish_reason, 'stop');
    assert.ok((body.usage.prompt_tokens as number) > 0 && (body.usage.completion_tokens as number) > 0);
    const record = entry().completion;
    assert.equal(record?.form, 'suffix');
    assert.equal(record?.prefix, '// [[fim:a + b;\\nreturn x;]]\nconst s = ');
    assert.equal(record?.suffix, '\nconsole.log(s);');
    assert.equal(record?.aborted, false);
    assert.ok((record?.chargedQuota ?? 0) > 0);
  });

  it('streams a Qwen coder model that reads the FIM tokens in prompt, with a usage chunk and [DONE]', async () => {
    const res = await post({
      model: 'qwen2.5-coder-32b-instruct',
      prompt: '<|fim_prefix|>def f():\n    <|fim_suffix|>\n\nf()<|fim_middle|>',
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const data = frames(await res.text());
    assert.equal(data.at(-1), '[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { choices: Array<{ text: string }>; usage?: Json });
    assert.equal(chunks.map((c) => c.choices[0]?.text ?? '').join(''), 'done(); // qwen2.5-coder-32b-instruct');
    assert.ok(chunks.at(-1)?.usage, 'the last chunk carries usage');
    const record = entry().completion;
    assert.equal(record?.form, 'tokens');
    assert.equal(record?.prefix, 'def f():\n    ');
    assert.equal(record?.suffix, '\n\nf()');
  });

  it('cuts at max_tokens with finish_reason length', async () => {
    const res = await post({ model: 'deepseek-chat', prompt: `[[fim:${'word '.repeat(40)}]]`, max_tokens: 3 });
    const body = (await res.json()) as { choices: Array<{ text: string; finish_reason: string }> };
    assert.equal(body.choices[0]?.finish_reason, 'length');
    assert.equal(body.choices[0]?.text.length, 12);
  });

  it('refuses a FIM request for chat-only models the way new-api relays it, charging nothing', async () => {
    const before = gw.quota(DEMO_KEY).usedUsd;
    const kimi = await post({ model: 'kimi-k2-0905-preview', prompt: 'x = ', suffix: '' });
    assert.equal(kimi.status, 404);
    assert.match(
      ((await kimi.json()) as { error: { message: string } }).error.message,
      /Invalid URL \(POST \/v1\/completions\)/,
    );
    const glm = await post({ model: 'glm-4.6', prompt: 'x = ' });
    assert.equal(glm.status, 500);
    assert.equal(((await glm.json()) as { error: { code: string } }).error.code, 'convert_request_failed');
    const gpt = await post({ model: 'gpt-4o-mini', prompt: 'x = ' });
    assert.equal(gpt.status, 404);
    assert.match(((await gpt.json()) as { error: { message: string } }).error.message, /chat model/);
    const empty = await post({ model: 'deepseek-chat', prompt: '' });
    assert.equal(empty.status, 500);
    assert.equal(gw.quota(DEMO_KEY).usedUsd, before);
  });

  it('logs a streamed completion the client aborted', async () => {
    const abort = new AbortController();
    const res = await post(
      { model: 'deepseek-chat', prompt: '[[slow:5000]] [[fim:one two three four]]', stream: true },
      abort.signal,
    );
    const reader = res.body?.getReader();
    await reader?.read();
    abort.abort();
    await reader?.cancel().catch(() => undefined);
    for (let i = 0; i < 500 && !entry().completion?.aborted; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(entry().completion?.aborted, true);
  });

  it('answers a chat model asked to fill a hole with the middle in a fence', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: 'kimi-k2-0905-preview',
        messages: [{ role: 'user', content: '// [[fim:42;]]\nconst x = <FILL_HERE>\n' }],
      }),
    });
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    assert.equal(body.choices[0]?.message.content, '```\n42;\n```');
  });

  describe('the completion engine against it', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'completion-engine-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const promptOf = (text: string) => {
      const at = text.indexOf('|');
      const before = text.slice(0, at).split('\n');
      const line = before.length - 1;
      const doc = linesOf(text.slice(0, at) + text.slice(at + 1));
      return buildPrompt({
        doc,
        line,
        character: (before[line] ?? '').length,
        path: 'a.ts',
        language: 'typescript',
        snippets: [],
        budget: 800,
      });
    };
    const run = async (
      target: CompletionTarget,
      text: string,
      memory = new RefusalMemory(path.join(dir, 'r.json')),
    ) => {
      const { http } = clientFor(gw.url, DEMO_KEY);
      try {
        const deps = { http, refusals: memory, origin: () => gw.url };
        const r = requestCompletion(deps, target, promptOf(text), new AbortController().signal, () => undefined);
        return { first: await r.firstLine, answer: await r.done, memory };
      } finally {
        await http.close();
      }
    };

    it('completes over FIM (both forms) and over chat, cleaning the chat answer', async () => {
      const ds = await run(
        { model: 'deepseek-chat', chatProtocol: 'chatCompletions' },
        '// [[fim:a + b;]]\nconst s = |',
      );
      assert.deepEqual([ds.answer.path, ds.answer.text, ds.answer.error], ['fimSuffix', 'a + b;', undefined]);
      assert.ok(ds.answer.usage?.outputTokens);
      const qw = await run(
        { model: 'qwen2.5-coder-32b-instruct', chatProtocol: 'chatCompletions' },
        '// [[fim:7;]]\nconst s = |',
      );
      assert.deepEqual([qw.answer.path, qw.answer.text], ['fimTokens', '7;']);
      const kimi = await run(
        { model: 'kimi-k2-0905-preview', chatProtocol: 'chatCompletions' },
        '// [[fim:9;]]\nconst s = |',
      );
      assert.deepEqual([kimi.answer.path, kimi.answer.text], ['chat', '9;']);
      assert.equal(gw.log.filter((l) => l.path === '/v1/completions').length, 2, 'the chat model got no FIM request');
    });

    it('learns a FIM refusal once per gateway and model, and completes over chat', async () => {
      const target: CompletionTarget = { model: 'deepseek-coder-elsewhere', chatProtocol: 'chatCompletions' };
      const first = await run(target, '// [[fim:1;]]\nconst s = |');
      assert.deepEqual([first.answer.path, first.answer.text], ['chat', '1;']);
      assert.deepEqual((await first.memory.load(gw.url))['deepseek-coder-elsewhere'], [FIM_ROUTE]);
      gw.clearLog();
      const again = await run(target, '// [[fim:2;]]\nconst s = |', first.memory);
      assert.equal(again.answer.text, '2;');
      assert.deepEqual(
        gw.log.map((l) => l.path),
        ['/v1/chat/completions'],
        'no FIM request once the refusal is remembered',
      );
    });
  });
});
