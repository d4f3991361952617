import * as assert from 'node:assert/strict';
import { isGatewayError } from '../../src/core/errors';
import { parseCatalog } from '../../src/core/models/catalogFormats';

describe('catalog formats', () => {
  it('reads an OpenAI-style list with endpoint types', () => {
    const c = parseCatalog({
      object: 'list',
      data: [
        { id: 'gpt-5', owned_by: 'openai', supported_endpoint_types: ['openai', 'openai-response'] },
        { id: 'claude-sonnet-4-5', supported_endpoint_types: ['anthropic', 'openai'] },
      ],
    });
    assert.equal(c.format, 'openai-list');
    assert.deepEqual(c.entries[0], {
      id: 'gpt-5',
      provider: 'openai',
      protocols: ['chatCompletions', 'responses'],
      endpointTypes: ['openai', 'openai-response'],
    });
    assert.deepEqual(c.entries[1]?.protocols, ['messages', 'chatCompletions']);
  });

  it('reads an opencode provider/models config, protocol from the npm package', () => {
    const c = parseCatalog({
      $schema: 'https://opencode.ai/config.json',
      provider: {
        gw: {
          npm: '@ai-sdk/openai-compatible',
          name: 'My Gateway',
          options: { baseURL: 'https://gw.example.com/v1' },
          models: {
            'qwen3-max': {
              name: 'Qwen3 Max',
              reasoning: true,
              limit: { context: 262144, output: 32768 },
              modalities: { input: ['text'], output: ['text'] },
            },
            'gpt-5': { provider: { npm: '@ai-sdk/openai' } },
            'claude-sonnet-4-5': { provider: { npm: '@ai-sdk/anthropic' } },
          },
        },
      },
    });
    assert.equal(c.format, 'opencode');
    const byId = new Map(c.entries.map((e) => [e.id, e]));
    assert.deepEqual(byId.get('qwen3-max'), {
      id: 'qwen3-max',
      name: 'Qwen3 Max',
      provider: 'My Gateway',
      protocols: ['chatCompletions'],
      inputModalities: ['text'],
      outputModalities: ['text'],
      reasoning: true,
      contextWindow: 262144,
      maxOutput: 32768,
    });
    assert.deepEqual(byId.get('gpt-5')?.protocols, ['responses']);
    assert.deepEqual(byId.get('claude-sonnet-4-5')?.protocols, ['messages']);
  });

  it('reads a models.dev map keyed by provider', () => {
    const c = parseCatalog({
      'alibaba-cn': {
        id: 'alibaba-cn',
        name: 'Alibaba (China)',
        npm: '@ai-sdk/openai-compatible',
        models: {
          'kimi-k2.5': {
            id: 'kimi-k2.5',
            name: 'Moonshot Kimi K2.5',
            modalities: { input: ['text', 'image', 'video'], output: ['text'] },
            cost: { input: 0.574, output: 2.411 },
            limit: { context: 262144, output: 32768 },
          },
        },
      },
      openai: {
        id: 'openai',
        npm: '@ai-sdk/openai',
        models: {
          'gpt-image-1': {
            modalities: { input: ['text', 'image'], output: ['image'] },
            provider: { shape: 'responses' },
          },
        },
      },
    });
    assert.equal(c.format, 'models.dev');
    assert.equal(c.entries.length, 2);
    assert.deepEqual(c.entries[0]?.cost, { input: 0.574, output: 2.411 });
    assert.equal(c.entries[0]?.provider, 'Alibaba (China)');
    assert.deepEqual(c.entries[1]?.outputModalities, ['image']);
  });

  it('reads a plain {models:[...]} list with kinds and video hints', () => {
    const c = parseCatalog({
      models: [
        { id: 'wan2.5-t2v-preview', type: 'video', sizes: ['832*480'], durations: [5] },
        { id: 'glm-file-parser', kind: 'tool' },
      ],
    });
    assert.equal(c.format, 'models-list');
    assert.deepEqual(c.entries[0], {
      id: 'wan2.5-t2v-preview',
      kind: 'video',
      video: { sizes: ['832*480'], durations: [5] },
    });
    assert.equal(c.entries[1]?.kind, 'tool');
  });

  it('reads a providers map with an api per provider', () => {
    const c = parseCatalog({
      providers: {
        gw: {
          baseUrl: 'https://gw/v1',
          api: 'openai-responses',
          models: [{ id: 'gpt-5', contextWindow: 400000, input: ['text', 'image'] }],
        },
      },
    });
    assert.equal(c.format, 'providers-list');
    assert.deepEqual(c.entries[0], {
      id: 'gpt-5',
      provider: 'gw',
      protocols: ['responses'],
      inputModalities: ['text', 'image'],
      contextWindow: 400000,
    });
  });

  it('drops a wrongly typed metadata field instead of the whole catalog', () => {
    const c = parseCatalog({ models: [{ id: 'a', limit: { context: 'big' }, reasoning: 'yes' }, { id: 'b' }] });
    assert.deepEqual(c.entries, [{ id: 'a' }, { id: 'b' }]);
  });

  it('reports an unknown shape clearly instead of guessing', () => {
    for (const bad of [{ foo: 1, bar: [] }, 'text', 42, null, { data: 'x' }]) {
      assert.throws(
        () => parseCatalog(bad),
        (e: unknown) => isGatewayError(e, 'protocol') && /shape|expected/.test(e.message),
      );
    }
    assert.throws(() => parseCatalog({ foo: 1 }), /keys "foo"/);
  });

  it('reports an entry without an id as a protocol error naming the place', () => {
    assert.throws(() => parseCatalog({ models: [{ name: 'nameless' }] }), /models\.0\.id/);
  });
});

describe('catalog image-input metadata', () => {
  it('keeps the attachment flag and OpenAI-style input_modalities', () => {
    const c = parseCatalog({
      models: [
        { id: 'vl', attachment: true },
        { id: 'x', input_modalities: ['text', 'image'] },
      ],
    });
    assert.equal(c.entries[0]?.attachment, true);
    assert.deepEqual(c.entries[1]?.inputModalities, ['text', 'image']);
  });
});
