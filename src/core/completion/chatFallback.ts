import type { ChatMessage } from '../chat/events';
import type { CompletionPrompt } from './prompt';

/**
 * Completion through a chat model (Kimi and GLM take no FIM request): one message holding the file
 * with a marked hole, and an instruction to answer with the hole's text only, the "hole filler"
 * form of Continue's autocomplete templates (continuedev/continue
 * core/autocomplete/templating/AutocompleteTemplate.ts). Chat models still wrap code in fences,
 * repeat the line they were given or run on into the code after the hole; `cleanChatAnswer`
 * takes those off.
 */

export const HOLE = '<FILL_HERE>';

export const CHAT_SYSTEM =
  'You complete code. The user sends a file with one hole marked ' +
  HOLE +
  '. Answer with only the text that goes in the hole: no explanation, no Markdown fences, ' +
  'nothing that comes before or after the hole. ';

/** The instruction for the size asked for. */
function sizeRule(multiline: boolean): string {
  return multiline
    ? 'Fill in at most a few lines that complete the block at the hole.'
    : 'Fill in the rest of the line at the hole only: never more than one line.';
}

export function chatCompletionMessages(prompt: CompletionPrompt): { system: string; messages: ChatMessage[] } {
  const file = `${prompt.header}${prompt.prefix}${HOLE}${prompt.suffix}`;
  return {
    system: CHAT_SYSTEM + sizeRule(prompt.multiline),
    messages: [{ role: 'user', content: `File ${prompt.path} (${prompt.language}):\n${file}` }],
  };
}

/**
 * A chat answer as the text of the hole: fences and the hole-filler tags taken off, a repeated
 * start of the line (or of the lines before the hole) and a repeated start of the text after it
 * dropped. Line endings become `\n`.
 */
export function cleanChatAnswer(answer: string, prompt: Pick<CompletionPrompt, 'linePrefix' | 'prefix'>): string {
  let text = answer.replace(/\r\n?/g, '\n');
  const fenced = /^\s*```[^\n]*\n([\s\S]*?)\n?```\s*$/.exec(text);
  if (fenced) text = fenced[1] ?? '';
  text = text.replace(/^\s*<COMPLETION>\n?/, '').replace(/\n?<\/COMPLETION>\s*$/, '');
  text = text.split(HOLE).join('');
  return withoutEchoedPrefix(text, prompt);
}

/** `text` without a start that repeats what comes before the cursor (its line, or its last lines). */
function withoutEchoedPrefix(text: string, prompt: Pick<CompletionPrompt, 'linePrefix' | 'prefix'>): string {
  const lines = prompt.prefix.split('\n');
  // The longest end of the prefix (whole lines plus the cursor's line) that the answer starts with.
  for (let n = Math.min(lines.length, 20); n >= 1; n--) {
    const tail = lines.slice(-n).join('\n');
    if (tail.trim() && text.startsWith(tail)) return text.slice(tail.length);
  }
  const line = prompt.linePrefix.trimStart();
  if (line && text.trimStart().startsWith(line)) return text.trimStart().slice(line.length);
  return text;
}
