import type { ModelSpec } from './types';
import { holeAnswer } from './fimModel';
import { echoReply, estimateTokens } from './routes/echo';
import type { OfferedTool, ToolTurns } from './toolTurns';
import { isRecord } from './values';

/**
 * What the double's "model" answers on the three chat routes. A scenario is picked by markers
 * typed into the last user message, so tests and people in the UI can trigger it by typing;
 * several markers combine (`[[reasoning]] [[slow:40]] explain tides`). Markers are removed from
 * the prompt before it is echoed. Unknown `[[...]]` text is left alone.
 */

export type ChatRouteProtocol = 'chatCompletions' | 'responses' | 'messages';

export interface ChatScenario {
  /** The marker as typed; `N`, `MS` and `:nested`/`:clean` are arguments. */
  marker: string;
  /** What the answer does, on which protocol, stream and non-stream. */
  effect: string;
}

/** Every scenario marker. Without one the answer is the plain echo (also the default for a prompt). */
export const CHAT_SCENARIOS: readonly ChatScenario[] = [
  {
    marker: '(none)',
    effect:
      'Plain answer `Echo from <model>: <prompt>` (markers removed), the same text on every protocol. Reasoning models that always think (deepseek-r1) ' +
      'and requests that ask for thinking on a reasoning model add reasoning first, each upstream by its own switch (thinkingRules.ts): Bailian `enable_thinking` ' +
      '(refused with 400 on a non-streamed call), GLM thinks unless `thinking.type` is `disabled`, Messages `thinking`, Responses `reasoning.summary`; ' +
      'OpenAI `reasoning_effort` / `reasoning.effort` only with the values the model takes, Anthropic `budget_tokens` only from 1024 and below max_tokens. ' +
      'Chat Completions with `enable_search: true` on an ali-owned model appends a sentence saying the web was searched. ' +
      'Responses with a `web_search` tool first streams a `web_search_call` item (in_progress, searching, completed; action search with the prompt as query) ' +
      'and appends a sentence naming two sources, each carrying a `url_citation` annotation. ' +
      'Images in the last user message (Chat `image_url` data URLs, Responses `input_image`, Messages `image` blocks) are checked as the upstream checks them ' +
      'and described from their bytes after the echo, one line each: `image 1: PNG 48x48, 2107 bytes, sha256 <first 12 hex>`.',
  },
  {
    marker: '[[reasoning]]',
    effect:
      'Reasoning first, on any model: `reasoning_content` deltas / a thinking block with signature / a reasoning item with summary deltas.',
  },
  {
    marker: '[[tool]]',
    effect:
      'A short preamble then a get_weather call with `{"city":…,"unit":"celsius"}` (city = capitalised word after "in"/"for"/"at", else Paris), streamed in argument fragments; finish tool_calls / tool_use.',
  },
  {
    marker: '[[tool:NAME]]',
    effect:
      'Also triggered by "call the tool NAME" or "use the tool NAME" in the prompt. When the request offers a function tool NAME (Chat `tools[].function`, Responses flat `function` tools, Messages `tools[].input_schema`), a call to it: ' +
      'arguments from `key=value` pairs in the prompt, typed by the tool schema, plus defaults for required properties (string: the city as for [[tool]], else "example"; ' +
      'number 1; boolean true; enum: its first value). A required tool choice (`required`, `{type:"any"}`, a named tool) calls without being asked, with no preamble. ' +
      'Streamed with the arguments in 8-character fragments, the id only in the first; Chat Completions leaves `index` out of every other fragment for models not owned by openai. ' +
      'Kimi models (owned by moonshot) get ids `NAME:N`. When the conversation ends with tool results (Chat `role: "tool"`, Responses `function_call_output`, ' +
      'Messages `tool_result` blocks) the answer is `The tool said: <result>` (several joined by ` | `; a Messages `is_error` result prefixed `error: `). ' +
      'A result that answers no call, or calls left without results, get the upstream’s 400; kimi-k2-thinking answers 400 ' +
      '"thinking is enabled but reasoning_content is missing in assistant tool call message at index N" for a tool-call turn sent back without `reasoning_content`; ' +
      'a Claude model with Messages `thinking` on answers Anthropic’s 400 when the assistant turn whose calls are answered does not start with its thinking block.',
  },
  {
    marker: '[[tools:A,B,…]]',
    effect:
      'An agent loop of several rounds: the first round calls the offered tool A, and each time the conversation since the prompt ends with the results of round N, ' +
      'the next round calls the N+1th tool of the list (arguments as for [[tool:NAME]]); after the last round the answer is `After N tool rounds. The tool said: <last results>`. ' +
      'A name matches an offered tool exactly, else one whose name ends with it when both are lower-cased without `_`/`-` (`read_file` finds `copilot_readFile`). ' +
      'A tool that is not offered ends the loop with an answer that says so.',
  },
  {
    marker: '[[long:N]]',
    effect:
      'The echo followed by N KB (1–4096) of markdown: headings, paragraphs, code fences, lists, tables. Streamed four words per chunk.',
  },
  {
    marker: '[[slow:MS]]',
    effect: 'Waits MS ms (≤ 60000) before every streamed frame after the first; non-stream answers wait MS once.',
  },
  {
    marker: '[[stall]]',
    effect: 'Stream: stops after three content chunks and keeps the connection open. Non-stream: never answers.',
  },
  {
    marker: '[[midstream-error]]',
    effect:
      'Stream: three content chunks, then the protocol’s in-band error (Chat `data: {"error":…}`; Messages `event: error` overloaded_error; Responses flat `error` event, ' +
      '`[[midstream-error:nested]]` for the nested shape) and the end of the body. Non-stream: a relayed upstream error (HTTP 500 server_error; Messages 529 overloaded_error).',
  },
  {
    marker: '[[error-in-200]]',
    effect:
      'HTTP 200 carrying only an error: Chat `data: {"error":…}` then `[DONE]`, Messages `event: error` (overloaded_error), Responses a nested `error` event; ' +
      'non-stream a 200 JSON error body (`{"error":…}`; Messages `{"type":"error","error":…}`). Nothing is charged.',
  },
  {
    marker: '[[cut]]',
    effect:
      'Stream: three content chunks, then the socket is destroyed (`[[cut:clean]]`: the HTTP body ends properly but without the protocol terminator). Non-stream: half the JSON body, then the socket is destroyed.',
  },
  {
    marker: '[[xss]]',
    effect:
      'The echo plus `<script>alert(1)</script>`, `<img src=x onerror=alert(1)>` and `[link](javascript:alert(1))`.',
  },
  {
    marker: '[[ping]]',
    effect:
      'Keep-alive frames between content chunks: `: PING` comments (Chat, Responses), `event: ping` (Messages, which always sends one ping after the first block start).',
  },
  {
    marker: '[[incomplete]]',
    effect:
      'The text stops halfway as if max tokens were hit: Chat finish_reason length, Messages stop_reason max_tokens, Responses `response.incomplete` (reason max_output_tokens). ' +
      'A real max_tokens / max_output_tokens smaller than the answer truncates the same way.',
  },
  {
    marker: '[[failed]]',
    effect:
      'Responses: three content chunks then `response.failed` (non-stream: a 200 Response with status failed). Other protocols: as [[midstream-error]].',
  },
];

