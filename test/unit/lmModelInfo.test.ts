import * as assert from 'node:assert/strict';
import type { ModelInfo } from '../../src/core/models/types';
import { chatModelsForVsCode, DEFAULT_CONTEXT_TOKENS, toChatInformation } from '../../src/host/lm/modelInfo';
import { estimateTokens } from '../../src/host/lm/tokenCount';

function model(partial: Partial<ModelInfo> & { id: string }): ModelInfo {
  return { name: partial.id, provider: 'openai', kind: 'chat', protocols: ['chatCompletions'], protocolSource: 'gateway', available: true, inCatalog: true, ...partial };
}

const SETTINGS = { maxTokens: 4096, imageInputModels: [], toolCalling: true };

describe("models as VS Code's chat sees them", () => {
  it('offers only chat models the key may use', () => {
    const models = [
      model({ id: 'gpt-4o-mini' }),
      model({ id: 'gpt-image-1', kind: 'image', protocols: [] }),
      model({ id: 'wan2.5-t2v-preview', kind: 'video', protocols: [] }),
      model({ id: 'glm-file-parser', kind: 'tool', protocols: [] }),
      model({ id: 'qwen-max', available: false }),
    ];
    assert.deepEqual(chatModelsForVsCode(models).map((m) => m.id), ['gpt-4o-mini']);
  });

  it('takes the window and answer limit from the catalog: the input budget is what the answer leaves', () => {
    const info = toChatInformation(model({ id: 'gpt-4o-mini', name: 'GPT-4o mini', catalog: { id: 'gpt-4o-mini', contextWindow: 128_000, maxOutput: 16_384, inputModalities: ['text', 'image'] } }), 'chatCompletions', SETTINGS);
    assert.equal(info.name, 'GPT-4o mini');
    assert.equal(info.family, 'gpt');
    assert.equal(info.maxOutputTokens, 16_384);
    assert.equal(info.maxInputTokens, 128_000 - 16_384);
    assert.deepEqual(info.capabilities, { imageInput: true, toolCalling: true });
    assert.equal(info.detail, 'openai · Chat Completions');
    assert.equal(info.protocol, 'chatCompletions');
  });

  it('falls back to the documented defaults and says so', () => {
    const info = toChatInformation(model({ id: 'mystery-1', provider: 'custom' }), 'messages', SETTINGS);
    assert.equal(info.maxOutputTokens, 4096);
    assert.equal(info.maxInputTokens, DEFAULT_CONTEXT_TOKENS - 4096);
    assert.match(info.tooltip ?? '', /assumed; the catalog gives none/);
    assert.equal(info.capabilities.imageInput, false, 'nothing known about images: not offered');
    assert.equal(info.detail, 'custom · Messages');
  });

  it('believes a catalog that says the model takes no tools, and offers none when told the core carries none', () => {
    const noTools = model({ id: 'deepseek-r1', catalog: { id: 'deepseek-r1', toolCall: false } });
    assert.equal(toChatInformation(noTools, 'chatCompletions', SETTINGS).capabilities.toolCalling, false);
    assert.equal(toChatInformation(model({ id: 'gpt-5' }), 'responses', { ...SETTINGS, toolCalling: false }).capabilities.toolCalling, false);
  });

  it('offers images for models listed in the setting', () => {
    const info = toChatInformation(model({ id: 'qwen-vl-plus' }), 'chatCompletions', { ...SETTINGS, imageInputModels: ['qwen-vl-*'] });
    assert.equal(info.capabilities.imageInput, true);
  });
});

describe('token estimate', () => {
  it('counts four characters a token and CJK characters one each', () => {
    assert.equal(estimateTokens(''), 0);
    assert.equal(estimateTokens('abcd'), 1);
    assert.equal(estimateTokens('abcde'), 2);
    assert.equal(estimateTokens('你好世界'), 4);
    assert.equal(estimateTokens('こんにちは'), 5);
    assert.equal(estimateTokens('한국어'), 3);
    assert.equal(estimateTokens('hi 你好'), 2 + 1);
  });
});
