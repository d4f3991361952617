import * as assert from 'node:assert/strict';
import { FIM_ROUTE } from '../../../src/core/completion/learning';
import { afterKeyOffer, completionCandidates } from '../../../src/core/completion/offer';
import type { ModelInfo } from '../../../src/core/models/types';
import { chatModel } from '../../support/models';

function model(id: string, over: Partial<ModelInfo> = {}): ModelInfo {
  return chatModel(id, { provider: 'p', inCatalog: true, ...over });
}

describe('The offer of code completion', () => {
  const models = [
    model('kimi-k2-0905-preview'),
    model('qwen-max', { available: false }),
    model('gpt-image-1', { kind: 'image', protocols: [] }),
    model('deepseek-chat'),
    model('qwen3-coder-plus'),
  ];
  const priced = (id: string, input: number) =>
    model(id, { catalog: { cost: { input, output: input * 2 } } as ModelInfo['catalog'] });
  const fresh = { chosenModel: '', offeredBefore: false };

  it('lists the usable chat models, fill-in-the-middle ones first, each group cheapest first', () => {
    assert.deepEqual(
      completionCandidates(models, {}).map((c) => [c.model.id, c.fim]),
      [
        ['deepseek-chat', true],
        ['qwen3-coder-plus', true],
        ['kimi-k2-0905-preview', false],
      ],
    );
  });

  it('puts the cheaper of two fill-in-the-middle models first, and a model without a price after both', () => {
    const list = [model('deepseek-coder'), priced('qwen2.5-coder-32b-instruct', 2), priced('deepseek-chat', 0.3)];
    assert.deepEqual(
      completionCandidates(list, {}).map((c) => c.model.id),
      ['deepseek-chat', 'qwen2.5-coder-32b-instruct', 'deepseek-coder'],
    );
    assert.equal(afterKeyOffer(list, {}, fresh)?.id, 'deepseek-chat');
  });

  it('after a key is set, offers the first fill-in-the-middle model once, and only while none is chosen', () => {
    assert.equal(afterKeyOffer(models, {}, fresh)?.id, 'deepseek-chat');
    assert.equal(
      afterKeyOffer(models, {}, { ...fresh, offeredBefore: true }),
      undefined,
      'offered (or declined) before',
    );
    assert.equal(afterKeyOffer(models, {}, { ...fresh, chosenModel: 'kimi-k2-0905-preview' }), undefined, 'chosen');
  });

  it('passes over a model whose FIM the relay refused, and offers no chat model unasked', () => {
    assert.equal(afterKeyOffer(models, { 'deepseek-chat': [FIM_ROUTE] }, fresh)?.id, 'qwen3-coder-plus');
    assert.equal(afterKeyOffer([model('kimi-k2-0905-preview'), model('glm-4.6')], {}, fresh), undefined);
    assert.equal(afterKeyOffer([], {}, fresh), undefined, 'no models known (the check failed)');
  });
});