export type Ending = 'complete' | 'stall' | 'cut' | 'cutClean' | 'midstreamError' | 'errorIn200' | 'failed';

export interface Scenarios {
  /** The markers found, as typed, in order. */
  markers: string[];
  reasoning: boolean;
  tool: boolean;
  /** `[[tool:NAME]]`: call the offered tool NAME. */
  toolName?: string;
  /** `[[tools:A,B]]`: one call per round, in this order. */
  toolChain?: string[];
  longKb: number;
  slowMs: number;
  ping: boolean;
  xss: boolean;
  incomplete: boolean;
  ending: Ending;
  /** Responses error event shape for midstream-error. */
  nestedError: boolean;
}

const MARKER = /\[\[([a-z0-9-]+)(?::([^\]\s]*))?\]\]/gi;
const KNOWN = new Set([
  'reasoning',
  'tool',
  'tools',
  'long',
  'slow',
  'stall',
  'midstream-error',
  'error-in-200',
  'cut',
  'xss',
  'ping',
  'incomplete',
  'failed',
]);

/** Reads the markers of a prompt and returns them with the prompt they leave behind. */
export function parseScenarios(prompt: string): { scenarios: Scenarios; prompt: string } {
  const s: Scenarios = {
    markers: [],
    reasoning: false,
    tool: false,
    longKb: 0,
    slowMs: 0,
    ping: false,
    xss: false,
    incomplete: false,
    ending: 'complete',
    nestedError: false,
  };
  const endings: Ending[] = [];
  const stripped = prompt.replace(MARKER, (whole: string, rawName: string, arg: string | undefined) => {
    const name = rawName.toLowerCase();
    if (!KNOWN.has(name)) return whole;
    s.markers.push(whole);
    const n = Number(arg);
    switch (name) {
      case 'reasoning':
        s.reasoning = true;
        break;
      case 'tool':
        if (arg) s.toolName = arg;
        else s.tool = true;
        break;
      case 'tools':
        s.toolChain = (arg ?? '').split(',').filter((name) => name !== '');
        break;
      case 'long':
        s.longKb = Number.isFinite(n) && n > 0 ? Math.min(Math.floor(n), 4096) : 1;
        break;
      case 'slow':
        s.slowMs = Number.isFinite(n) && n > 0 ? Math.min(Math.floor(n), 60_000) : 200;
        break;
      case 'ping':
        s.ping = true;
        break;
      case 'xss':
        s.xss = true;
        break;
      case 'incomplete':
        s.incomplete = true;
        break;
      case 'stall':
        endings.push('stall');
        break;
      case 'cut':
        endings.push(arg === 'clean' ? 'cutClean' : 'cut');
        break;
      case 'midstream-error':
        endings.push('midstreamError');
        s.nestedError = arg === 'nested';
        break;
      case 'error-in-200':
        endings.push('errorIn200');
        break;
      case 'failed':
        endings.push('failed');
        break;
    }
    return '';
  });
  // When several endings are asked for, the one that cuts earliest wins.
  const priority: Ending[] = ['errorIn200', 'cut', 'cutClean', 'stall', 'midstreamError', 'failed'];
  s.ending = priority.find((e) => endings.includes(e)) ?? 'complete';
  return { scenarios: s, prompt: stripped.replace(/[ \t]{2,}/g, ' ').trim() };
}

