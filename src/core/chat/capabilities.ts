import * as l10n from '@vscode/l10n';
import type { ChatProtocol, ModelInfo } from '../models/types';
import { modalityName } from '../models/modalityNames';

/**
 * What the chat may offer for a model: image input and web search. Both are decided from what is
 * known about the model, never by trying a billed request.
 */

export interface ImageSupport {
  supported: boolean;
  /** Why, in words for the attach control's tooltip. */
  reason: string;
}

/**
 * Image input, in this order:
 * 1. the model is listed in `modelGateway.chat.imageInputModels` (ids, `*` matches any run of characters);
 * 2. the catalog's input modalities (`modalities.input` / `input`) include `image`;
 * 3. the catalog's `attachment` flag is true (opencode / models.dev);
 * otherwise images are not offered: when the catalog lists the model's inputs without images, and
 * also when nothing is known about the model (the fallback is "not offered", because a model that
 * cannot see images answers a picture with an error or, worse, with a made-up description).
 */
export function imageSupport(model: ModelInfo, listed: readonly string[] = []): ImageSupport {
  if (listed.some((pattern) => globMatch(pattern, model.id))) {
    return {
      supported: true,
      reason: l10n.t('{0} takes images (listed in "modelGateway.chat.imageInputModels").', model.id),
    };
  }
  const catalog = model.catalog;
  const inputs = catalog?.inputModalities;
  if (inputs?.includes('image'))
    return { supported: true, reason: l10n.t('{0} takes images (the model catalog lists image input).', model.id) };
  if (catalog?.attachment === true)
    return {
      supported: true,
      reason: l10n.t('{0} takes images (the model catalog marks it as taking attachments).', model.id),
    };
  if (inputs?.length) {
    return {
      supported: false,
      reason: l10n.t(
        '{0} does not take images: the model catalog lists only {1} input for it. Pick a model that takes images.',
        model.id,
        inputs.map(modalityName).join(', '),
      ),
    };
  }
  return {
    supported: false,
    reason: l10n.t(
      'Images are not offered for {0}: the model catalog says nothing about its image input. If it does take images, add it to "modelGateway.chat.imageInputModels".',
      model.id,
    ),
  };
}

function globMatch(pattern: string, id: string): boolean {
  const p = pattern.trim();
  if (!p) return false;
  const re = new RegExp(
    `^${p
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    'i',
  );
  return re.test(id);
}

/** Third-provider (Bailian-type) models, which the gateway lists as owned by `ali`. */
export function isThirdProvider(model: ModelInfo): boolean {
  return /^(ali|alibaba|dashscope|bailian|aliyun)/i.test(model.ownedBy ?? model.provider);
}

/**
 * The protocols over which the web-search switch works for a model, each in its own form:
 * Chat Completions sends `enable_search: true` in the body, which only the third provider
 * (Bailian-type, `owned_by` ali) acts on; Responses adds the built-in `web_search` tool, which
 * every model that speaks Responses takes. Messages has no search form through the gateway.
 */
export function searchProtocols(model: ModelInfo): ChatProtocol[] {
  const out: ChatProtocol[] = [];
  if (model.protocols.includes('chatCompletions') && isThirdProvider(model)) out.push('chatCompletions');
  if (model.protocols.includes('responses')) out.push('responses');
  return out;
}

/** Whether the switch applies to this model over this protocol. */
export function isSearchable(model: ModelInfo, protocol: ChatProtocol): boolean {
  return searchProtocols(model).includes(protocol);
}

/** The protocols a user may pick for a model: those that work first, then those refused lately (remembered). */
export function offeredProtocols(model: ModelInfo): ChatProtocol[] {
  return [...model.protocols, ...(model.refused ?? [])];
}

/**
 * The protocol a conversation uses with a model: the user's override when the model offers it (a
 * remembered refusal does not overrule an explicit choice), else its first working one.
 */
export function effectiveProtocol(model: ModelInfo, override: ChatProtocol | undefined): ChatProtocol {
  return override && offeredProtocols(model).includes(override) ? override : (model.protocols[0] ?? 'chatCompletions');
}
