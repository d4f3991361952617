import type { TokenPrice } from '../chat/tokenCost';
import type { CacheField } from '../chat/cacheFields';
/** `other`: listed by the gateway but for none of the extension's uses (embeddings, reranking). */
export type ModelKind = 'chat' | 'image' | 'video' | 'tool' | 'other';
export type ChatProtocol = 'chatCompletions' | 'responses' | 'messages';
/**
 * What a gateway's relay can refuse for a model and the extension remembers (models/refusalMemory.ts):
 * a chat protocol, or `fim`, a fill-in-the-middle request on `/v1/completions` (completion/learning.ts).
 */
export type RefusedRoute = ChatProtocol | 'fim';

/** One entry of the key's own `GET /v1/models`. */
export interface KeyModel {
  id: string;
  ownedBy?: string;
  /** new-api's `supported_endpoint_types`, absent when the gateway does not send it. */
  endpointTypes?: string[];
  /** The limits some gateways list with each model (OpenRouter-style `context_length` and the like). */
  limits?: ModelLimits;
}

/** A model's context window and answer limit in tokens, where a source gives them. */
export interface ModelLimits {
  contextWindow?: number;
  maxOutput?: number;
}

/** What a catalog file says about one model; every field but the id is optional. */
export interface CatalogEntry {
  id: string;
  name?: string;
  provider?: string;
  kind?: ModelKind;
  protocols?: ChatProtocol[];
  inputModalities?: string[];
  outputModalities?: string[];
  /** opencode / models.dev: the model accepts attachments (images) in its input. */
  attachment?: boolean;
  reasoning?: boolean;
  /** models.dev `reasoning_options` of type `effort`: the effort values the model takes (e.g. `none`, `low`). */
  reasoningEfforts?: string[];
  toolCall?: boolean;
  contextWindow?: number;
  maxOutput?: number;
  /** USD per 1M tokens, as catalogs write it (models.dev: `cache_read`, `cache_write` for the prompt cache). */
  cost?: TokenPrice;
  /** Extra hints for video models, e.g. sizes `832*480` and durations in seconds. */
  video?: { sizes?: string[]; durations?: number[] };
  requiresStreaming?: boolean;
  /** new-api's `supported_endpoint_types`, where the catalog lists them. */
  endpointTypes?: string[];
}

export type CatalogFormat = 'openai-list' | 'opencode' | 'models.dev' | 'models-list' | 'providers-list';

export interface ParsedCatalog {
  format: CatalogFormat;
  entries: CatalogEntry[];
}

/** The merged view the UI shows: the key's list is the truth about availability. */
export interface ModelInfo {
  id: string;
  name: string;
  /** The upstream provider: the gateway's `owned_by`, else the catalog's provider name. */
  provider: string;
  /** The gateway's own `owned_by` (its channel type, e.g. `ali`), when the key's list has it. */
  ownedBy?: string;
  kind: ModelKind;
  /** Chat protocols in order of preference; empty for non-chat kinds. */
  protocols: ChatProtocol[];
  /**
   * Protocols the gateway lists but its relay refused for this model lately (remembered, see
   * models/refusalMemory.ts): left out of `protocols`, still offered to a user who picks one.
   */
  refused?: ChatProtocol[];
  /**
   * Prompt-caching fields the model's upstream refused lately (remembered with the protocols):
   * they are not sent to it again.
   */
  refusedFields?: CacheField[];
  /** The relay refused a fill-in-the-middle request for it lately: it completes code over chat. */
  fimRefused?: boolean;
  /** How the protocols were decided, for the tooltip and for debugging a wrong choice. */
  protocolSource: 'gateway' | 'catalog' | 'fallback' | 'none';
  available: boolean;
  inCatalog: boolean;
  catalog?: CatalogEntry;
  /** The limits the key's own model list gives, when it gives any (the catalog's win). */
  listLimits?: ModelLimits;
  /** new-api's `supported_endpoint_types` from the key's list, else the catalog's; absent when neither gives them. */
  endpointTypes?: string[];
  /** The ids of the keys whose list has the model, in the user's order (absent while no list was read). */
  keyIds?: string[];
  /** The key the model is called with: the user's pick among `keyIds`, else the first of them. */
  keyId?: string;
}
