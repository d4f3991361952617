import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { errorFromStreamPayload } from '../errorBody';
import type { HttpClient } from '../http';
import type { ChatEvent, FinishReason } from '../chat/events';
import { endedEarly, parseEventJson, runChat, type ChatStream, type StreamDecoder } from '../chat/transport';
import { parseWith } from '../validate';
import type { CompletionPath } from './paths';
import type { CompletionPrompt } from './prompt';

/**
 * Fill-in-the-middle over the gateway's `POST /v1/completions`, in the form the model's upstream
 * takes. new-api relays that route to DeepSeek's `/beta/completions`, which takes the text after
 * the cursor as `suffix` (https://api-docs.deepseek.com/guides/fim_completion), and to Bailian's
 * `/compatible-mode/v1/completions`, where a Qwen coder model reads the family's FIM tokens inside
 * `prompt` (https://www.alibabacloud.com/help/en/model-studio/completions).
 */

export const QWEN_FIM = { prefix: '<|fim_prefix|>', suffix: '<|fim_suffix|>', middle: '<|fim_middle|>' } as const;
/** Tokens a Qwen coder model may go on with after the middle: the end of text, the next file. */
const QWEN_STOPS = ['<|endoftext|>', '<|file_sep|>'];

/** Output tokens asked for: a line, or a few lines at a block start. */
export const MAX_TOKENS = { line: 48, lines: 160 } as const;

/**
 * Where the model should stop: at the end of the line for one line; at a blank line or a code
 * fence for several (Continue's autocomplete stops there too). OpenAI-style APIs take four at most.
 */
export function stopSequences(prompt: Pick<CompletionPrompt, 'multiline'>, path: CompletionPath): string[] {
  const own = prompt.multiline ? ['\n\n', '```'] : ['\n'];
  return [...own, ...(path === 'fimTokens' ? QWEN_STOPS : [])].slice(0, 4);
}

export interface FimOptions {
  model: string;
  stream: boolean;
}

/** The JSON body of the FIM request for `path` (`fimSuffix` or `fimTokens`). */
export function fimBody(path: Exclude<CompletionPath, 'chat'>, prompt: CompletionPrompt, opts: FimOptions): object {
  const before = prompt.header + prompt.prefix;
  const common = {
    model: opts.model,
    max_tokens: prompt.multiline ? MAX_TOKENS.lines : MAX_TOKENS.line,
    temperature: 0,
    stop: stopSequences(prompt, path),
    stream: opts.stream,
    ...(opts.stream ? { stream_options: { include_usage: true } } : {}),
  };
  return path === 'fimSuffix'
    ? { ...common, prompt: before, suffix: prompt.suffix }
    : { ...common, prompt: `${QWEN_FIM.prefix}${before}${QWEN_FIM.suffix}${prompt.suffix}${QWEN_FIM.middle}` };
}

const usageSchema = z.optional(
  z.nullable(z.looseObject({ prompt_tokens: z.optional(z.number()), completion_tokens: z.optional(z.number()) })),
);
const choiceSchema = z.looseObject({
  text: z.optional(z.nullable(z.string())),
  finish_reason: z.optional(z.nullable(z.string())),
});
const chunkSchema = z.looseObject({ choices: z.optional(z.nullable(z.array(choiceSchema))), usage: usageSchema });
const answerSchema = z.looseObject({ choices: z.array(choiceSchema), usage: usageSchema });

function usageEvents(usage: z.infer<typeof usageSchema>, out: ChatEvent[]): void {
  if (usage)
    out.push({ type: 'usage', usage: { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens } });
}

function finished(raw: string): ChatEvent {
  const known: Record<string, FinishReason> = { stop: 'stop', length: 'length', content_filter: 'contentFilter' };
  return { type: 'done', finishReason: known[raw] ?? 'other', raw };
}

/** Reads a streamed `/v1/completions` answer: `choices[0].text` deltas, usage, the finish. */
export function fimStreamDecoder(): StreamDecoder {
  let finish: string | undefined;
  return {
    message(message, out) {
      if (message.data === '[DONE]') {
        out.push(finished(finish ?? 'stop'));
        return true;
      }
      const json = parseEventJson(message);
      if (json.error) {
        out.push({ type: 'error', error: errorFromStreamPayload(json.error) });
        return true;
      }
      const chunk = parseWith(chunkSchema, json, l10n.t('A streamed completion event'));
      usageEvents(chunk.usage, out);
      const choice = chunk.choices?.[0];
      if (choice?.text) out.push({ type: 'textDelta', text: choice.text });
      if (choice?.finish_reason) finish = choice.finish_reason;
      return false;
    },
    end(out) {
      out.push(finish ? finished(finish) : { type: 'error', error: endedEarly('its finish reason and [DONE]') });
    },
  };
}

function parseAnswer(json: unknown): ChatEvent[] {
  const body = parseWith(answerSchema, json, l10n.t('The completion answer'));
  const out: ChatEvent[] = [];
  const choice = body.choices[0];
  if (choice?.text) out.push({ type: 'textDelta', text: choice.text });
  usageEvents(body.usage, out);
  out.push(finished(choice?.finish_reason ?? 'stop'));
  return out;
}

export interface FimRequest extends FimOptions {
  path: Exclude<CompletionPath, 'chat'>;
  prompt: CompletionPrompt;
  key?: string;
  signal?: AbortSignal;
  background?: { giveUp: () => void };
}

/** Sends one FIM request; its events are those of a chat answer (text deltas, usage, done or error). */
export function streamFim(http: HttpClient, req: FimRequest): ChatStream {
  return runChat(
    http,
    {
      model: req.model,
      protocol: 'chatCompletions',
      messages: [],
      stream: req.stream,
      ...(req.key !== undefined ? { key: req.key } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
      ...(req.background ? { background: req.background } : {}),
    },
    {
      url: http.endpoints.completions,
      body: fimBody(req.path, req.prompt, req),
      streamDecoder: fimStreamDecoder,
      parseJson: parseAnswer,
    },
  );
}
