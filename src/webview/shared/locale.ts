/**
 * The display language and its translations, which the host writes into the page
 * (webviewShell.ts) so they apply before the first paint and after every reload. Configured once,
 * before the app renders anything.
 */
import * as l10n from '@vscode/l10n';
import { setDisplayLocale } from '../../shared/format';

export function applyLocale(): void {
  const element = document.getElementById('locale');
  let language = 'en';
  let bundle: Record<string, string> = {};
  try {
    const parsed = JSON.parse(element?.textContent ?? '{}') as { language?: unknown; bundle?: unknown };
    if (typeof parsed.language === 'string') language = parsed.language;
    if (parsed.bundle && typeof parsed.bundle === 'object') {
      bundle = Object.fromEntries(
        Object.entries(parsed.bundle).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
    }
  } catch (err) {
    console.warn('[Model Gateway] the page carries no readable locale; showing English.', err);
  }
  l10n.config({ contents: bundle });
  setDisplayLocale(language);
  document.documentElement.lang = language;
}
