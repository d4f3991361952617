import * as vscode from 'vscode';
import { DEFAULT_IMAGE_MAX_BYTES } from '../../core/chat/images';
import { isThinkingChoice, type ThinkingChoice } from '../../core/chat/thinking';
import { boundedCost } from '../../core/settings';
import { announceOnce } from '../trust/workspaceOverrides';

export interface ChatSettings {
  maxTokens: number;
  contextMaxChars: number;
  historyMessages: number;
  systemPrompt: string;
  /** Largest image sent with a message, in bytes; bigger ones are refused with their size. */
  imageMaxBytes: number;
  /** Model ids (`*` wildcards) that take images although the catalog does not say so. */
  imageInputModels: string[];
  /** Thinking for a new conversation and for VS Code's own chat (`auto`: the model's default). */
  thinking: ThinkingChoice;
  /** Whether requests ask the upstream's prompt cache in the model family's form (core/chat/promptCache.ts). */
  promptCaching: boolean;
}

/**
 * Chat settings are read when a message is sent, so a change applies to the next message. The
 * settings that raise a request's cost are clamped to their bounds (core/settings.ts), and a
 * clamped value is announced once per session.
 */
export function chatSettings(): ChatSettings {
  const c = vscode.workspace.getConfiguration('modelGateway.chat');
  const positive = (key: 'maxTokens' | 'contextMaxChars' | 'historyMessages' | 'imageMaxBytes', fallback: number) => {
    const bounded = boundedCost(`chat.${key}`, c.get<unknown>(key), fallback);
    if (bounded.clamped) announceOnce(bounded.clamped);
    return bounded.value;
  };
  const models = c.get<unknown>('imageInputModels');
  const thinking = c.get<unknown>('thinking');
  return {
    maxTokens: positive('maxTokens', 4096),
    contextMaxChars: positive('contextMaxChars', 20000),
    historyMessages: positive('historyMessages', 40),
    systemPrompt: c.get<string>('systemPrompt') ?? '',
    imageMaxBytes: positive('imageMaxBytes', DEFAULT_IMAGE_MAX_BYTES),
    imageInputModels: Array.isArray(models) ? models.filter((m): m is string => typeof m === 'string') : [],
    thinking: isThinkingChoice(thinking) ? thinking : 'auto',
    promptCaching: c.get<unknown>('promptCaching') !== false,
  };
}
