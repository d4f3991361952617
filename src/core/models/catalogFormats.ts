import * as z from 'zod/mini';
import { GatewayError } from '../errors';
import { isRecord, lazySchema, parseWith } from '../validate';
import { protocolsFromEndpointTypes } from './classify';
import type { CatalogEntry, CatalogFormat, ChatProtocol, ModelKind, ParsedCatalog } from './types';
import type { TokenPrice } from '../chat/tokenCost';
import { words } from '../../shared/words';

/**
 * The catalog file's format is not fixed: it is "a model catalog file for a coding client".
 * These are the common shapes (models.dev's `api.json`, OpenRouter's `/models`, a `{models: [...]}` list). Metadata fields are read leniently: a field of
 * the wrong type is dropped, not fatal, because one odd model must not hide the whole catalog.
 */
const opt = <T extends z.ZodMiniType>(schema: T) => z.optional(z.catch(z.optional(schema), undefined));

const modelMeta = lazySchema(() => {
  const strings = opt(z.array(z.string()));
  return z.looseObject({
    id: opt(z.string()),
    name: opt(z.string()),
    display_name: opt(z.string()),
    owned_by: opt(z.string()),
    provider: opt(
      z.union([z.string(), z.looseObject({ npm: opt(z.string()), shape: opt(z.string()), api: opt(z.string()) })]),
    ),
    kind: opt(z.string()),
    type: opt(z.string()),
    category: opt(z.string()),
    api: opt(z.string()),
    npm: opt(z.string()),
    supported_endpoint_types: strings,
    endpoints: strings,
    protocols: strings,
    modalities: opt(z.looseObject({ input: strings, output: strings })),
    input: strings,
    input_modalities: strings,
    attachment: opt(z.boolean()),
    reasoning: opt(z.boolean()),
    reasoning_options: opt(z.array(z.looseObject({ type: opt(z.string()), values: strings }))),
    tool_call: opt(z.boolean()),
    limit: opt(z.looseObject({ context: opt(z.number()), output: opt(z.number()) })),
    contextWindow: opt(z.number()),
    context_length: opt(z.number()),
    maxTokens: opt(z.number()),
    cost: opt(
      z.looseObject({
        input: opt(z.number()),
        output: opt(z.number()),
        cache_read: opt(z.number()),
        cache_write: opt(z.number()),
      }),
    ),
    video: opt(z.looseObject({ sizes: strings, durations: opt(z.array(z.number())) })),
    sizes: strings,
    durations: opt(z.array(z.number())),
    requires_streaming: opt(z.boolean()),
    stream_only: opt(z.boolean()),
  });
});
type ModelMeta = z.infer<ReturnType<typeof modelMeta>>;

const withId = lazySchema(() => z.looseObject({ id: z.string() }));
const idList = lazySchema(() => z.array(withId()));
const openAiList = lazySchema(() => z.looseObject({ data: z.array(withId()) }));
const modelsList = lazySchema(() => z.looseObject({ models: z.array(withId()) }));
const providerBlock = lazySchema(() =>
  z.looseObject({
    name: opt(z.string()),
    npm: opt(z.string()),
    api: opt(z.string()),
    models: z.record(z.string(), z.looseObject({})),
  }),
);
const opencode = lazySchema(() => z.looseObject({ provider: z.record(z.string(), providerBlock()) }));
const modelsDev = lazySchema(() => z.record(z.string(), providerBlock()));
const providersList = lazySchema(() =>
  z.looseObject({
    providers: z.record(
      z.string(),
      z.looseObject({ name: opt(z.string()), api: opt(z.string()), models: z.array(withId()) }),
    ),
  }),
);

export function parseCatalog(json: unknown): ParsedCatalog {
  if (Array.isArray(json))
    return finish(
      'models-list',
      parseWith(idList(), json, words('The model catalog')).map((m) => entryFrom(m.id, m)),
    );
  if (!isRecord(json)) throw unknownShape(json);
  if (Array.isArray(json.data)) {
    return finish(
      'openai-list',
      parseWith(openAiList(), json, words('The model catalog')).data.map((m) => entryFrom(m.id, m)),
    );
  }
  if (Array.isArray(json.models)) {
    return finish(
      'models-list',
      parseWith(modelsList(), json, words('The model catalog')).models.map((m) => entryFrom(m.id, m)),
    );
  }
  if (isRecord(json.provider)) {
    const parsed = parseWith(opencode(), json, words('The model catalog (opencode format)'));
    return finish('opencode', fromProviderBlocks(parsed.provider));
  }
  if (isRecord(json.providers)) {
    const parsed = parseWith(providersList(), json, words('The model catalog (providers format)'));
    const entries = Object.entries(parsed.providers).flatMap(([providerId, p]) =>
      p.models.map((m) => entryFrom(m.id, m, { provider: p.name ?? providerId, api: p.api })),
    );
    return finish('providers-list', entries);
  }
  const values = Object.entries(json).filter(([key]) => !key.startsWith('$'));
  if (values.length > 0 && values.every(([, v]) => isRecord(v) && isRecord(v.models))) {
    const parsed = parseWith(modelsDev(), Object.fromEntries(values), words('The model catalog (models.dev format)'));
    return finish('models.dev', fromProviderBlocks(parsed));
  }
  throw unknownShape(json);
}

