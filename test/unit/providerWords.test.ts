/**
 * The providers behind the gateway are named as users know them (GLM, Kimi, Alibaba Bailian), never
 * by an order only the gateway's documents use ("the second provider", "第三提供方"), in every text a
 * user reads: menus and settings, the host's and the webviews' strings, and the READMEs.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';

const ORDINAL = /\b(first|second|third)[- ]provider|第[一二三](个)?(服务商|提供方|供应商)/i;

function userTexts(): { file: string; text: string }[] {
  const files = [
    'package.nls.json',
    'package.nls.zh-cn.json',
    'README.md',
    'README.zh-CN.md',
    ...readdirSync('l10n').map((f) => path.join('l10n', f)),
  ];
  const out: { file: string; text: string }[] = [];
  for (const file of files) {
    const content = readFileSync(file, 'utf8');
    if (file.endsWith('.json')) {
      for (const [key, value] of Object.entries(JSON.parse(content) as Record<string, unknown>)) {
        out.push({ file: `${file} ${key}`, text: `${key}\n${String(value)}` });
      }
    } else out.push({ file, text: content });
  }
  // The manifest's own (unlocalised) descriptions, e.g. the language model tools' inputs.
  out.push({ file: 'package.json', text: readFileSync('package.json', 'utf8') });
  return out;
}

describe('provider names in user-facing words', () => {
  it('no menu, setting, message or README names a provider by its position', () => {
    const found = userTexts()
      .filter((t) => ORDINAL.test(t.text))
      .map((t) => `${t.file}: ${ORDINAL.exec(t.text)?.[0]}`);
    assert.deepEqual(found, []);
  });
});
