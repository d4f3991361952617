import * as l10n from '@vscode/l10n';
import { imageSupport } from '../../core/chat/capabilities';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import { formatNumber } from '../../shared/format';
import { PROTOCOL_LABELS } from '../../shared/protocol';
import type { LanguageModelChatInformation } from './lmApi';

/**
 * How a gateway chat model is described to VS Code's chat. Kept free of `vscode` so that it is
 * unit-tested in plain Node; the provider adds nothing to it but the call.
 */

/**
 * Context window assumed when the catalog gives none: 128K tokens is what the chat models behind
 * the gateway's providers commonly offer, and VS Code only uses the figure to decide how much
 * history to send (a model with a smaller window answers a too-long request with a clear error).
 */
export const DEFAULT_CONTEXT_TOKENS = 128_000;

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

export function toChatInformation(model: ModelInfo, protocol: ChatProtocol, settings: ModelInfoSettings): GatewayChatInformation {
  const catalog = model.catalog;
  const maxOutputTokens = positive(catalog?.maxOutput) ?? settings.maxTokens;
  const context = positive(catalog?.contextWindow) ?? DEFAULT_CONTEXT_TOKENS;
  // The window holds the question and the answer; what is left for the question is the input budget.
  const maxInputTokens = Math.max(1, context > maxOutputTokens ? context - maxOutputTokens : context);
  const images = imageSupport(model, settings.imageInputModels);
  // A catalog that says the model takes no tools is believed; otherwise every protocol carries them.
  const toolCalling = settings.toolCalling && catalog?.toolCall !== false;
  const provider = model.provider || model.ownedBy || 'gateway';
  return {
    id: model.id,
    name: model.name || model.id,
    family: familyOf(model),
    version: model.id,
    detail: `${provider} · ${PROTOCOL_LABELS[protocol]}`,
    tooltip: [
      l10n.t('{0} through the model gateway ({1}), over the {2} protocol.', model.id, provider, PROTOCOL_LABELS[protocol]),
      catalog?.contextWindow
        ? l10n.t('Context {0} tokens, answers up to {1} tokens.', formatNumber(context), formatNumber(maxOutputTokens))
        : l10n.t('Context {0} tokens (assumed; the catalog gives none), answers up to {1} tokens.', formatNumber(context), formatNumber(maxOutputTokens)),
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

function positive(n: number | undefined): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : undefined;
}
