import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { GatewayError } from './errors';
import { words } from '../shared/words';

/**
 * The user's named API keys: their names and order, and which key a model is called with when
 * several keys may call it. Only ids and names are kept here; the keys themselves live in the
 * host's secret storage, one secret per id. No `vscode` import.
 */

/** The key that versions with a single key kept: its secret stays under their id, so they still find it. */
export const LEGACY_KEY_ID = 'legacy';

export const KEY_NAME_MAX = 40;

/** Letters, digits, and `-`, `_`, `.` or single spaces between them: short enough for a status bar tooltip. */
const KEY_NAME = /^[\p{L}\p{N}](?:[\p{L}\p{N}._-]| (?! ))*$/u;

export const keyEntrySchema = z.object({
  id: z.string().check(z.minLength(1), z.maxLength(64)),
  name: z.string().check(z.minLength(1), z.maxLength(KEY_NAME_MAX), z.regex(KEY_NAME)),
});
export type KeyEntry = z.infer<typeof keyEntrySchema>;

export const keyListSchema = z.object({
  keys: z.array(keyEntrySchema),
  /** Model id → id of the key the user picked for it; a model not named here goes with the first key that lists it. */
  modelKeys: z.record(z.string(), z.string()),
});
export type KeyList = z.infer<typeof keyListSchema>;

export function emptyKeyList(): KeyList {
  return { keys: [], modelKeys: {} };
}

/**
 * The list as read from the shared file: entries that do not fit, a second entry with an id or a
 * name already taken, are dropped (a newer version's or a damaged file's), never the whole list.
 */
export function parseKeyList(raw: unknown): KeyList | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const record = raw as { keys?: unknown; modelKeys?: unknown };
  const keys: KeyEntry[] = [];
  for (const item of Array.isArray(record.keys) ? record.keys : []) {
    const parsed = z.safeParse(keyEntrySchema, item);
    if (parsed.success && !keys.some((k) => k.id === parsed.data.id || sameName(k.name, parsed.data.name)))
      keys.push(parsed.data);
  }
  const choices = z.safeParse(keyListSchema.shape.modelKeys, record.modelKeys);
  return { keys, modelKeys: choices.success ? choices.data : {} };
}

function sameName(a: string, b: string): boolean {
  return a.toLocaleLowerCase() === b.toLocaleLowerCase();
}

/** Why `name` cannot name a key (`except`: the id of the key being renamed), or undefined when it can. */
export function keyNameProblem(name: string, keys: readonly KeyEntry[], except?: string): string | undefined {
  const trimmed = name.trim();
  if (!trimmed) return l10n.t('Give the key a name, e.g. "default" or "team-claude".');
  if (trimmed.length > KEY_NAME_MAX) return l10n.t('A key name has at most {0} characters.', KEY_NAME_MAX);
  if (!KEY_NAME.test(trimmed))
    return l10n.t(
      'A key name has letters, digits, "-", "_", "." and single spaces, and starts with a letter or digit.',
    );
  if (keys.some((k) => k.id !== except && sameName(k.name, trimmed)))
    return l10n.t('There is already a key named "{0}".', trimmed);
  return undefined;
}

/** A name no key has yet: `base`, else `base-2`, `base-3`… */
export function freeKeyName(base: string, keys: readonly KeyEntry[]): string {
  for (let n = 1; ; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    if (!keys.some((k) => sameName(k.name, name))) return name;
  }
}

/** The list with the key `id` moved one place up (-1) or down (+1); unchanged at an end. */
export function moveKey(list: KeyList, id: string, delta: -1 | 1): KeyList {
  const from = list.keys.findIndex((k) => k.id === id);
  const to = from + delta;
  if (from < 0 || to < 0 || to >= list.keys.length) return list;
  const keys = [...list.keys];
  const [moved] = keys.splice(from, 1);
  keys.splice(to, 0, moved as KeyEntry);
  return { ...list, keys };
}

/** The list without the key `id`, and without the model choices that named it. */
export function withoutKey(list: KeyList, id: string): KeyList {
  return {
    keys: list.keys.filter((k) => k.id !== id),
    modelKeys: Object.fromEntries(Object.entries(list.modelKeys).filter(([, keyId]) => keyId !== id)),
  };
}

/**
 * The key a model is called with: the user's pick when that key still lists it, else the first key
 * in the user's order that lists it. `listedBy` is in the user's order.
 */
export function keyForModel(listedBy: readonly string[], picked: string | undefined): string | undefined {
  return picked !== undefined && listedBy.includes(picked) ? picked : listedBy[0];
}

/**
 * The key a request goes with: its own `key` (a resource that belongs to a key), else the key its
 * model is called with (`modelKey`, see ModelInfo.keyId), else the first. A request for a key that
 * was removed fails instead of going with another key, which could not reach that key's resources.
 */
export function keyForRequest(
  keys: readonly KeyEntry[],
  req: { key?: string; model?: string },
  modelKey: (model: string) => string | undefined,
): KeyEntry | undefined {
  if (req.key !== undefined) {
    const own = keys.find((k) => k.id === req.key);
    if (!own)
      throw new GatewayError(
        'auth',
        words(
          'The API key this was made with has been removed; another key cannot reach it. Start it again with one of your keys.',
        ),
      );
    return own;
  }
  const wanted = req.model === undefined ? undefined : modelKey(req.model);
  return keys.find((k) => k.id === wanted) ?? keys[0];
}
