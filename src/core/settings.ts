import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import type { Timeouts } from './httpTypes';
import { lazySchema } from './validate';

/** The extension's settings, read from `modelGateway.*`. Defaults match package.json. */
export interface Settings {
  baseUrl: string;
  catalogUrl: string;
  catalogRefreshHours: number;
  timeouts: { connectSeconds: number; firstByteSeconds: number; idleSeconds: number; longRequestSeconds: number };
  outputFolder: string;
  proxy: 'inherit' | 'off';
  /** A PEM file of extra certificate authorities to trust (see core/tls.ts); '' for none. */
  extraCaCertificates: string;
}

export const DEFAULT_SETTINGS: Settings = {
  baseUrl: '',
  catalogUrl: '',
  catalogRefreshHours: 6,
  timeouts: { connectSeconds: 15, firstByteSeconds: 60, idleSeconds: 120, longRequestSeconds: 900 },
  outputFolder: 'generated',
  proxy: 'inherit',
  extraCaCertificates: '',
};

const fields = lazySchema(() => {
  const seconds = z.number().check(z.gte(0), z.lte(24 * 3600));
  return {
    baseUrl: z.string(),
    catalogUrl: z.string(),
    catalogRefreshHours: z.number().check(z.gte(0), z.lte(24 * 30)),
    'timeouts.connectSeconds': seconds,
    'timeouts.firstByteSeconds': seconds,
    'timeouts.idleSeconds': seconds,
    'timeouts.longRequestSeconds': seconds,
    outputFolder: z.string(),
    proxy: z.enum(['inherit', 'off']),
    extraCaCertificates: z.string(),
  } as const;
});
type Fields = ReturnType<typeof fields>;

export interface SettingsRead {
  settings: Settings;
  /** One line per value that was invalid and replaced by its default. */
  problems: string[];
}

/** Validates each setting on its own, so one bad value falls back to its default alone. */
export function readSettings(get: (key: string) => unknown): SettingsRead {
  const problems: string[] = [];
  const value = <K extends keyof Fields>(key: K, fallback: z.infer<Fields[K]>): z.infer<Fields[K]> => {
    const raw = get(key);
    if (raw === undefined || raw === null) return fallback;
    const parsed = z.safeParse(fields()[key], raw);
    if (parsed.success) return parsed.data as z.infer<Fields[K]>;
    problems.push(
      l10n.t(
        '"{0}" has an invalid value ({1}); using {2}.',
        `modelGateway.${key}`,
        JSON.stringify(raw),
        JSON.stringify(fallback),
      ),
    );
    return fallback;
  };
  const d = DEFAULT_SETTINGS;
  return {
    settings: {
      baseUrl: value('baseUrl', d.baseUrl),
      catalogUrl: value('catalogUrl', d.catalogUrl).trim(),
      catalogRefreshHours: value('catalogRefreshHours', d.catalogRefreshHours),
      timeouts: {
        connectSeconds: value('timeouts.connectSeconds', d.timeouts.connectSeconds),
        firstByteSeconds: value('timeouts.firstByteSeconds', d.timeouts.firstByteSeconds),
        idleSeconds: value('timeouts.idleSeconds', d.timeouts.idleSeconds),
        longRequestSeconds: value('timeouts.longRequestSeconds', d.timeouts.longRequestSeconds),
      },
      outputFolder: value('outputFolder', d.outputFolder),
      proxy: value('proxy', d.proxy),
      extraCaCertificates: value('extraCaCertificates', d.extraCaCertificates).trim(),
    },
    problems,
  };
}

/** 0 in a setting means "no limit", which undici spells 0 as well. */
export function timeoutsFrom(settings: Settings): Timeouts {
  const t = settings.timeouts;
  return {
    connectMs: t.connectSeconds * 1000,
    firstByteMs: t.firstByteSeconds * 1000,
    idleMs: t.idleSeconds * 1000,
    longMs: t.longRequestSeconds * 1000,
  };
}

/**
 * Settings that raise what a request costs (tokens, characters and messages sent, images), with
 * the upper bound of each. package.json declares the same `maximum` (so the Settings editor refuses
 * more) and lists them in `restrictedConfigurations` (so an untrusted workspace cannot set them);
 * a value over the bound that still arrives (settings.json edited by hand, a trusted workspace)
 * is clamped when read, and the user is told once.
 */
export const COST_LIMITS = {
  /** The largest answers models give today (128k output tokens). */
  'chat.maxTokens': { min: 1, max: 128_000 },
  /** Some 250k tokens of attached text per message. */
  'chat.contextMaxChars': { min: 1, max: 1_000_000 },
  'chat.historyMessages': { min: 1, max: 500 },
  /** The largest image any of the protocols accepts (20 MiB). */
  'chat.imageMaxBytes': { min: 1, max: 20 * 1024 * 1024 },
} as const;

export type CostKey = keyof typeof COST_LIMITS;

/** Cost settings that are choices, not counts: restricted in untrusted workspaces, bounded by their enum or format. */
export const COST_CHOICES = [
  'chat.thinking',
  'tools.searchCount',
  'media.imageCount',
  'media.imageSize',
  'media.partialImages',
] as const;

export interface BoundedValue {
  value: number;
  /** Set when the value was over the bound and clamped: the sentence for the user. */
  clamped?: string;
}

/**
 * A cost setting's value: a whole number within its bounds. Below the minimum, or not a number,
 * is the default (as before); above the maximum is the maximum, with a sentence saying so.
 */
export function boundedCost(key: CostKey, raw: unknown, fallback: number): BoundedValue {
  const { min, max } = COST_LIMITS[key];
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < min) return { value: fallback };
  const whole = Math.floor(raw);
  if (whole <= max) return { value: whole };
  return {
    value: max,
    clamped: l10n.t(
      '"{0}" is {1}, above its limit of {2}; {2} is used. The limit keeps a setting (from a workspace, too) from making each request cost far more than intended.',
      `modelGateway.${key}`,
      String(raw),
      String(max),
    ),
  };
}
