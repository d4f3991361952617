import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { GatewayError } from './errors';
import { isRecord } from '../shared/isRecord';
import { words, type Said } from '../shared/words';

/**
 * Parses data that crossed a boundary. A body that does not fit becomes a readable `protocol`
 * error naming the first fields that were wrong, never an `undefined` deep in the UI.
 */
export function parseWith<T extends z.ZodMiniType>(schema: T, data: unknown, what: Said): z.infer<T> {
  const result = z.safeParse(schema, data);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 3).map((issue) => {
    const at = issue.path.length ? issue.path.map(String).join('.') : l10n.t('(top level)');
    const expected =
      'expected' in issue && typeof issue.expected === 'string' ? l10n.t(' (expected {0})', issue.expected) : '';
    return `${at}: ${issue.message}${expected}`;
  });
  const more = result.error.issues.length > 3 ? words(', and {0} more', result.error.issues.length - 3) : '';
  throw new GatewayError(
    'protocol',
    words('{0} did not have the expected shape: {1}{2}.', what, issues.join('; '), more),
  );
}

/**
 * A schema (or a set of schemas) built on its first use and kept. The modules that the extension's
 * entry loads declare their schemas this way, so that loading the entry at activation builds none:
 * each schema is a tree of zod objects, and building the first one also compiles zod's own code.
 */
export function lazySchema<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

/** JSON.parse with a readable `protocol` error that quotes the start of what arrived. */
export function parseJsonText(text: string, what: Said): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const start = text.trim().slice(0, 120).replace(/\s+/g, ' ');
    throw new GatewayError(
      'protocol',
      start
        ? words('{0} was not valid JSON: "{1}".', what, `${start}${text.length > 120 ? '…' : ''}`)
        : words('{0} was not valid JSON (the body was empty).', what),
    );
  }
}

/**
 * Plain checks for the hand-written fast paths in front of a schema (streamed chat events): each
 * accepts exactly what the schema form beside it accepts from JSON. `isRecord` is shared with the
 * webviews.
 */
export { isRecord };

/** What `z.optional(z.nullable(z.string()))` accepts. */
export function isText(v: unknown): v is string | null | undefined {
  return v === undefined || v === null || typeof v === 'string';
}

/** What `z.optional(z.number())` accepts from JSON (which has no NaN or infinities). */
export function isNumber(v: unknown): v is number | undefined {
  return v === undefined || typeof v === 'number';
}

/** What `z.optional(z.nullable(z.number()))` accepts from JSON. */
export function isNumberOrNull(v: unknown): v is number | null | undefined {
  return v === undefined || v === null || typeof v === 'number';
}

/** A count such as a token limit: a positive finite number, floored; anything else is no figure. */
export function positiveCount(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : undefined;
}
