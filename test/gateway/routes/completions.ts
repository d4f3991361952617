import { preConsume, textPreConsumeQuota } from '../billing';
import { parseScenarios, type ChatPlan } from '../chatScenarios';
import { FIM_TOKENS, fimForm, middleFor } from '../fimModel';
import type { GatewayContext, Route } from '../route';
import { dataFrame, type Step } from '../sse';
import type { CompletionRecord } from '../types';
import { isRecord, numberOr } from '../values';
import { nonStreamPrelude, settle, streamAnswer } from './answer';
import { estimateTokens, randomId, unixSeconds } from './echo';

/**
 * POST /v1/completions, which new-api relays as fill-in-the-middle: to DeepSeek's /beta/completions
 * (`prompt` + `suffix`) and to Bailian's compatible-mode completions (Qwen coder models, FIM tokens
 * inside `prompt`). A model whose upstream has no such route refuses it the way new-api relays that:
 * Moonshot's channel forwards to the upstream's `/v1/completions`, which does not exist, and its 404
 * is relayed (`Invalid URL (POST /v1/completions)`, the OpenAI-style wording; Moonshot's own wording
 * is not verified); the Zhipu channel has no conversion for the mode (500 `convert_request_failed`,
 * "not implemented"); an OpenAI chat model is refused by OpenAI itself ("This is a chat model and not
 * supported in the v1/completions endpoint"). Answers stream as `text_completion` chunks with new-api's
 * usage tail; `stop` and `max_tokens` are honoured, and scenario markers in the prompt work as on chat.
 */
async function completions(ctx: GatewayContext): Promise<void> {
  const parsed = ctx.http.json();
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : {};
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  // new-api's text handler refuses an empty prompt before relaying (relay-text.go).
  if (!prompt) return ctx.relayError(500, 'invalid_request', 'field prompt is required');
  const model = ctx.model;
  const maxTokens = numberOr(body.max_tokens, 16);
  const suffixField = typeof body.suffix === 'string' ? body.suffix : undefined;
  const promptTokens = estimateTokens(prompt + (suffixField ?? ''));
  if (!preConsume(ctx, textPreConsumeQuota(model, promptTokens, maxTokens))) return;
  const form = fimForm(model);
  if (form === 'none') return refuse(ctx);
  const { prefix, suffix } = split(form, prompt, suffixField);
  const record: CompletionRecord = {
    model: model.id,
    form,
    prefix,
    suffix,
    stream: body.stream === true,
    text: '',
    aborted: false,
  };
  ctx.http.entry.completion = record;
  const res = ctx.http.res;
  res.on('close', () => {
    if (!res.writableFinished) record.aborted = true;
  });
  const { scenarios } = parseScenarios(prefix);
  let text = cutAtStop(middleFor(model.id, prefix), body.stop);
  let finish = 'stop';
  if (estimateTokens(text) > maxTokens) {
    text = text.slice(0, maxTokens * 4);
    finish = 'length';
  }
  record.text = text;
  const completion = text ? estimateTokens(text) : 0;
  const plan: ChatPlan = {
    scenarios,
    prompt,
    reasoning: '',
    text,
    truncated: finish === 'length',
    textChunks: text.match(/[^\s]*\s*/g)?.filter(Boolean) ?? [],
    reasoningChunks: [],
    argumentChunks: [],
    usage: { promptTokens, completionTokens: completion, reasoningTokens: 0, totalTokens: promptTokens + completion },
    citations: [],
  };
  const answer = { record, plan, finish, id: randomId('cmpl-'), created: unixSeconds() };
  if (body.stream === true) return streamed(ctx, answer);
  if (!(await nonStreamPrelude(ctx, plan))) return;
  const chatRecord = asChatRecord(record);
  settle(ctx, plan, chatRecord, true, text);
  record.chargedQuota = chatRecord.chargedQuota;
  ctx.http.sendJson(200, {
    id: answer.id,
    object: 'text_completion',
    created: answer.created,
    model: model.id,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
    usage: usageOf(plan),
  });
}