function fromProviderBlocks(blocks: Record<string, z.infer<ReturnType<typeof providerBlock>>>): CatalogEntry[] {
  return Object.entries(blocks).flatMap(([providerId, p]) =>
    Object.entries(p.models).map(([modelId, raw]) => {
      const id = typeof raw.id === 'string' ? raw.id : modelId;
      return entryFrom(id, raw, { provider: p.name ?? providerId, npm: p.npm, api: p.api });
    }),
  );
}

function finish(format: CatalogFormat, entries: CatalogEntry[]): ParsedCatalog {
  const seen = new Set<string>();
  const unique = entries.filter((e) => e.id && !seen.has(e.id) && seen.add(e.id));
  return { format, entries: unique };
}

interface ProviderContext {
  provider?: string;
  npm?: string;
  api?: string;
}

function entryFrom(id: string, raw: unknown, ctx: ProviderContext = {}): CatalogEntry {
  const m: ModelMeta = parseWith(modelMeta(), raw, words('The catalog entry "{0}"', id));
  const providerObj = typeof m.provider === 'object' ? m.provider : undefined;
  const entry: CatalogEntry = {
    id,
    name: m.name ?? m.display_name,
    provider: ctx.provider ?? (typeof m.provider === 'string' ? m.provider : undefined) ?? m.owned_by,
    kind: kindFrom(m.kind ?? m.type ?? m.category),
    protocols: protocolsFrom(m, providerObj, ctx),
    inputModalities: m.modalities?.input ?? m.input ?? m.input_modalities,
    attachment: m.attachment,
    outputModalities: m.modalities?.output,
    reasoning: m.reasoning,
    reasoningEfforts: m.reasoning_options?.find((o) => o.type === 'effort')?.values,
    toolCall: m.tool_call,
    contextWindow: m.limit?.context ?? m.contextWindow ?? m.context_length,
    maxOutput: m.limit?.output ?? m.maxTokens,
    cost: m.cost ? priceOf(m.cost) : undefined,
    video: m.video ?? (m.sizes || m.durations ? { sizes: m.sizes, durations: m.durations } : undefined),
    requiresStreaming: m.requires_streaming ?? m.stream_only,
    endpointTypes: m.supported_endpoint_types,
  };
  return Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined)) as unknown as CatalogEntry;
}

function kindFrom(value: string | undefined): ModelKind | undefined {
  switch (value?.toLowerCase()) {
    case 'chat':
    case 'llm':
    case 'text':
    case 'language':
      return 'chat';
    case 'image':
    case 'image-generation':
      return 'image';
    case 'video':
    case 'video-generation':
      return 'video';
    case 'tool':
    case 'tools':
      return 'tool';
    case 'embedding':
    case 'embeddings':
    case 'rerank':
      return 'other';
    default:
      return undefined;
  }
}

function protocolsFrom(
  m: ModelMeta,
  providerObj: { npm?: string; shape?: string; api?: string } | undefined,
  ctx: ProviderContext,
): ChatProtocol[] | undefined {
  const endpointTypes = m.supported_endpoint_types ?? m.endpoints;
  if (endpointTypes?.length) {
    const fromTypes = protocolsFromEndpointTypes(endpointTypes);
    if (fromTypes.length) return fromTypes;
  }
  if (m.protocols?.length) {
    const named = m.protocols.map(protocolFromName).filter((p): p is ChatProtocol => p !== undefined);
    if (named.length) return unique(named);
  }
  if (providerObj?.shape === 'responses') return ['responses'];
  if (providerObj?.shape === 'completions') return ['chatCompletions'];
  const hint = protocolFromName(providerObj?.npm ?? providerObj?.api ?? m.npm ?? m.api ?? ctx.npm ?? ctx.api ?? '');
  return hint ? [hint] : undefined;
}

/** Names used across catalogs for the three protocols: npm packages, `api` values, endpoint names. */
function protocolFromName(name: string): ChatProtocol | undefined {
  const n = name.toLowerCase();
  if (!n) return undefined;
  if (n.includes('anthropic') || n.includes('messages')) return 'messages';
  if (n.includes('responses') || n === 'openai-response' || n === '@ai-sdk/openai') return 'responses';
  if (n.includes('openai-compatible') || n.includes('completions') || n === 'openai' || n === 'chat')
    return 'chatCompletions';
  return undefined;
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

function unknownShape(json: unknown): GatewayError {
  const seen = isRecord(json)
    ? words(
        'an object with the keys {0}',
        Object.keys(json)
          .slice(0, 8)
          .map((k) => `"${k}"`)
          .join(', ') || words('(none)'),
      )
    : words('a {0}', json === null ? 'null' : typeof json);
  return new GatewayError(
    'protocol',
    words(
      'The model catalog has a shape the extension does not know: {0}. Known shapes: an OpenAI-style list ({1}), an opencode config ({2}), a models.dev map ({3}), a plain {4} or {5}. Check "modelGateway.catalogUrl".',
      seen,
      '{"data":[...]}',
      '{"provider":{...}}',
      '{"<provider>":{"models":{...}}}',
      '{"models":[...]}',
      '{"providers":{...}}',
    ),
  );
}

/** A catalog's prices, the prompt cache's where it lists them. */
function priceOf(cost: NonNullable<ModelMeta['cost']>): TokenPrice {
  return Object.fromEntries(
    Object.entries({
      input: cost.input,
      output: cost.output,
      cacheRead: cost.cache_read,
      cacheWrite: cost.cache_write,
    }).filter(([, v]) => v !== undefined),
  ) as TokenPrice;
}
