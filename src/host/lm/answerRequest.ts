import * as vscode from 'vscode';
import type { ChatRequest, ChatTool, ToolMode } from '../../core/chat/events';
import type { PromptCacheRequest } from '../../core/chat/promptCache';
import { isThinkingChoice, thinkingControl, thinkingRequest, type ThinkingChoice } from '../../core/chat/thinking';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import type { ChatSettings } from '../chat/chatSettings';
import type { ProvideLanguageModelChatResponseOptions } from './lmApi';
import type { GatewayChatInformation } from './modelInfo';
import type { ConvertedRequest } from './requestMessages';

/** VS Code's tools as the core sends them; a tool without a schema takes an empty object. */
function toChatTools(tools: readonly vscode.LanguageModelChatTool[]): ChatTool[] {
  return tools.map((t) => ({
    name: t.name,
    ...(t.description ? { description: t.description } : {}),
    inputSchema:
      t.inputSchema && typeof t.inputSchema === 'object'
        ? (t.inputSchema as Record<string, unknown>)
        : { type: 'object', properties: {} },
  }));
}

/**
 * The thinking choice for a request from VS Code's chat. VS Code 1.117 has no stable way for a
 * provider to offer per-model options in its picker (per-model configuration is proposed API), so
 * the setting `modelGateway.chat.thinking` decides; an extension calling the model itself may pass
 * `modelOptions.thinking` (one of the setting's values) for its own request.
 */
export function lmThinkingChoice(
  modelOptions: { readonly [name: string]: unknown } | undefined,
  fallback: ThinkingChoice,
): ThinkingChoice {
  const given = modelOptions?.thinking;
  return isThinkingChoice(given) ? given : fallback;
}

function toolModeOf(mode: vscode.LanguageModelChatToolMode): ToolMode {
  return mode === vscode.LanguageModelChatToolMode.Required ? 'required' : 'auto';
}

/** What one answer to VS Code's chat is asked with. */
export interface AnswerRequest {
  info: ModelInfo;
  model: GatewayChatInformation;
  request: ConvertedRequest;
  options: ProvideLanguageModelChatResponseOptions;
  settings: ChatSettings;
  signal: AbortSignal;
}

/** The core's request for one attempt over `protocol`: each protocol has its own form of the thinking switch (or none). */
export function chatRequestOver(
  answer: AnswerRequest,
  protocol: ChatProtocol,
  cache: PromptCacheRequest | undefined,
): ChatRequest {
  const { info, model, request, options, settings } = answer;
  const thinking = thinkingRequest(
    thinkingControl(info, protocol),
    lmThinkingChoice(options.modelOptions, settings.thinking),
  );
  const temperature = options.modelOptions?.temperature;
  const tools = toChatTools(options.tools ?? []);
  // "modelGateway.chat.systemPrompt" is the sidebar's: VS Code's chat has its own instructions, and
  // a cloned repository's settings must not put words into every request made there.
  const system = request.system.trim() ? request.system : '';
  return {
    model: info.id,
    protocol,
    messages: request.messages,
    ...(system ? { system } : {}),
    stream: true,
    requiresStreaming: info.catalog?.requiresStreaming === true,
    maxTokens: Math.min(settings.maxTokens, model.maxOutputTokens),
    modelMaxOutput: info.catalog?.maxOutput,
    ...(typeof temperature === 'number' ? { temperature } : {}),
    ...(thinking ? { thinking } : {}),
    ...(tools.length ? { tools, toolMode: toolModeOf(options.toolMode) } : {}),
    ...(cache ? { cache } : {}),
    signal: answer.signal,
  };
}
