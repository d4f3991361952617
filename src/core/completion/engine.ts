import { streamChat } from '../chat/chat';
import type { ChatEvent, Usage } from '../chat/events';
import type { ThinkingRequest } from '../chat/thinking';
import type { ChatStream } from '../chat/transport';
import type { GatewayError } from '../errors';
import type { HttpClient } from '../http';
import type { RefusedProtocolStore } from '../models/protocolFallback';
import type { ChatProtocol } from '../models/types';
import { chatCompletionMessages, cleanChatAnswer } from './chatFallback';
import { MAX_TOKENS, streamFim } from './fim';
import type { CompletionPath } from './paths';
import { completionPath, FIM_ROUTE, isFimRefusal } from './learning';
import type { CompletionPrompt } from './prompt';

/**
 * One completion request, from the prompt to the model's raw text: over FIM or chat as the model's
 * path says; a FIM refusal by the relay is remembered (learning.ts) and the same completion asked
 * once more over chat. The answer streams: `firstLine` resolves as soon as one line is complete,
 * so a caller can show it while the rest arrives.
 */

export interface CompletionTarget {
  model: string;
  /** The key the model is called with (keys.ts `keyForModel`); the first key when absent. */
  key?: string;
  /** The model's chat protocol, for the chat path (its first listed one). */
  chatProtocol: ChatProtocol;
  /** For the chat path: thinking off where the model can be told so (thinking.ts `thinkingRequest`). */
  thinking?: ThinkingRequest;
}

export interface EngineDeps {
  http: HttpClient;
  refusals: RefusedProtocolStore;
  /** The gateway origin in use, which refusals are remembered under. */
  origin: () => string;
  log?: (line: string) => void;
}

export interface CompletionAnswer {
  /** The model's text (for the chat path, cleaned of fences and echoes), lines joined with `\n`. */
  text: string;
  path: CompletionPath;
  usage?: Usage;
  /** What failed, after whatever text arrived (a cancel included). */
  error?: GatewayError;
}

export interface CompletionRun {
  /** The text up to the end of its first complete line, or the whole answer if it has no line break. */
  firstLine: Promise<string>;
  done: Promise<CompletionAnswer>;
}

export function requestCompletion(
  deps: EngineDeps,
  target: CompletionTarget,
  prompt: CompletionPrompt,
  signal: AbortSignal,
  giveUp: () => void,
): CompletionRun {
  let lineSeen: (text: string) => void = () => undefined;
  const firstLine = new Promise<string>((resolve) => (lineSeen = resolve));
  const done = (async () => {
    const refused = await deps.refusals.load(deps.origin()).catch(() => ({}));
    const path = completionPath(target.model, refused);
    let answer = await readRun(open(deps.http, target, prompt, path, signal, giveUp), path, prompt, lineSeen);
    if (path !== 'chat' && answer.error && !answer.text && isFimRefusal(answer.error)) {
      deps.log?.(`completion: the gateway refused FIM for ${target.model} (${answer.error.message}); using chat`);
      await deps.refusals.add(deps.origin(), target.model, FIM_ROUTE).catch(() => undefined);
      answer = await readRun(open(deps.http, target, prompt, 'chat', signal, giveUp), 'chat', prompt, lineSeen);
    }
    lineSeen(answer.text);
    return answer;
  })();
  return { firstLine, done };
}

function open(
  http: HttpClient,
  target: CompletionTarget,
  prompt: CompletionPrompt,
  path: CompletionPath,
  signal: AbortSignal,
  giveUp: () => void,
): ChatStream {
  const common = {
    model: target.model,
    ...(target.key !== undefined ? { key: target.key } : {}),
    stream: true,
    signal,
    background: { giveUp },
  };
  if (path !== 'chat') return streamFim(http, { ...common, path, prompt });
  const { system, messages } = chatCompletionMessages(prompt);
  return streamChat(http, {
    ...common,
    protocol: target.chatProtocol,
    system,
    messages,
    maxTokens: prompt.multiline ? MAX_TOKENS.lines : MAX_TOKENS.line,
    temperature: 0,
    ...(target.thinking ? { thinking: target.thinking } : {}),
  });
}

async function readRun(
  stream: ChatStream,
  path: CompletionPath,
  prompt: CompletionPrompt,
  lineSeen: (text: string) => void,
): Promise<CompletionAnswer> {
  let text = '';
  let usage: Usage | undefined;
  let error: GatewayError | undefined;
  const seen = (t: string) => (path === 'chat' ? cleanChatAnswer(t, prompt) : t);
  for await (const batch of stream.batches()) {
    for (const e of batch as ChatEvent[]) {
      if (e.type === 'textDelta') text += e.text;
      else if (e.type === 'usage') usage = e.usage;
      else if (e.type === 'error') error = e.error;
    }
    const clean = seen(text);
    const end = clean.indexOf('\n');
    // A chat answer's first line may still be a fence being opened: only code lines count.
    if (end >= 0 && (path !== 'chat' || !clean.startsWith('```'))) lineSeen(clean.slice(0, end + 1));
  }
  return { text: seen(text), path, ...(usage ? { usage } : {}), ...(error ? { error } : {}) };
}
