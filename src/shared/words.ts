/**
 * A sentence kept as what it is made of: its English template (the key of the l10n bundles) and
 * its arguments, each a verbatim text, a number, or another such sentence. A message that is kept
 * (a failed answer in a stored conversation) keeps these words and is worded again when shown, so
 * it follows the display language of the day it is read, not of the day it was written.
 *
 * `words(…)` takes the arguments `l10n.t(…)` takes; `npm run l10n` extracts its literal template
 * the same way (test/support/l10nStrings.ts).
 */
import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';

export interface Words {
  readonly template: string;
  readonly args?: readonly Said[];
}

/** What a message says: words to be put in the display language, or a text shown as it came. */
export type Said = string | number | Words;

export const wordsSchema: z.ZodMiniType<Words> = z.object({
  template: z.string(),
  get args() {
    return z.optional(z.array(z.union([z.string(), z.number(), wordsSchema])));
  },
});

export function words(template: string, ...args: Said[]): Words {
  return args.length ? { template, args } : { template };
}

/** The words in the display language now; a verbatim text as it is. */
export function say(said: Said): string {
  if (typeof said !== 'object') return String(said);
  return l10n.t(said.template, ...(said.args ?? []).map((arg) => (typeof arg === 'object' ? say(arg) : arg)));
}
