import * as z from 'zod/mini';

/**
 * The `modelGateway.completions.*` settings, checked: a value of the wrong type falls back to its
 * default (and is named in `problems`) instead of turning completion on or off by surprise.
 */
export interface CompletionSettings {
  /** Off until the user turns it on: nothing is sent before. */
  enabled: boolean;
  /** The model completions go to; '' while none was chosen. */
  model: string;
  /** Globs (as `files.exclude` writes them) of files never read for completion. */
  exclude: string[];
  /** Language id → on/off; a language not named is on. */
  languages: Record<string, boolean>;
}

const FIELDS = {
  enabled: z.boolean(),
  model: z.string(),
  exclude: z.array(z.string()),
  languages: z.record(z.string(), z.boolean()),
};

const DEFAULTS: CompletionSettings = { enabled: false, model: '', exclude: [], languages: {} };

export function readCompletionSettings(get: (key: keyof CompletionSettings) => unknown): {
  settings: CompletionSettings;
  problems: string[];
} {
  const settings = { ...DEFAULTS };
  const problems: string[] = [];
  for (const key of Object.keys(FIELDS) as Array<keyof CompletionSettings>) {
    const value = get(key);
    if (value === undefined) continue;
    const parsed = z.safeParse(FIELDS[key], value);
    if (parsed.success) (settings as Record<string, unknown>)[key] = parsed.data;
    else problems.push(`modelGateway.completions.${key}`);
  }
  return { settings, problems };
}

/** Whether completion runs for a language now (on, a model chosen, not snoozed, the language not turned off). */
export function completesNow(s: CompletionSettings, language: string, snoozedUntil: number, now: number): boolean {
  return s.enabled && s.model !== '' && snoozedUntil <= now && s.languages[language] !== false;
}
