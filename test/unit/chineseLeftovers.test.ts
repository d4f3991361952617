/**
 * English forms that were left in the Chinese UI: "40 s前下载" (an age in English units inside a
 * Chinese sentence), money written "0.000002 美元" where English writes "US$0.000002", and the
 * product's name in English where its Chinese form exists ("Model Gateway：连接报告", the source of
 * every notification).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as l10n from '@vscode/l10n';
import { quotaLine, quotaShort, type KeyQuota } from '../../src/core/quota';
import { formatAge, setDisplayLocale } from '../../src/shared/format';

const zh = JSON.parse(readFileSync('l10n/bundle.l10n.zh-cn.json', 'utf8')) as Record<string, string>;
const nlsZh = JSON.parse(readFileSync('package.nls.zh-cn.json', 'utf8')) as Record<string, string>;
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { displayName: string };

describe('Chinese UI leftovers', () => {
  afterEach(() => {
    l10n.config({ contents: {} });
    setDisplayLocale('en');
  });

  it('says how long ago in Chinese units', () => {
    setDisplayLocale('zh-cn');
    assert.equal(formatAge(40), '40 秒');
    assert.equal(formatAge(12 * 60), '12 分钟');
    assert.equal(formatAge(5 * 3600), '5 小时');
    assert.equal(formatAge(3 * 86400), '3 天');
    setDisplayLocale('en');
    assert.equal(formatAge(40), '40 s');
    assert.equal(formatAge(3 * 86400), '3 days');
  });

  it('writes money as English does, US$ before the amount', () => {
    l10n.config({ contents: zh });
    const q: KeyQuota = {
      source: 'dashboard',
      checkedAt: 0,
      unit: 'usd',
      unlimited: false,
      remaining: 0.000002,
      used: 1.5,
    };
    assert.equal(quotaShort(q), '剩余 US$0.000002');
    assert.equal(quotaLine(q), '密钥额度：剩余 US$0.000002，已用 US$1.50。');
    const dollars = Object.entries({ ...zh, ...nlsZh }).filter(([, v]) => v.includes('美元'));
    assert.deepEqual(dollars, []);
  });

  it('names the product in Chinese: the extension (the source of notifications) and the titles', () => {
    assert.equal(manifest.displayName, '%extension.displayName%');
    assert.equal(nlsZh['extension.displayName'], '模型网关');
    const english = Object.entries(zh).filter(([, v]) => v.includes('Model Gateway'));
    assert.deepEqual(english, []);
  });
});
