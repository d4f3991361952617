/**
 * Finds the app's own English words in a page that should speak Chinese. Two checks, because
 * either alone misses something:
 * 1. a text that is an English message of l10n/bundle.l10n.json (placeholders match anything)
 *    whose Chinese differs: a string that goes through `l10n.t` but did not get its translation;
 * 2. any English word left once the host's data is taken out: a string that never went through
 *    `l10n.t` at all (so it is not in the bundle). Names (models, files, hosts), numbers, units,
 *    format names, code and protocol names stay as they are in a Chinese UI.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

export interface Shown {
  /** The element (tag and classes) and, for an attribute, its name. */
  where: string;
  text: string;
}

const ROOT = path.resolve(__dirname, '..', '..');
const readBundle = (file: string): Record<string, string> => {
  const json = JSON.parse(readFileSync(path.join(ROOT, 'l10n', file), 'utf8')) as Record<
    string,
    string | { message: string }
  >;
  return Object.fromEntries(
    Object.entries(json).map(([key, entry]) => [key, typeof entry === 'string' ? entry : entry.message]),
  );
};

/** Keys whose strings are protocol values (enums, addresses), never shown as words. */
const NOT_SHOWN = new Set([
  'type',
  'role',
  'status',
  'protocol',
  'protocols',
  'searchProtocols',
  'kind',
  'state',
  'phase',
  'mediaType',
  'action',
  'hintSource',
  'route',
  'stage',
  'src',
]);

/** The strings the host handed the page (titles, model ids, file names, prompts, its own messages). */
export function hostStrings(messages: unknown[]): string[] {
  const out = new Set<string>();
  const visit = (value: unknown, key: string): void => {
    if (typeof value === 'string') {
      if (value.trim().length >= 2 && !NOT_SHOWN.has(key)) out.add(value.trim());
    } else if (Array.isArray(value)) {
      for (const item of value as unknown[]) visit(item, key);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) visit(v, k);
    }
  };
  for (const message of messages) visit(message, '');
  // Longest first, so a name inside a longer one is not cut out of it first.
  return [...out].sort((a, b) => b.length - a.length);
}

/** Words a Chinese UI keeps: formats, units, keys, product and protocol names, loanwords. */
const KEPT = new Set(
  [
    'PNG',
    'JPEG',
    'GIF',
    'WebP',
    'MP4',
    'API',
    'ID',
    'Token',
    'Markdown',
    'Enter',
    'Shift',
    'Ctrl',
    'Esc',
    'POST',
    'KiB',
    'MiB',
    'GiB',
    'min',
    'Model',
    'Gateway',
    'Chat',
    'Completions',
    'Responses',
    'Messages',
    'Resp',
    'Msg',
    'CC',
  ].map((w) => w.toLowerCase()),
);

/** Code, addresses, paths, setting names, sizes: anything with `.`, `_`, `/`, `:`, `*` or `=` inside. */
const CODE = /[\w.\-/:*=@#?&%]*[._/:*=@][\w.\-/:*=@#?&%]*/g;

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class UntranslatedCheck {
  private readonly patterns: Array<{ english: string; pattern: RegExp }>;

  constructor() {
    const english = readBundle('bundle.l10n.json');
    const chinese = readBundle('bundle.l10n.zh-cn.json');
    this.patterns = Object.entries(english)
      .map(([key, message]) => ({ english: message.trim(), translated: (chinese[key] ?? '').trim() }))
      // Only messages with words of their own (not "{0}: {1}"), and whose Chinese is not the same.
      .filter(({ english: e, translated }) => /[A-Za-z]{2,}/.test(e.replace(/\{\d+\}/g, '')) && translated !== e)
      .map(({ english: e }) => ({
        english: e,
        pattern: new RegExp(
          `^${e
            .split(/\{\d+\}/)
            .map(escape)
            .join('[\\s\\S]*?')}$`,
        ),
      }));
  }

  /** `where: text (why)` for every shown text that is the app's English. */
  problems(shown: Shown[], fromHost: string[]): string[] {
    const problems: string[] = [];
    for (const { where, text } of shown) {
      if (fromHost.includes(text)) continue;
      const message = this.patterns.find((p) => p.pattern.test(text));
      if (message) {
        problems.push(`${where}: "${text}" (the English of "${message.english}")`);
        continue;
      }
      let rest = text;
      for (const data of fromHost) rest = rest.split(data).join(' ');
      const words = (rest.replace(CODE, ' ').match(/[A-Za-z]*[a-z][A-Za-z]*/g) ?? []).filter(
        (w) => w.length >= 2 && !KEPT.has(w.toLowerCase()),
      );
      if (words.length) problems.push(`${where}: "${text}" (English words: ${words.join(' ')})`);
    }
    return [...new Set(problems)];
  }
}
