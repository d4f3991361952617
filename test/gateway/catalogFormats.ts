import { MODEL_CREATED } from './routes/models';
import type { CatalogFormat, Modality, ModelSpec } from './types';
import { modelKind } from './world';

/**
 * The downloadable model catalog in each format a coding client might ship (wire-formats §10).
 * Tool entries are billing names, not models, so no catalog lists them. Extra hints (video sizes
 * and durations) go only into formats without a schema that would reject unknown keys.
 */

const PROVIDER_ID = 'model-gateway';
const PROVIDER_NAME = 'Model Gateway';

/** models.dev provider ids and names for new-api's `owned_by` channel names. */
const VENDORS: Record<string, { id: string; name: string }> = {
  openai: { id: 'openai', name: 'OpenAI' },
  claude: { id: 'anthropic', name: 'Anthropic' },
  zhipu_4v: { id: 'zhipuai', name: 'Zhipu AI' },
  zhipu: { id: 'zhipuai', name: 'Zhipu AI' },
  moonshot: { id: 'moonshotai', name: 'Moonshot AI' },
  ali: { id: 'alibaba', name: 'Alibaba' },
  deepseek: { id: 'deepseek', name: 'DeepSeek' },
};

type WireApi = 'anthropic-messages' | 'openai-responses' | 'openai-completions' | 'openai-images' | 'openai-video';

/** The described model with every catalog field filled in. */
interface Entry {
  id: string;
  name: string;
  ownedBy: string;
  endpointTypes: string[];
  api: WireApi;
  npm: string;
  reasoning: boolean;
  toolCall: boolean;
  input: Modality[];
  output: Modality[];
  context: number;
  maxOutput: number;
  /** USD per million tokens; 0 for per-call priced models. */
  cost: number;
  video?: { sizes: string[]; durations: number[] };
}

function entry(m: ModelSpec): Entry {
  const kind = modelKind(m);
  const types = m.supported_endpoint_types;
  const api: WireApi =
    kind === 'video'
      ? 'openai-video'
      : kind === 'image'
        ? 'openai-images'
        : types.includes('anthropic')
          ? 'anthropic-messages'
          : types.includes('openai-response')
            ? 'openai-responses'
            : 'openai-completions';
  const npm =
    api === 'anthropic-messages'
      ? '@ai-sdk/anthropic'
      : api === 'openai-responses'
        ? '@ai-sdk/openai'
        : '@ai-sdk/openai-compatible';
  const output: Modality[] = kind === 'video' ? ['video'] : kind === 'image' ? ['image'] : ['text'];
  return {
    id: m.id,
    name: m.name ?? m.id,
    ownedBy: m.owned_by,
    endpointTypes: types,
    api,
    npm,
    reasoning: m.reasoning ?? false,
    toolCall: m.toolCall ?? kind === 'chat',
    input: m.modalities?.input ?? ['text'],
    output: m.modalities?.output ?? output,
    context: m.limit?.context ?? 128_000,
    maxOutput: m.limit?.output ?? 8_192,
    cost: m.priceUsd === undefined ? 2 * (m.ratio ?? 1) : 0,
    ...(m.video ? { video: m.video } : {}),
  };
}

function openAIList(entries: Entry[]) {
  return {
    object: 'list',
    data: entries.map((e) => ({
      id: e.id,
      object: 'model',
      created: MODEL_CREATED,
      owned_by: e.ownedBy,
      supported_endpoint_types: e.endpointTypes,
      name: e.name,
      context_length: e.context,
      max_output_tokens: e.maxOutput,
      input_modalities: e.input,
      output_modalities: e.output,
      reasoning: e.reasoning,
      tool_call: e.toolCall,
      ...(e.video ? { supported_sizes: e.video.sizes, supported_durations: e.video.durations } : {}),
    })),
  };
}

/** The fields opencode and models.dev share for one model. */
function modelFields(e: Entry) {
  return {
    name: e.name,
    attachment: e.input.some((m) => m !== 'text'),
    reasoning: e.reasoning,
    tool_call: e.toolCall,
    temperature: true,
    modalities: { input: e.input, output: e.output },
    cost: { input: e.cost, output: e.cost },
    limit: { context: e.context, output: e.maxOutput },
  };
}

/** One provider entry pointing at the gateway, with per-model SDK overrides where the wire differs. */
function opencode(entries: Entry[], gatewayUrl: string) {
  const api = `${gatewayUrl}/v1`;
  const npm = '@ai-sdk/openai-compatible';
  const models = Object.fromEntries(
    entries.map((e) => [e.id, { ...modelFields(e), ...(e.npm === npm ? {} : { provider: { npm: e.npm, api } }) }]),
  );
  return {
    $schema: 'https://opencode.ai/config.json',
    provider: { [PROVIDER_ID]: { npm, name: PROVIDER_NAME, options: { baseURL: api }, models } },
  };
}

/** Keyed by upstream vendor, every provider's `api` being the gateway. */
function modelsDev(entries: Entry[], gatewayUrl: string) {
  const api = `${gatewayUrl}/v1`;
  const out: Record<
    string,
    { id: string; name: string; env: string[]; npm: string; api: string; doc: string; models: Record<string, object> }
  > = {};
  for (const e of entries) {
    const vendor = VENDORS[e.ownedBy] ?? { id: e.ownedBy, name: e.ownedBy };
    const provider = (out[vendor.id] ??= {
      id: vendor.id,
      name: vendor.name,
      env: [],
      npm: e.npm,
      api,
      doc: gatewayUrl,
      models: {},
    });
    provider.models[e.id] = {
      id: e.id,
      ...modelFields(e),
      release_date: '2025-09-01',
      last_updated: '2025-09-01',
      open_weights: false,
      ...(e.npm === provider.npm ? {} : { provider: { npm: e.npm, api } }),
    };
  }
  return out;
}

function modelsList(entries: Entry[]) {
  return {
    models: entries.map((e) => ({
      id: e.id,
      name: e.name,
      provider: e.ownedBy,
      api: e.api,
      reasoning: e.reasoning,
      tool_call: e.toolCall,
      input: e.input,
      output: e.output,
      contextWindow: e.context,
      maxTokens: e.maxOutput,
      ...(e.video ? { video: e.video } : {}),
    })),
  };
}

/** Valid JSON in no format a client should recognise. */
function unknownFormat(entries: Entry[]) {
  return { schema: 'acme-catalog/v9', entries: entries.map((e) => ({ slug: e.id, label: e.name })) };
}

export function renderCatalog(format: CatalogFormat, models: readonly ModelSpec[], gatewayUrl: string): string {
  const entries = models.filter((m) => modelKind(m) !== 'tool').map(entry);
  const doc = (() => {
    switch (format) {
      case 'openai-list':
        return openAIList(entries);
      case 'opencode':
        return opencode(entries, gatewayUrl);
      case 'models.dev':
        return modelsDev(entries, gatewayUrl);
      case 'models-list':
        return modelsList(entries);
      case 'unknown':
        return unknownFormat(entries);
    }
  })();
  return `${JSON.stringify(doc, null, 2)}\n`;
}