interface Answer {
  record: CompletionRecord;
  plan: ChatPlan;
  finish: string;
  id: string;
  created: number;
}

async function streamed(ctx: GatewayContext, a: Answer): Promise<void> {
  const chunk = (text: string, finish: string | null) => ({
    id: a.id,
    object: 'text_completion',
    created: a.created,
    model: a.record.model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
  });
  const usageChunk = { id: a.id, object: 'text_completion', created: a.created, model: a.record.model, choices: [] };
  const steps: Step[] = a.plan.textChunks.map((piece) => ({ frame: dataFrame(chunk(piece, null)), content: piece }));
  steps.push({ frame: dataFrame(chunk('', a.finish)) });
  steps.push({ frame: dataFrame({ ...usageChunk, usage: usageOf(a.plan) }) });
  steps.push({ frame: 'data: [DONE]\n\n' });
  const chatRecord = asChatRecord(a.record);
  await streamAnswer(ctx, a.plan, chatRecord, steps, { errorFrames: () => ['data: [DONE]\n\n'] });
  a.record.chargedQuota = chatRecord.chargedQuota;
}

/** The record `settle` writes the charge into (it is shared with the chat routes). */
function asChatRecord(r: CompletionRecord): Parameters<typeof settle>[2] {
  return {
    protocol: 'chatCompletions',
    stream: r.stream,
    model: r.model,
    markers: [],
    text: r.text,
    reasoning: '',
    toolCalls: [],
    usage: { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, totalTokens: 0 },
    finish: 'stop',
    ending: 'complete',
  };
}

function usageOf(plan: ChatPlan): Record<string, number> {
  const u = plan.usage;
  return { prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.totalTokens };
}

/** The text before and after the cursor, as the model's form carries them. */
function split(
  form: 'suffix' | 'tokens',
  prompt: string,
  suffix: string | undefined,
): { prefix: string; suffix: string } {
  if (form === 'suffix') return { prefix: prompt, suffix: suffix ?? '' };
  const start = prompt.indexOf(FIM_TOKENS.prefix);
  const hole = prompt.indexOf(FIM_TOKENS.suffix);
  const middle = prompt.indexOf(FIM_TOKENS.middle);
  // Without its tokens a Qwen coder model reads the prompt as text to continue: nothing after it.
  if (start < 0 || hole < start || middle < hole) return { prefix: prompt, suffix: '' };
  return {
    prefix: prompt.slice(start + FIM_TOKENS.prefix.length, hole),
    suffix: prompt.slice(hole + FIM_TOKENS.suffix.length, middle),
  };
}

/** The text up to the first stop sequence (which is not sent). */
function cutAtStop(text: string, stop: unknown): string {
  const stops = (Array.isArray(stop) ? stop : [stop]).filter((s): s is string => typeof s === 'string' && s !== '');
  let end = text.length;
  for (const s of stops) {
    const at = text.indexOf(s);
    if (at >= 0 && at < end) end = at;
  }
  return text.slice(0, end);
}

function refuse(ctx: GatewayContext): void {
  const model = ctx.model;
  if (model.owned_by === 'zhipu_4v') return ctx.relayError(500, 'convert_request_failed', 'not implemented');
  if (model.owned_by === 'moonshot')
    return ctx.http.sendJson(404, {
      error: { message: 'Invalid URL (POST /v1/completions)', type: 'invalid_request_error', param: '', code: '' },
    });
  ctx.http.sendJson(404, {
    error: {
      message:
        'This is a chat model and not supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?',
      type: 'invalid_request_error',
      param: 'model',
      code: '',
    },
  });
}

export const completionRoutes: Route[] = [
  {
    method: 'POST',
    path: '/v1/completions',
    rateLimit: true,
    distribute: true,
    errorFormat: 'openai',
    handle: completions,
  },
];