export interface ToolCallPlan {
  name: string;
  /** The JSON text of the arguments. */
  arguments: string;
}

/** One answer, independent of the protocol that will carry it. */
export interface ChatPlan {
  scenarios: Scenarios;
  /** The prompt without markers. */
  prompt: string;
  /** '' when the answer has no reasoning. */
  reasoning: string;
  text: string;
  toolCall?: ToolCallPlan;
  /** The answer stopped at a token limit. */
  truncated: boolean;
  /** Streamed text chunks, concatenating to `text` (and `reasoning`). */
  textChunks: string[];
  reasoningChunks: string[];
  argumentChunks: string[];
  usage: PlanUsage;
  /** The web search the answer did (Responses `web_search` tool): its query and the sources it read. */
  search?: { query: string; sources: string[] };
  /** Citations into `text` (only those still inside it after a token-limit cut). */
  citations: PlanCitation[];
}

export interface PlanUsage {
  promptTokens: number;
  /** Of the prompt tokens, those read from the prompt cache, and those written to it (promptCache.ts). */
  cachedTokens?: number;
  cacheWriteTokens?: number;
  completionTokens: number;
  reasoningTokens: number;
  totalTokens: number;
}

export interface PlanInput {
  model: ModelSpec;
  /** The last user message, markers included. */
  lastUser: string;
  /** Everything the prompt-token estimate counts (system, instructions, every message). */
  promptText: string;
  /** The request asked a reasoning model to think, in its upstream's form (thinkingRules.ts). */
  thinkingRequested: boolean;
  /** max_tokens / max_output_tokens; 0 = none. */
  maxTokens: number;
  /**
   * `true`: Chat Completions `enable_search: true` on an ali-owned model, the answer says it
   * searched. `cited`: the Responses `web_search` tool, the answer names sources with citations.
   */
  webSearch?: boolean | 'cited';
  /** One line per image of the last user message, as the double read it from the bytes. */
  imageFacts?: string[];
  /** The function tools offered and the tool round trip so far (see toolTurns.ts). */
  toolTurns?: ToolTurns;
}

