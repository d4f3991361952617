import * as assert from 'node:assert/strict';
import { chooseProtocols, classifyKind, countByKind, mergeModels } from '../../src/core/models/classify';

describe('model kinds and protocols', () => {
  it('classifies from endpoint types first', () => {
    assert.equal(
      classifyKind('gpt-image-1', { id: 'gpt-image-1', endpointTypes: ['image-generation', 'openai'] }),
      'image',
    );
    assert.equal(classifyKind('sora-2', { id: 'sora-2', endpointTypes: ['openai-video'] }), 'video');
    assert.equal(classifyKind('gpt-5', { id: 'gpt-5', endpointTypes: ['openai', 'openai-response'] }), 'chat');
  });

  it('lists embedding and rerank models as not chat, even beside a chat endpoint type', () => {
    assert.equal(
      classifyKind('text-embedding-3-small', { id: 'text-embedding-3-small', endpointTypes: ['embeddings'] }),
      'other',
    );
    assert.equal(classifyKind('jina-reranker-v2', { id: 'jina-reranker-v2', endpointTypes: ['jina-rerank'] }), 'other');
    assert.equal(
      classifyKind('custom-vectors', { id: 'custom-vectors', endpointTypes: ['openai', 'embeddings'] }),
      'other',
    );
    assert.equal(classifyKind('bge-m3'), 'other', 'by name when the gateway sends no types');
    assert.equal(classifyKind('text-embedding-v3'), 'other');
    const merged = mergeModels(
      [
        { id: 'text-embedding-3-small', endpointTypes: ['embeddings'] },
        { id: 'gpt-5', endpointTypes: ['openai'] },
      ],
      undefined,
    );
    assert.deepEqual(
      merged.map((m) => [m.id, m.kind, m.protocols]),
      [
        ['gpt-5', 'chat', ['chatCompletions']],
        ['text-embedding-3-small', 'other', []],
      ],
    );
    assert.deepEqual(countByKind(merged), { chat: 1, image: 0, video: 0, tool: 0, other: 1 });
  });

  it('classifies tool entries, which are never chat models', () => {
    for (const id of [
      'glm-file-parser',
      'kimi-file-extract',
      'file_parser',
      'web-search-pro',
      'glm-ocr',
      'layout_parsing',
    ]) {
      assert.equal(classifyKind(id, { id, endpointTypes: ['openai'] }), 'tool', id);
    }
  });

  it('falls back to catalog words, modalities, then names', () => {
    assert.equal(classifyKind('x', undefined, { id: 'x', kind: 'video' }), 'video');
    assert.equal(classifyKind('y', undefined, { id: 'y', outputModalities: ['image'] }), 'image');
    assert.equal(classifyKind('wan2.5-t2v-preview'), 'video');
    assert.equal(classifyKind('wanx2.1-t2i-turbo'), 'image');
    assert.equal(classifyKind('qwen-plus'), 'chat');
    assert.equal(
      classifyKind('qwen-vl-max', undefined, {
        id: 'qwen-vl-max',
        outputModalities: ['text'],
        inputModalities: ['image', 'text'],
      }),
      'chat',
    );
  });

  it('chooses protocols from the gateway, then the catalog, then Chat Completions', () => {
    assert.deepEqual(chooseProtocols({ id: 'c', endpointTypes: ['anthropic', 'openai'] }), {
      protocols: ['messages', 'chatCompletions'],
      protocolSource: 'gateway',
    });
    assert.deepEqual(chooseProtocols({ id: 'c', endpointTypes: [] }, { id: 'c', protocols: ['responses'] }), {
      protocols: ['responses'],
      protocolSource: 'catalog',
    });
    assert.deepEqual(chooseProtocols({ id: 'c' }), { protocols: ['chatCompletions'], protocolSource: 'fallback' });
  });

  it('merges the key list with the catalog; catalog-only models are not callable', () => {
    const merged = mergeModels(
      [
        { id: 'gpt-5', ownedBy: 'openai', endpointTypes: ['openai', 'openai-response'] },
        { id: 'gpt-image-1', ownedBy: 'openai', endpointTypes: ['image-generation', 'openai'] },
        { id: 'glm-file-parser', ownedBy: 'zhipu', endpointTypes: [] },
      ],
      [
        { id: 'gpt-5', name: 'GPT-5', provider: 'OpenAI', contextWindow: 400000 },
        { id: 'qwen-max', provider: 'Alibaba' },
      ],
    );
    const byId = new Map(merged.map((m) => [m.id, m]));
    assert.deepEqual(
      merged.map((m) => [m.id, m.kind, m.available]),
      [
        ['qwen-max', 'chat', false],
        ['gpt-5', 'chat', true],
        ['gpt-image-1', 'image', true],
        ['glm-file-parser', 'tool', true],
      ],
    );
    assert.equal(byId.get('gpt-5')?.name, 'GPT-5');
    assert.equal(byId.get('gpt-5')?.catalog?.contextWindow, 400000);
    assert.deepEqual(byId.get('gpt-image-1')?.protocols, []);
    assert.deepEqual(countByKind(merged), { chat: 1, image: 1, video: 0, tool: 1, other: 0 });
    assert.deepEqual(countByKind(merged, false), { chat: 2, image: 1, video: 0, tool: 1, other: 0 });
  });

  it('marks everything unavailable when the key list is unknown', () => {
    assert.ok(mergeModels(undefined, [{ id: 'a' }]).every((m) => !m.available));
  });

  it("names the vendor of a model the gateway files under 'custom' (its word for a model it has no table entry for)", () => {
    const merged = mergeModels(
      [
        { id: 'kimi-file-extract', ownedBy: 'custom', endpointTypes: [] },
        { id: 'glm-5-air', ownedBy: 'custom', endpointTypes: [] },
        { id: 'house-model', ownedBy: 'custom', endpointTypes: [] },
        { id: 'qwen-next', ownedBy: 'custom', endpointTypes: [] },
      ],
      [{ id: 'qwen-next', provider: 'Alibaba' }],
    );
    const provider = new Map(merged.map((m) => [m.id, m.provider]));
    assert.equal(provider.get('kimi-file-extract'), 'moonshot');
    assert.equal(provider.get('glm-5-air'), 'zhipu');
    assert.equal(provider.get('qwen-next'), 'Alibaba', "the catalog's provider before a guess from the name");
    assert.equal(provider.get('house-model'), 'custom', 'no vendor in the name: left as the gateway said');
  });
});
