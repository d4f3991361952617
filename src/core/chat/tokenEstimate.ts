/**
 * A token estimate that needs no tokenizer download: VS Code asks for counts often (to fit history
 * into `maxInputTokens`), prompt caching asks whether a prefix passes a family's minimum, and the
 * gateway's models use different tokenizers anyway. English and code run at about four characters
 * per token in BPE tokenizers (OpenAI's rule of thumb, "What are tokens and how to count them"),
 * while CJK characters are mostly one token or more each, so they are counted one per character.
 */

/** Han, Hiragana, Katakana, Hangul and CJK punctuation / full-width forms. */
const CJK = /[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/gu;

export function estimateTokens(text: string): number {
  if (!text) return 0;
  const cjk = text.match(CJK)?.length ?? 0;
  const rest = text.length - cjk;
  return cjk + Math.ceil(rest / 4);
}
