/**
 * Settings that only the user's own settings may decide: a cloned repository's
 * `.vscode/settings.json` (or a `.code-workspace` file) must not choose where the API key goes,
 * where files are written or whether billed calls ask first. package.json declares them with
 * `"scope": "application"`, so VS Code itself drops workspace values of them; the host reads them
 * from the user value alone as well and uses the rules here to tell the user, once, that a
 * workspace tried to set one.
 */
export const USER_ONLY_SETTINGS = {
  baseUrl: 'where the API key is sent',
  catalogUrl: 'where the model catalog is downloaded from',
  proxy: 'how requests carrying the API key reach the gateway',
  outputFolder: 'where generated files are written',
  'tools.confirmBilledCalls': 'whether billed tool calls ask first',
} as const;

export type UserOnlyKey = keyof typeof USER_ONLY_SETTINGS;
export const USER_ONLY_KEYS = Object.keys(USER_ONLY_SETTINGS) as UserOnlyKey[];

/** A value for a user-only setting found outside the user settings; it is never used. */
export interface WorkspaceOverride {
  key: UserOnlyKey;
  value: unknown;
  /** Where it was found, for people: a file path or "workspace settings". */
  where: string;
}

/**
 * The user-only values one settings object sets, whether written flat (`"modelGateway.baseUrl"`)
 * or nested (`"modelGateway": { "baseUrl": … }`), as VS Code accepts both.
 */
export function userOnlyValues(settings: unknown, section: string, where: string): WorkspaceOverride[] {
  if (!isRecord(settings)) return [];
  const found: WorkspaceOverride[] = [];
  for (const key of USER_ONLY_KEYS) {
    const flat = settings[`${section}.${key}`];
    const nested = lookup(settings[section], key.split('.'));
    for (const value of [flat, nested]) if (value !== undefined) found.push({ key, value, where });
  }
  return found;
}

/** The sentence shown (and logged) once per session for one ignored value. */
export function overrideNotice(section: string, o: WorkspaceOverride): string {
  const shown = JSON.stringify(o.value) ?? String(o.value);
  const value = shown.length > 200 ? `${shown.slice(0, 200)}…` : shown;
  return `Ignored "${section}.${o.key}": ${value} from ${o.where}. Only your user settings decide ${USER_ONLY_SETTINGS[o.key]}; a workspace or folder setting is never used for it.`;
}

/** Session memory of what was already said, so each key and value is announced once. */
export class OverrideAnnouncer {
  private readonly said = new Set<string>();
  readonly notices: string[] = [];

  /** The notices not given before, in order; remembers them. */
  fresh(section: string, overrides: readonly WorkspaceOverride[]): string[] {
    const out: string[] = [];
    for (const o of overrides) {
      const id = `${o.key}\u0000${JSON.stringify(o.value)}`;
      if (this.said.has(id)) continue;
      this.said.add(id);
      const notice = overrideNotice(section, o);
      this.notices.push(notice);
      out.push(notice);
    }
    return out;
  }
}

/**
 * Parses the JSON-with-comments of VS Code settings files: `//` and block comments and trailing
 * commas are allowed. Returns undefined for text that is not such a document (VS Code reports
 * that to the user itself).
 */
export function parseJsonc(text: string): unknown {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      out += text.slice(i, end + 1);
      i = end + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) return undefined;
      out += ' ';
      i = end + 2;
    } else {
      out += c;
      i++;
    }
  }
  // Trailing commas before a closing bracket; strings were copied verbatim, so only commas
  // outside strings can match once strings are skipped by the same scan.
  const cleaned = removeTrailingCommas(out);
  try {
    return JSON.parse(cleaned) as unknown;
  } catch {
    return undefined;
  }
}

function removeTrailingCommas(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end < 0) return text;
      out += text.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    if (c === ',') {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] === '}' || text[j] === ']') {
        i++;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

/** Index of the quote closing the string that opens at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

function lookup(value: unknown, parts: string[]): unknown {
  let at = value;
  // VS Code also accepts partly nested keys, e.g. "tools": { "confirmBilledCalls": … } or "tools.confirmBilledCalls".
  for (let n = 0; n < parts.length; n++) {
    if (!isRecord(at)) return undefined;
    const rest = parts.slice(n).join('.');
    if (n < parts.length - 1 && at[rest] !== undefined) return at[rest];
    at = at[parts[n]!];
  }
  return at;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
