import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import * as l10n from '@vscode/l10n';
import { getL10nJson } from '@vscode/l10n-dev';
import { errorFromResponse } from '../../src/core/errorBody';
import { findFiles } from '../runAll';

/**
 * The strings of the code are localised through `vscode.l10n.t` (host) and `l10n.t` from
 * @vscode/l10n (core and webviews); @vscode/l10n-dev extracts both into l10n/bundle.l10n.json, the
 * English bundle, and l10n/bundle.l10n.zh-cn.json holds the Simplified Chinese.
 */
const root = path.resolve(__dirname, '../..');
const sources = findFiles(path.join(root, 'src'), '.ts').filter((f) => !f.endsWith('.d.ts'));
const readJson = (file: string): Record<string, unknown> => JSON.parse(readFileSync(path.join(root, file), 'utf8')) as Record<string, unknown>;

/** `{0}`, `{name}`: what a translation must keep. */
const placeholders = (text: string): string => (text.match(/\{[^{}\s]+\}/g) ?? []).sort().join(' ');

/** The message of a bundle entry (a string, or `{message, comment}`). */
function messageOf(entry: unknown): string {
  if (typeof entry === 'string') return entry;
  if (entry && typeof entry === 'object' && typeof (entry as { message?: unknown }).message === 'string') return (entry as { message: string }).message;
  throw new Error(`unexpected bundle entry ${JSON.stringify(entry)}`);
}

describe('localisation of the code', function () {
  this.timeout(120_000);
  const english = readJson('l10n/bundle.l10n.json');
  const chinese = readJson('l10n/bundle.l10n.zh-cn.json');

  it('has every string the code uses in the English bundle, and nothing the code no longer uses', async () => {
    const extracted = await getL10nJson(sources.map((file) => ({ contents: readFileSync(file, 'utf8'), extension: path.extname(file) })));
    const used = Object.keys(extracted).sort();
    const bundled = Object.keys(english).sort();
    assert.ok(used.length > 20, `only ${used.length} localised strings found in src`);
    assert.deepEqual(used.filter((k) => !bundled.includes(k)), [], 'in the code but not in l10n/bundle.l10n.json: run `npm run l10n`');
    assert.deepEqual(bundled.filter((k) => !used.includes(k)), [], 'in l10n/bundle.l10n.json but no longer in the code: run `npm run l10n`');
  });

  it('has a Chinese translation of every string, with the same placeholders', () => {
    const missing = Object.keys(english).filter((key) => typeof chinese[key] !== 'string' || (chinese[key] as string).trim() === '');
    assert.deepEqual(missing, [], 'no translation in l10n/bundle.l10n.zh-cn.json');
    const differ = Object.entries(english)
      .filter(([key, entry]) => typeof chinese[key] === 'string' && placeholders(messageOf(entry)) !== placeholders(chinese[key] as string))
      .map(([key]) => key);
    assert.deepEqual(differ, [], 'a translation whose placeholders differ from its English');
    assert.deepEqual(Object.keys(chinese).filter((key) => !(key in english)), [], 'translations of strings the code no longer has');
  });

  it("speaks the display language in core's messages, and shows the gateway's own words as they came", () => {
    try {
      l10n.config({ contents: chinese as Record<string, string> });
      const error = errorFromResponse({ status: 401, body: JSON.stringify({ error: { message: '无效的令牌', type: 'new_api_error' } }), route: 'gateway' });
      assert.match(error.message, /^API 密钥未被接受（HTTP 401）。 网关返回：无效的令牌。/);
    } finally {
      l10n.config({ contents: {} });
    }
    const english = errorFromResponse({ status: 401, body: JSON.stringify({ error: { message: 'invalid token', type: 'new_api_error' } }), route: 'gateway' });
    assert.match(english.message, /^The API key was not accepted \(HTTP 401\)\. The gateway said: invalid token\./);
  });

  it('gives every l10n.t call a literal first argument (the extractor cannot see any other)', () => {
    const bad: string[] = [];
    for (const file of sources) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node) && /(^|\.)l10n\.t$/.test(node.expression.getText(source))) {
          const first = node.arguments[0];
          const literal = first && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first) || ts.isObjectLiteralExpression(first));
          if (!literal) bad.push(`${path.relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    assert.deepEqual(bad, []);
  });
});
