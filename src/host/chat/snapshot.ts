/**
 * What the view is sent as its whole state, and the pieces of it that describe models. The
 * streaming answer of the conversation shown is taken from its session (the store has its text only
 * up to the last checkpoint).
 */
import { effectiveProtocol, imageSupport, isSearchable as searchableOver, isThirdProvider, searchProtocols } from '../../core/chat/capabilities';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import type { ChatModelView } from '../../shared/protocol';

/** How many messages a snapshot carries; "Load older" adds as many again. */
export const SNAPSHOT_WINDOW = 200;

/**
 * Whether the web-search switch applies to a model: over `protocol` when given (Chat Completions:
 * third-provider models, `enable_search`; Responses: any model, the `web_search` tool), else
 * whether it is a third-provider model.
 */
export function isSearchable(m: ModelInfo, protocol?: ChatProtocol): boolean {
  return protocol ? searchableOver(m, protocol) : isThirdProvider(m);
}

export function toModelView(m: ModelInfo, override: ChatProtocol | undefined, imageModels: string[]): ChatModelView {
  const images = imageSupport(m, imageModels);
  return {
    id: m.id,
    provider: m.provider,
    protocols: m.protocols,
    searchable: searchableOver(m, effectiveProtocol(m, override)),
    searchProtocols: searchProtocols(m),
    imageInput: images.supported,
    imageNote: images.reason,
  };
}
