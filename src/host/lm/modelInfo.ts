import * as l10n from '@vscode/l10n';
import { imageSupport } from '../../core/chat/capabilities';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import { positiveCount } from '../../core/validate';
import { formatNumber } from '../../shared/format';
import { PROTOCOL_LABELS } from '../../shared/protocolNames';
import type { LanguageModelChatInformation } from './lmApi';

/**
 * How a gateway chat model is described to VS Code's chat. Kept free of `vscode` so that it is
 * unit-tested in plain Node; the provider adds nothing to it but the call.
 */

/**
 * The limits assumed when neither the catalog nor the key's model list gives any. VS Code fills a
 * request with history up to `maxInputTokens`; a figure above the model's real window makes a long
 * agent session fail with an upstream error that says nothing useful, while a figure below it only
 * drops older history sooner. 32K is the smallest window of the chat models commonly served behind
 * gateways today (the 32K variants of Qwen and Moonshot, many self-hosted models), so it is safe
 * for all of them; 4K answers is the default answer limit of the OpenAI-compatible upstreams that
 * set one, and of this extension's own setting.
 */
export const DEFAULT_INPUT_TOKENS = 32_768;
export const DEFAULT_OUTPUT_TOKENS = 4_096;

/** What the provider needs from the settings to describe a model. */
export interface ModelInfoSettings {
  /** `modelGateway.chat.maxTokens`: the answer limit when the catalog gives none. */
  maxTokens: number;
  /** `modelGateway.chat.imageInputModels`. */
  imageInputModels: readonly string[];
  /** Whether the chat core can carry tool calls (it maps VS Code's tools to each protocol). */
  toolCalling: boolean;
}

/** A model as VS Code sees it, with what the provider needs to call it again. */
export interface GatewayChatInformation extends LanguageModelChatInformation {
  readonly protocol: ChatProtocol;
}

/** The models offered to VS Code: the chat models this key may use, from the sidebar's own list. */
export function chatModelsForVsCode(models: readonly ModelInfo[]): ModelInfo[] {
  return models.filter((m) => m.kind === 'chat' && m.available);
}

/**
 * The cheapest chat model with tool calling, by the catalog's price (input plus output, USD per
 * million tokens): a utility model for VS Code's chat (titles, progress messages) runs with tools
 * offered. Models without a price or that the catalog says take no tools are passed over; ties go
 * to the first by id, so the choice does not depend on the list's order.
 */
export function cheapestToolModel(
  models: readonly ModelInfo[],
): { model: ModelInfo; input: number; output: number } | undefined {
  let best: { model: ModelInfo; input: number; output: number } | undefined;
  for (const model of models) {
    const cost = model.catalog?.cost;
    if (model.catalog?.toolCall !== true || typeof cost?.input !== 'number' || typeof cost.output !== 'number')
      continue;
    const total = cost.input + cost.output;
    const bestTotal = best ? best.input + best.output : Infinity;
    if (total < bestTotal || (total === bestTotal && best && model.id < best.model.id))
      best = { model, input: cost.input, output: cost.output };
  }
  return best;
}

/** `keyName`: with several keys, the name of the key the model is called with, shown in its detail. */
export function toChatInformation(
  model: ModelInfo,
  protocol: ChatProtocol,
  settings: ModelInfoSettings,
  keyName?: string,
): GatewayChatInformation {
  const catalog = model.catalog;
  const listed = model.listLimits;
  const knownOutput = positiveCount(catalog?.maxOutput) ?? positiveCount(listed?.maxOutput);
  // An unknown answer limit is the setting's, but never above the conservative default.
  const maxOutputTokens = knownOutput ?? Math.min(settings.maxTokens, DEFAULT_OUTPUT_TOKENS);
  const context = positiveCount(catalog?.contextWindow) ?? positiveCount(listed?.contextWindow);
  // The window holds the question and the answer; what is left for the question is the input budget.
  const maxInputTokens =
    context === undefined
      ? DEFAULT_INPUT_TOKENS
      : Math.max(1, context > maxOutputTokens ? context - maxOutputTokens : context);
  const images = imageSupport(model, settings.imageInputModels);
  // A catalog that says the model takes no tools is believed; otherwise every protocol carries them.
  const toolCalling = settings.toolCalling && catalog?.toolCall !== false;
  const provider = model.provider || model.ownedBy || 'gateway';
  return {
    id: model.id,
    name: model.name || model.id,
    family: familyOf(model),
    version: model.id,
    detail: [
      provider,
      PROTOCOL_LABELS[protocol],
      ...(context === undefined ? [l10n.t('context unknown')] : []),
      ...(keyName !== undefined ? [l10n.t('key "{0}"', keyName)] : []),
    ].join(' · '),
    tooltip: [
      l10n.t(
        '{0} through the model gateway ({1}), over the {2} protocol.',
        model.id,
        provider,
        PROTOCOL_LABELS[protocol],
      ),
      ...(keyName !== undefined ? [l10n.t('Called with the API key "{0}".', keyName)] : []),
      context !== undefined
        ? l10n.t('Context {0} tokens, answers up to {1} tokens.', formatNumber(context), formatNumber(maxOutputTokens))
        : l10n.t(
            'Context window unknown; assuming {0} tokens of input and answers up to {1} tokens.',
            formatNumber(maxInputTokens),
            formatNumber(maxOutputTokens),
          ),
      images.reason,
    ].join('\n'),
    maxInputTokens,
    maxOutputTokens,
    capabilities: { imageInput: images.supported, toolCalling },
    protocol,
  };
}

/** The family groups versions of one model (e.g. `glm-4.6` and `glm-4.6-air` are both `glm`). */
function familyOf(model: ModelInfo): string {
  return /^[a-z]+/i.exec(model.id)?.[0]?.toLowerCase() || model.id;
}
