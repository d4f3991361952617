import type { CatalogEntry, ChatProtocol, KeyModel, ModelInfo, ModelKind } from './types';

/** new-api's `supported_endpoint_types` values (its `constant/endpoint_type.go`) mapped to our protocols. */
export function protocolsFromEndpointTypes(types: string[]): ChatProtocol[] {
  const out: ChatProtocol[] = [];
  for (const t of types) {
    const p =
      t === 'openai'
        ? 'chatCompletions'
        : t === 'openai-response'
          ? 'responses'
          : t === 'anthropic'
            ? 'messages'
            : undefined;
    if (p && !out.includes(p)) out.push(p);
  }
  return out;
}

// Tool entries appear in /v1/models under permission and billing names; they are
// never chat models. The names are not published, so these patterns are the documented fallback.
const TOOL_PATTERN =
  /(file[-_ ]?(parser|parse|extract)|layout[-_]?pars|web[-_]?(search|reader)|search[-_]?(std|pro)|(^|[-_/])reader$|(^|[-_/])ocr($|[-_])|[-_]ocr$|^tool[-_/]|[-_/]tools?$)/i;
const VIDEO_PATTERN = /([-_.](t2v|i2v|kf2v|s2v)([-_.]|$)|video|sora|veo|kling|cogvideo|hailuo|seedance|vidu)/i;
/** new-api's endpoint types of models that are not chat models: embeddings and (Jina-style) reranking. */
const NOT_CHAT_TYPES = new Set(['embeddings', 'jina-rerank']);
const OTHER_PATTERN = /(embed|rerank|(^|[-_/])bge[-_])/i;
const IMAGE_PATTERN =
  /(gpt-image|dall-?e|[-_.]t2i([-_.]|$)|flux|seedream|cogview|imagen|qwen-image|wanx?[\d.]*-?image|stable-diffusion|sdxl|midjourney|(^|[-_])image($|[-_]))/i;

/**
 * A model's kind: the gateway's endpoint types first, then the catalog's own words, then the
 * catalog's output modalities, then the name. Chat is the default for what remains.
 */
export function classifyKind(id: string, key?: KeyModel, catalog?: CatalogEntry): ModelKind {
  const types = key?.endpointTypes ?? [];
  if (types.includes('openai-video')) return 'video';
  if (types.includes('image-generation')) return 'image';
  // Embedding and rerank models answer their own endpoints only; new-api lists them beside the
  // channel's chat types, so their own type decides.
  if (types.some((t) => NOT_CHAT_TYPES.has(t))) return 'other';
  if (catalog?.kind) return catalog.kind;
  if (TOOL_PATTERN.test(id)) return 'tool';
  const output = catalog?.outputModalities ?? [];
  if (output.includes('video')) return 'video';
  if (output.includes('image') && !output.includes('text')) return 'image';
  if (VIDEO_PATTERN.test(id)) return 'video';
  if (IMAGE_PATTERN.test(id)) return 'image';
  if (OTHER_PATTERN.test(id)) return 'other';
  return 'chat';
}

/**
 * Chat protocols, in order of preference: the gateway's `supported_endpoint_types`, then catalog
 * metadata, then Chat Completions, which the gateway offers as the one chat entry for all
 * upstream providers and is therefore the safe fallback.
 */
export function chooseProtocols(
  key?: KeyModel,
  catalog?: CatalogEntry,
): Pick<ModelInfo, 'protocols' | 'protocolSource'> {
  const fromGateway = protocolsFromEndpointTypes(key?.endpointTypes ?? []);
  if (fromGateway.length) return { protocols: fromGateway, protocolSource: 'gateway' };
  if (catalog?.protocols?.length) return { protocols: catalog.protocols, protocolSource: 'catalog' };
  return { protocols: ['chatCompletions'], protocolSource: 'fallback' };
}

/** Merges the key's list (truth about availability) with the catalog (metadata). */
export function mergeModels(keyModels: KeyModel[] | undefined, catalog: CatalogEntry[] | undefined): ModelInfo[] {
  const byId = new Map<string, { key?: KeyModel; catalog?: CatalogEntry }>();
  for (const entry of catalog ?? []) byId.set(entry.id, { catalog: entry });
  for (const key of keyModels ?? []) byId.set(key.id, { ...byId.get(key.id), key });
  const models: ModelInfo[] = [];
  for (const [id, { key, catalog: entry }] of byId) {
    const kind = classifyKind(id, key, entry);
    const protocols =
      kind === 'chat' ? chooseProtocols(key, entry) : { protocols: [], protocolSource: 'none' as const };
    const endpointTypes = key?.endpointTypes?.length ? key.endpointTypes : entry?.endpointTypes;
    models.push({
      id,
      name: entry?.name ?? id,
      provider: providerName(id, key?.ownedBy, entry?.provider),
      ...(key?.ownedBy ? { ownedBy: key.ownedBy } : {}),
      kind,
      ...protocols,
      // Without the key's list (no key yet, or offline) nothing is known to be callable.
      available: key !== undefined,
      inCatalog: entry !== undefined,
      catalog: entry,
      ...(key?.limits ? { listLimits: key.limits } : {}),
      ...(endpointTypes?.length ? { endpointTypes } : {}),
    });
  }
  return models.sort(
    (a, b) =>
      KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) ||
      a.provider.localeCompare(b.provider) ||
      a.id.localeCompare(b.id),
  );
}

const KIND_ORDER: ModelKind[] = ['chat', 'image', 'video', 'tool', 'other'];

/**
 * The gateway's `owned_by` names the upstream channel; a catalog often files every model under
 * one provider (the gateway itself), so it is only the fallback. new-api answers `custom` for a
 * model missing from its own table (see its model list handler), which names no vendor: the
 * catalog's provider, else the vendor the model's name starts with, says more.
 */
function providerName(id: string, ownedBy: string | undefined, catalogProvider: string | undefined): string {
  if (ownedBy === 'custom') return catalogProvider ?? vendorInName(id) ?? ownedBy;
  return ownedBy ?? catalogProvider ?? 'other';
}

/** Model name prefixes that name their vendor (as provider ids `providerNames` words). */
const VENDOR_PREFIXES: Array<[RegExp, string]> = [
  [/^(kimi|moonshot)-/i, 'moonshot'],
  [/^(glm|cogview|cogvideo)-/i, 'zhipu'],
  [/^(qwen|wan)[-\d.]/i, 'ali'],
  [/^deepseek-/i, 'deepseek'],
  [/^(gpt-|o\d|dall-e|sora-)/i, 'openai'],
  [/^claude-/i, 'anthropic'],
  [/^gemini-/i, 'gemini'],
  [/^doubao-/i, 'doubao'],
];

function vendorInName(id: string): string | undefined {
  return VENDOR_PREFIXES.find(([prefix]) => prefix.test(id))?.[1];
}

export function countByKind(models: ModelInfo[], onlyAvailable = true): Record<ModelKind, number> {
  const counts: Record<ModelKind, number> = { chat: 0, image: 0, video: 0, tool: 0, other: 0 };
  for (const m of models) if (!onlyAvailable || m.available) counts[m.kind]++;
  return counts;
}
