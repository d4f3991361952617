/**
 * How numbers, byte sizes, dates and durations are shown to the user, in VS Code's display language.
 * One module for core, host and both webviews (it imports nothing), so a size reads the same in a
 * notification, a chat note and a Media Studio card. The host sets the language once at activation
 * (`vscode.env.language`), each webview from what the host hands it; tests run in English.
 */

/** The tag as set; checked against what Intl supports on first use (see displayLocale). */
let wantedLocale = 'en';
let resolvedLocale: string | undefined = 'en';
const cache = new Map<string, Intl.NumberFormat>();

/**
 * Sets the display language (a BCP 47 tag such as `en`, `zh-cn`); an unknown tag falls back to English.
 * The check waits for the first number or date shown: it is the process's first use of Intl, which
 * loads ICU's data (some 20 ms in Node), and the host sets the language during activation.
 */
export function setDisplayLocale(tag: string | undefined): void {
  wantedLocale = tag?.trim() || 'en';
  resolvedLocale = undefined;
  cache.clear();
}

function displayLocale(): string {
  if (resolvedLocale === undefined) {
    try {
      resolvedLocale = Intl.NumberFormat.supportedLocalesOf([wantedLocale]).length ? wantedLocale : 'en';
    } catch {
      resolvedLocale = 'en';
    }
  }
  return resolvedLocale;
}

function numberFormat(maximumFractionDigits: number, minimumFractionDigits = 0): Intl.NumberFormat {
  const key = `${maximumFractionDigits}/${minimumFractionDigits}`;
  let format = cache.get(key);
  if (!format) {
    format = new Intl.NumberFormat(displayLocale(), { maximumFractionDigits, minimumFractionDigits });
    cache.set(key, format);
  }
  return format;
}

/** `12,345` (or the display language's grouping); at most `fractionDigits` decimals. */
export function formatNumber(n: number, fractionDigits = 0): string {
  return numberFormat(fractionDigits).format(n);
}

/** Money with two decimals: `0.10`. */
export function formatAmount(n: number): string {
  return numberFormat(2, 2).format(n);
}

const UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/**
 * `512 B`, `2.1 KiB`, `48 KiB`, `20 MiB`, `20.1 MiB`: binary units (the limits the gateway and the
 * protocols document are binary: 5 MiB per Messages image, 20 MiB per upload), at most one decimal
 * below a hundred units. Messages about a limit give the exact byte count beside it.
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${formatNumber(Math.max(0, Math.round(bytes)))} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${formatNumber(value, value < 100 ? 1 : 0)} ${UNITS[unit]}`;
}

/** A calendar day, such as the day a document was written. */
export function formatDate(time: number | Date): string {
  return new Date(time).toLocaleDateString(displayLocale());
}

/** A point in time: only the time when it is today, else date and time. */
export function formatWhen(time: number | Date, now: Date = new Date()): string {
  const d = new Date(time);
  const clock = d.toLocaleTimeString(displayLocale(), { hour: '2-digit', minute: '2-digit' });
  return d.toDateString() === now.toDateString() ? clock : `${d.toLocaleDateString(displayLocale())} ${clock}`;
}

/** `45 s`, `3 min 20 s`, `1 h 5 min` (unit symbols read the same in English and Chinese UIs). */
/**
 * The unit words of a duration. This module imports nothing (no l10n), so the few languages it
 * speaks are here; any other language reads the short international symbols.
 */
interface DurationUnits {
  s: string;
  min: string;
  h: string;
  days: string;
}

const DURATION_UNITS: Record<string, DurationUnits> = {
  en: { s: 's', min: 'min', h: 'h', days: 'days' },
  zh: { s: '秒', min: '分钟', h: '小时', days: '天' },
};

function durationUnits(): DurationUnits {
  return DURATION_UNITS[displayLocale().slice(0, 2).toLowerCase()] ?? { s: 's', min: 'min', h: 'h', days: 'days' };
}

/** How long ago, in one unit: `40 s`, `12 min`, `5 h`, `3 days` (`40 秒`… in Chinese). */
export function formatAge(seconds: number): string {
  const u = durationUnits();
  if (seconds < 90) return `${formatNumber(seconds)} ${u.s}`;
  if (seconds < 90 * 60) return `${formatNumber(Math.round(seconds / 60))} ${u.min}`;
  if (seconds < 48 * 3600) return `${formatNumber(Math.round(seconds / 3600))} ${u.h}`;
  return `${formatNumber(Math.round(seconds / 86400))} ${u.days}`;
}

export function formatDuration(ms: number): string {
  const u = durationUnits();
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${formatNumber(seconds)} ${u.s}`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60)
    return seconds % 60
      ? `${formatNumber(minutes)} ${u.min} ${formatNumber(seconds % 60)} ${u.s}`
      : `${formatNumber(minutes)} ${u.min}`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60
    ? `${formatNumber(hours)} ${u.h} ${formatNumber(minutes % 60)} ${u.min}`
    : `${formatNumber(hours)} ${u.h}`;
}

/** `950`, `1.2K`, `15K` in English, `1.2万` in Chinese: a count shown where space is short. */
export function formatCompactNumber(n: number): string {
  return new Intl.NumberFormat(displayLocale(), { notation: 'compact', maximumFractionDigits: 1 }).format(n);
}
