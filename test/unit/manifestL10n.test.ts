import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The manifest's user-facing strings live in package.nls.json (English) and package.nls.zh-cn.json;
 * VS Code replaces every `%key%` string of package.json with the bundle of the display language
 * (https://code.visualstudio.com/api/references/extension-manifest, "localization").
 */
const root = path.resolve(__dirname, '../..');
const readJson = (name: string): unknown => JSON.parse(readFileSync(path.join(root, name), 'utf8'));
const manifest = readJson('package.json') as Record<string, unknown>;
const english = readJson('package.nls.json') as Record<string, string>;
const chinese = readJson('package.nls.zh-cn.json') as Record<string, string>;

/** Property names whose values a user reads in VS Code's UI. */
const USER_FACING = new Set([
  'title',
  'shortTitle',
  'category',
  'name',
  'contextualTitle',
  'contents',
  'description',
  'markdownDescription',
  'enumDescriptions',
  'markdownEnumDescriptions',
  'deprecationMessage',
  'markdownDeprecationMessage',
  'displayName',
  'userDescription',
  'label',
  'placeholder',
]);

/**
 * Strings that are not for the user to read, with the reason:
 * - tool `name`s are identifiers the model calls; `modelDescription` and the tools' input-schema
 *   descriptions are read by the model, which is steered most reliably in one language;
 * - the chat provider's displayName is the vendor name VS Code's model picker groups by, and the
 *   top-level `name` is the package's id. (The extension's displayName has a Chinese form: VS Code
 *   shows it as the source of every notification.)
 */
function exempt(pathParts: string[]): boolean {
  const joined = pathParts.join('.');
  if (/^contributes\.languageModelTools\.\d+\.(name|modelDescription)$/.test(joined)) return true;
  if (/^contributes\.languageModelTools\.\d+\.inputSchema\./.test(joined)) return true;
  if (joined === 'name' || /^contributes\.languageModelChatProviders\.\d+\.displayName$/.test(joined)) return true;
  return false;
}

interface Found {
  where: string;
  value: string;
}

function walk(value: unknown, at: string[], out: Found[]): void {
  if (typeof value === 'string') {
    out.push({ where: at.join('.'), value });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => walk(v, [...at, String(i)], out));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) walk(v, [...at, k], out);
  }
}

/** The property a string belongs to: the last non-index part of its path. */
function propertyOf(where: string): string {
  const parts = where.split('.');
  while (parts.length && /^\d+$/.test(parts[parts.length - 1] ?? '')) parts.pop();
  return parts[parts.length - 1] ?? '';
}

const placeholders = (s: string): string[] => (s.match(/\{\d+\}/g) ?? []).sort();

describe('manifest localisation', () => {
  const strings: Found[] = [];
  walk(manifest, [], strings);
  const refs = strings.filter((s) => /^%[^%\s]+%$/.test(s.value));

  it('has an English and a Chinese text for every %key% in package.json', () => {
    assert.ok(refs.length > 50, `only ${refs.length} %key% strings found`);
    const missing = refs
      .map((r) => r.value.slice(1, -1))
      .filter((key) => typeof english[key] !== 'string' || typeof chinese[key] !== 'string');
    assert.deepEqual(missing, []);
  });

  it('has no unused keys and the same keys in both languages', () => {
    const used = new Set(refs.map((r) => r.value.slice(1, -1)));
    assert.deepEqual(
      Object.keys(english).filter((k) => !used.has(k)),
      [],
    );
    assert.deepEqual(
      Object.keys(chinese).filter((k) => !(k in english)),
      [],
    );
  });

  it('keeps placeholders, command links and setting references in each translation', () => {
    const differ: string[] = [];
    for (const [key, en] of Object.entries(english)) {
      const zh = chinese[key] ?? '';
      const links = (s: string): string[] => (s.match(/\((command:[^)]+)\)|#[\w.]+#/g) ?? []).sort();
      if (placeholders(en).join() !== placeholders(zh).join() || links(en).join() !== links(zh).join())
        differ.push(key);
      if (zh.trim() === '') differ.push(key);
    }
    assert.deepEqual(differ, []);
  });

  it('leaves no user-facing manifest string as a plain literal', () => {
    const plain = strings
      .filter((s) => USER_FACING.has(propertyOf(s.where)))
      .filter((s) => !/^%[^%\s]+%$/.test(s.value))
      .filter((s) => !exempt(s.where.split('.')))
      // Ids and `when` clauses are not under these property names; a view's `name` is.
      .map((s) => `${s.where} = ${s.value}`);
    assert.deepEqual(plain, []);
  });
});
