/**
 * How a model completes code, before anything was tried: apart from fim.ts (and its schemas) so that
 * the Models view, which activation loads, can say it without loading the request code.
 */

/** How a model completes: `prompt` + `suffix`, FIM tokens inside `prompt`, or a chat request. */
export type CompletionPath = 'fimSuffix' | 'fimTokens' | 'chat';

/**
 * The path a model id suggests. DeepSeek's FIM takes its chat model (not the reasoner); Qwen's takes
 * its coder models. Every other model completes over chat; a refusal of FIM later moves a guessed FIM
 * model there too (see learning.ts).
 */
export function guessedPath(model: string): CompletionPath {
  const id = model.toLowerCase();
  if (/qwen/.test(id) && /coder/.test(id)) return 'fimTokens';
  if (/deepseek/.test(id) && !/reason|r1\b|-r1|think/.test(id)) return 'fimSuffix';
  return 'chat';
}
