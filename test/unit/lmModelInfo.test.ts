import * as assert from 'node:assert/strict';
import type { ModelInfo } from '../../src/core/models/types';
import { listedLimits } from '../../src/core/models/keyModels';
import { mergeModels } from '../../src/core/models/classify';
import {
  chatModelsForVsCode,
  DEFAULT_INPUT_TOKENS,
  DEFAULT_OUTPUT_TOKENS,
  toChatInformation,
} from '../../src/host/lm/modelInfo';
import { estimateTokens } from '../../src/core/chat/tokenEstimate';
import { anthropicImageTokens, imageTokens, openAiImageTokens } from '../../src/host/lm/tokenCount';
import { encodePng } from '../gateway/png';
import { chatModel } from '../support/models';

function model(partial: Partial<ModelInfo> & { id: string }): ModelInfo {
  return chatModel(partial.id, { inCatalog: true, ...partial });
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
    assert.deepEqual(
      chatModelsForVsCode(models).map((m) => m.id),
      ['gpt-4o-mini'],
    );
  });

  it('takes the window and answer limit from the catalog: the input budget is what the answer leaves', () => {
    const info = toChatInformation(
      model({
        id: 'gpt-4o-mini',
        name: 'GPT-4o mini',
        catalog: { id: 'gpt-4o-mini', contextWindow: 128_000, maxOutput: 16_384, inputModalities: ['text', 'image'] },
      }),
      'chatCompletions',
      SETTINGS,
    );
    assert.equal(info.name, 'GPT-4o mini');
    assert.equal(info.family, 'gpt');
    assert.equal(info.maxOutputTokens, 16_384);
    assert.equal(info.maxInputTokens, 128_000 - 16_384);
    assert.deepEqual(info.capabilities, { imageInput: true, toolCalling: true });
    assert.equal(info.detail, 'openai · Chat Completions');
    assert.equal(info.protocol, 'chatCompletions');
  });

  it('assumes a small window when nothing is known (32K in, 4K out, never 128K) and says so in the detail and tooltip', () => {
    const info = toChatInformation(model({ id: 'mystery-1', provider: 'custom' }), 'messages', {
      ...SETTINGS,
      maxTokens: 16_000,
    });
    assert.equal(DEFAULT_INPUT_TOKENS, 32_768);
    assert.equal(info.maxInputTokens, DEFAULT_INPUT_TOKENS);
    assert.equal(
      info.maxOutputTokens,
      DEFAULT_OUTPUT_TOKENS,
      'a larger answer setting does not raise an unknown limit',
    );
    assert.match(
      info.tooltip ?? '',
      /Context window unknown; assuming 32,768 tokens of input and answers up to 4,096 tokens\./,
    );
    assert.equal(info.capabilities.imageInput, false, 'nothing known about images: not offered');
    assert.equal(info.detail, 'custom · Messages · context unknown');
    // A smaller answer setting is kept.
    assert.equal(
      toChatInformation(model({ id: 'mystery-1' }), 'messages', { ...SETTINGS, maxTokens: 1000 }).maxOutputTokens,
      1000,
    );
  });

  it("takes the limits the key's model list gives when the catalog has none; the catalog's win", () => {
    const [listed] = mergeModels(
      [
        {
          id: 'or-model',
          limits: listedLimits({ context_length: 65_536, top_provider: { max_completion_tokens: 8192 } }),
        },
      ],
      undefined,
    );
    assert.ok(listed);
    const info = toChatInformation(listed, 'chatCompletions', SETTINGS);
    assert.equal(info.maxOutputTokens, 8192);
    assert.equal(info.maxInputTokens, 65_536 - 8192);
    assert.match(info.tooltip ?? '', /Context 65,536 tokens, answers up to 8,192 tokens\./);
    assert.doesNotMatch(info.detail ?? '', /unknown/);
    const both = toChatInformation(
      { ...listed, catalog: { id: 'or-model', contextWindow: 200_000, maxOutput: 32_000 } },
      'chatCompletions',
      SETTINGS,
    );
    assert.equal(both.maxInputTokens, 200_000 - 32_000);
  });

  it('reads the list limits leniently: other types and non-positive figures are no figures', () => {
    assert.deepEqual(listedLimits({ context_window: 32_000, max_output_tokens: 2048 }), {
      contextWindow: 32_000,
      maxOutput: 2048,
    });
    assert.deepEqual(listedLimits({ max_completion_tokens: 1024.7 }), { maxOutput: 1024 });
    assert.equal(listedLimits({ context_length: '128k', max_output_tokens: -1, top_provider: null }), undefined);
    assert.equal(listedLimits({}), undefined);
  });

  it('believes a catalog that says the model takes no tools, and offers none when told the core carries none', () => {
    const noTools = model({ id: 'deepseek-r1', catalog: { id: 'deepseek-r1', toolCall: false } });
    assert.equal(toChatInformation(noTools, 'chatCompletions', SETTINGS).capabilities.toolCalling, false);
    assert.equal(
      toChatInformation(model({ id: 'gpt-5' }), 'responses', { ...SETTINGS, toolCalling: false }).capabilities
        .toolCalling,
      false,
    );
  });

  it('offers images for models listed in the setting', () => {
    const info = toChatInformation(model({ id: 'qwen-vl-plus' }), 'chatCompletions', {
      ...SETTINGS,
      imageInputModels: ['qwen-vl-*'],
    });
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

describe('image tokens per protocol', () => {
  const png = (w: number, h: number) => encodePng(w, h, new Uint8Array(w * h * 3));

  it("counts OpenAI's tiles: 85 + 170 per 512 px tile after fitting in 2048 and a 768 px shorter side", () => {
    assert.equal(openAiImageTokens(512, 512), 85 + 170);
    assert.equal(openAiImageTokens(1024, 1024), 85 + 170 * 4, '1024² is scaled to 768²: 2×2 tiles');
    assert.equal(openAiImageTokens(2048, 4096), 85 + 170 * 6, '1024×2048 then 768×1536: 2×3 tiles');
    assert.equal(openAiImageTokens(100, 50), 85 + 170, 'a small image is one tile');
  });

  it("counts Anthropic's width × height / 750, after scaling a large image down", () => {
    assert.equal(anthropicImageTokens(200, 200), Math.ceil(40_000 / 750));
    assert.equal(anthropicImageTokens(1000, 1000), 1334);
    assert.ok(anthropicImageTokens(4000, 3000) <= 1534, 'scaled to about 1.15 megapixels');
  });

  it('reads the size from the bytes, and counts an image of unknown size as the largest', () => {
    const small = png(64, 32);
    assert.equal(imageTokens('chatCompletions', small), 255);
    assert.equal(imageTokens('responses', small), 255);
    assert.equal(imageTokens('messages', small), Math.ceil((64 * 32) / 750));
    const unreadable = new Uint8Array([1, 2, 3]);
    assert.equal(imageTokens('chatCompletions', unreadable), 85 + 170 * 8);
    assert.equal(imageTokens('messages', unreadable), Math.ceil(1_150_000 / 750));
  });
});
