/**
 * English that was left in the Chinese UI: the catalog's modality ids in a capability note, the
 * `enable_search` field in the search switch's tooltip, "5 s" units, and a space between Chinese
 * sentences where an English one needs it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as l10n from '@vscode/l10n';
import { imageSupport } from '../../src/core/chat/capabilities';
import type { ModelInfo } from '../../src/core/models/types';
import { formatDuration, setDisplayLocale } from '../../src/shared/format';

const zh = JSON.parse(readFileSync('l10n/bundle.l10n.zh-cn.json', 'utf8')) as Record<string, string>;

describe('Chinese UI words', () => {
  afterEach(() => {
    l10n.config({ contents: {} });
    setDisplayLocale('en');
  });

  it('says durations with Chinese units', () => {
    setDisplayLocale('zh-cn');
    assert.equal(formatDuration(5000), '5 秒');
    assert.equal(formatDuration(125_000), '2 分钟 5 秒');
    assert.equal(formatDuration(3_600_000), '1 小时');
    setDisplayLocale('en');
    assert.equal(formatDuration(5000), '5 s');
  });

  it('names the input a catalog lists in Chinese, not by its id ("text")', () => {
    l10n.config({ contents: zh });
    const model = { id: 'deepseek-chat', catalog: { inputModalities: ['text'] } } as unknown as ModelInfo;
    const { supported, reason } = imageSupport(model);
    assert.equal(supported, false);
    assert.match(reason, /文本/);
    assert.doesNotMatch(reason, /\btext\b/);
  });

  it('has no wire field names in the search switch tooltip, and no space after a Chinese full stop', () => {
    const tooltip = Object.entries(zh).find(([en]) => en.startsWith('Let the model search the web'));
    assert.ok(tooltip, 'the search switch tooltip');
    assert.doesNotMatch(tooltip[1], /enable_search/);
    const spaced = Object.entries(zh).filter(([, text]) =>
      /^ [\u3400-\u9fff]|[。）！？](\{\d\})? [\u3400-\u9fff“（]/.test(text),
    );
    assert.deepEqual(
      spaced.map(([en]) => en),
      [],
    );
  });
});