/** A `url_citation` annotation: the span of the answer text that cites `url`. */
export interface PlanCitation {
  url: string;
  title: string;
  start: number;
  end: number;
}

/** Models that always think, whatever the request says (DeepSeek R1, QwQ, "-thinking" variants). */
export function alwaysReasons(model: ModelSpec): boolean {
  return /(^|[-_])r1($|[-_])|reasoner|qwq|thinking/i.test(model.id);
}

export function planAnswer(input: PlanInput): ChatPlan {
  const { scenarios, prompt } = parseScenarios(input.lastUser);
  const model = input.model;
  const withReasoning =
    scenarios.reasoning || alwaysReasons(model) || (input.thinkingRequested && model.reasoning === true);

  let text: string;
  let toolCall: ToolCallPlan | undefined;
  const turns = input.toolTurns;
  const asked =
    turns && turns.choice.mode !== 'none' && !turns.results.length
      ? askedTool(turns, scenarios.toolName, prompt)
      : undefined;
  const chain =
    scenarios.toolChain && turns && turns.choice.mode !== 'none' ? chainStep(turns, scenarios.toolChain) : undefined;
  if (chain?.tool) {
    text = `Round ${turns?.roundsSincePrompt ?? 0}: calling ${chain.tool.name}.`;
    toolCall = { name: chain.tool.name, arguments: JSON.stringify(argumentsFor(chain.tool, prompt)) };
  } else if (chain?.missing) {
    text = `The tool ${chain.missing} is not offered.`;
  } else if (chain && turns?.results.length) {
    text = `After ${turns.roundsSincePrompt} tool rounds. The tool said: ${turns.results.join(' | ')}`;
  } else if (turns?.results.length) {
    text = `The tool said: ${turns.results.join(' | ')}`;
  } else if (scenarios.tool) {
    const city = cityOf(prompt);
    text = `Let me look up the weather in ${city}.`;
    toolCall = { name: 'get_weather', arguments: JSON.stringify({ city, unit: 'celsius' }) };
  } else if (asked) {
    text = turns?.choice.mode === 'required' ? '' : `Calling ${asked.name}.`;
    toolCall = { name: asked.name, arguments: JSON.stringify(argumentsFor(asked, prompt)) };
  } else {
    text = holeAnswer(model.id, prompt) ?? echoReply(model.id, prompt);
  }
  if (scenarios.xss) {
    text +=
      '\n\nSome markup that must stay inert: <script>alert(1)</script> and <img src=x onerror=alert(1)> and [link](javascript:alert(1)).';
  }
  if (input.imageFacts?.length) text += '\n\n' + input.imageFacts.map((line) => `- ${line}`).join('\n');
  if (scenarios.longKb > 0) text += '\n\n' + longMarkdown(scenarios.longKb * 1024, prompt);
  let search: ChatPlan['search'];
  let cited: PlanCitation[] = [];
  if (input.webSearch === 'cited') {
    const sources = searchSources(prompt);
    search = { query: prompt, sources: sources.map((s) => s.url) };
    text += `\n\nI searched the web for "${prompt}". `;
    cited = sources.map((source, i) => {
      const start = text.length;
      text += source.title;
      const citation = { url: source.url, title: source.title, start, end: text.length };
      text += i === sources.length - 1 ? ' agree.' : ' and ';
      return citation;
    });
  } else if (input.webSearch) {
    text += `\n\nI searched the web for "${prompt}" and used the results in this answer.`;
  }

  let reasoning = '';
  if (withReasoning) {
    reasoning = chain?.tool
      ? `Round ${turns?.roundsSincePrompt ?? 0} of the loop: the tool ${chain.tool.name} comes next, so I call it.`
      : turns?.results.length
        ? `The tool answered, so I report what it said.`
        : scenarios.tool
          ? `The user wrote "${prompt}". They want the current weather, so I should call get_weather with the city and report back.`
          : asked
            ? `The user wrote "${prompt}". The tool ${asked.name} fits, so I call it.`
            : `The user wrote "${prompt}". A short, direct reply is best here, so I will answer by echoing the message back.`;
  }

  let truncated = false;
  if (scenarios.incomplete) {
    const words = wordsOf(text);
    text = words.slice(0, Math.max(1, Math.floor(words.length / 2))).join('');
    toolCall = undefined;
    truncated = true;
  }
  if (input.maxTokens > 0 && completionTokens(reasoning, text, toolCall) > input.maxTokens) {
    const budget = input.maxTokens * 4;
    if (reasoning.length >= budget) {
      reasoning = cutAtWord(reasoning, budget);
      text = '';
    } else {
      text = cutAtWord(text, budget - reasoning.length);
    }
    toolCall = undefined;
    truncated = true;
  }

  const perChunk = scenarios.longKb > 0 ? 4 : 1;
  const promptTokens = estimateTokens(input.promptText);
  const reasoningTokens = reasoning ? estimateTokens(reasoning) : 0;
  const completion = completionTokens(reasoning, text, toolCall);
  return {
    scenarios,
    prompt,
    reasoning,
    text,
    ...(toolCall ? { toolCall } : {}),
    truncated,
    textChunks: chunkWords(text, perChunk),
    reasoningChunks: chunkWords(reasoning, 1),
    argumentChunks: toolCall ? chunkChars(toolCall.arguments, 8) : [],
    usage: { promptTokens, completionTokens: completion, reasoningTokens, totalTokens: promptTokens + completion },
    ...(search ? { search } : {}),
    citations: cited.filter((c) => c.end <= text.length),
  };
}

