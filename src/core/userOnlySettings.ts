import * as l10n from '@vscode/l10n';
import { parse, type ParseError } from 'jsonc-parser';
import { isRecord } from '../shared/isRecord';
/**
 * Settings that only the user's own settings may decide: a cloned repository's
 * `.vscode/settings.json` (or a `.code-workspace` file) must not choose where the API key goes,
 * where files are written or whether billed calls ask first. package.json declares them with
 * `"scope": "application"`, so VS Code itself drops workspace values of them; the host reads them
 * from the user value alone as well and uses the rules here to tell the user, once, that a
 * workspace tried to set one.
 */
export const USER_ONLY_SETTINGS = {
  baseUrl: () => l10n.t('where the API key is sent'),
  catalogUrl: () => l10n.t('where the model catalog is downloaded from'),
  proxy: () => l10n.t('how requests carrying the API key reach the gateway'),
  extraCaCertificates: () => l10n.t('which certificate authorities the connection carrying the API key trusts'),
  outputFolder: () => l10n.t('where generated files are written'),
  'tools.confirmBilledCalls': () => l10n.t('whether billed tool calls ask first'),
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
  return l10n.t(
    'Ignored "{0}": {1} from {2}. Only your user settings decide {3}; a workspace or folder setting is never used for it.',
    `${section}.${o.key}`,
    value,
    o.where,
    USER_ONLY_SETTINGS[o.key](),
  );
}

/**
 * Session memory of what was already said about settings, so each ignored key and value (and each
 * clamped value, see COST_LIMITS in settings.ts) is announced once.
 */
export class OverrideAnnouncer {
  private readonly said = new Set<string>();
  readonly notices: string[] = [];

  /** Whether `notice` is new this session; remembers it. */
  once(notice: string): boolean {
    const id = `notice\u0000${notice}`;
    if (this.said.has(id)) return false;
    this.said.add(id);
    this.notices.push(notice);
    return true;
  }

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
 * Parses the JSON-with-comments of VS Code settings files (comments and trailing commas allowed)
 * with VS Code's own parser library. Returns undefined for text that is not such a document
 * (VS Code reports that to the user itself), rather than a partial guess.
 */
export function parseJsonc(text: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  return errors.length ? undefined : value;
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