function cityOf(prompt: string): string {
  return /\b(?:in|for|at)\s+([A-Z][\p{L}-]+)/u.exec(prompt)?.[1] ?? 'Paris';
}

/** The tool of a `[[tools:…]]` loop that this round calls; nothing once every round is done. */
function chainStep(turns: ToolTurns, names: string[]): { tool?: OfferedTool; missing?: string } | undefined {
  const name = names[turns.roundsSincePrompt];
  if (name === undefined) return {};
  const plain = (n: string): string => n.toLowerCase().replace(/[_-]/g, '');
  const tool = turns.tools.find((t) => t.name === name) ?? turns.tools.find((t) => plain(t.name).endsWith(plain(name)));
  return tool ? { tool } : { missing: name };
}

/** The offered tool the request names (a forced choice), the prompt asks for, or the first one when a call is required. */
function askedTool(turns: ToolTurns, marker: string | undefined, prompt: string): OfferedTool | undefined {
  const find = (name: string | undefined) => (name ? turns.tools.find((t) => t.name === name) : undefined);
  if (turns.choice.name) return find(turns.choice.name);
  const named = find(marker) ?? find(/\b(?:call|use) the tool [`"']?([\w.-]+)/i.exec(prompt)?.[1]);
  return named ?? (turns.choice.mode === 'required' ? turns.tools[0] : undefined);
}

/** Arguments for a call: `key=value` pairs of the prompt, typed by the schema, and defaults for required properties. */
function argumentsFor(tool: OfferedTool, prompt: string): Record<string, unknown> {
  const properties = isRecord(tool.schema.properties) ? tool.schema.properties : {};
  const required = Array.isArray(tool.schema.required) ? tool.schema.required : [];
  const given = new Map<string, string>();
  for (const m of prompt.matchAll(/([A-Za-z_]\w*)=(?:"([^"]*)"|(\S+))/g)) given.set(m[1] ?? '', m[2] ?? m[3] ?? '');
  const args: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(properties)) {
    const raw = given.get(key);
    if (raw === undefined && !required.includes(key)) continue;
    const type = isRecord(spec) ? spec.type : undefined;
    const choices = isRecord(spec) && Array.isArray(spec.enum) ? spec.enum : undefined;
    if (type === 'number' || type === 'integer') {
      const n = Number(raw);
      args[key] = raw !== undefined && Number.isFinite(n) ? n : 1;
    } else if (type === 'boolean') {
      args[key] = raw === undefined ? true : raw === 'true';
    } else if (raw !== undefined) {
      args[key] = raw;
    } else {
      args[key] = choices?.[0] ?? (key === 'city' ? cityOf(prompt) : 'example');
    }
  }
  return args;
}

/** Two made-up but stable sources for a query (the double never reaches the internet). */
export function searchSources(query: string): Array<{ url: string; title: string }> {
  const slug =
    query
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'query';
  return [
    { url: `https://news.example.com/${slug}`, title: 'Example News' },
    { url: `https://encyclopedia.example.org/wiki/${slug}`, title: 'Example Encyclopedia' },
  ];
}

function completionTokens(reasoning: string, text: string, toolCall: ToolCallPlan | undefined): number {
  const visible = text + (toolCall ? toolCall.name + toolCall.arguments : '');
  return (reasoning ? estimateTokens(reasoning) : 0) + estimateTokens(visible);
}

/** Words with their trailing whitespace (leading whitespace is a piece of its own); they concatenate back. */
function wordsOf(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

export function chunkWords(text: string, perChunk: number): string[] {
  const words = wordsOf(text);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += perChunk) out.push(words.slice(i, i + perChunk).join(''));
  return out;
}

function chunkChars(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function cutAtWord(text: string, maxChars: number): string {
  let out = '';
  for (const w of wordsOf(text)) {
    if (out.length + w.length > maxChars) break;
    out += w;
  }
  return out || text.slice(0, Math.max(1, maxChars));
}

/** Characters the estimator counts for the pieces a partial stream emitted. */
export function tokensOf(emitted: string): number {
  return emitted ? estimateTokens(emitted) : 0;
}

/** Deterministic markdown of at least `chars` characters, varied by the prompt. */
function longMarkdown(chars: number, seedText: string): string {
  const topics = ['streaming', 'rendering', 'caching', 'parsing', 'billing', 'retries', 'timeouts', 'proxies'];
  let seed = 0;
  for (const c of seedText) seed = (seed * 31 + (c.codePointAt(0) ?? 0)) >>> 0;
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < chars; i++) {
    const topic = topics[(seed + i) % topics.length] ?? 'notes';
    const section =
      `## Section ${i + 1}: ${topic}\n\n` +
      `This paragraph explains **${topic}** in part ${i + 1}. It has *emphasis*, \`inline code\` and enough words to wrap ` +
      `across several lines in a narrow chat view, so that layout work is measured as well as parsing.\n\n` +
      `- first point about ${topic}\n- second point with a [link](https://example.com/${topic}/${i})\n  - a nested item\n- third point\n\n` +
      `1. step one\n2. step two\n3. step three\n\n` +
      '```ts\n' +
      `export function ${topic}Step${i}(input: string): number {\n  const parts = input.split(',');\n  return parts.length * ${i + 1};\n}\n` +
      '```\n\n' +
      `| key | value | note |\n| --- | ---: | :---: |\n| ${topic} | ${i * 7} | ok |\n| seed | ${(seed + i) % 97} | fine |\n\n` +
      `> A quote closing section ${i + 1}.\n\n`;
    parts.push(section);
    size += section.length;
  }
  return parts.join('').trimEnd();
}
