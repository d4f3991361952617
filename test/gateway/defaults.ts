import type { KeySpec, ModelSpec } from './types';

/**
 * The default world: a default and a vip group, a dozen models across the upstreams the spec names,
 * and one key per interesting key state. Keys are fake but shaped like real ones (sk- + 48).
 */

export const DEMO_KEY = 'sk-Y1XGaWtR4mgeLLsijOWLeThxnVgp09PKzw3KE8A0CxOuWVG1';
export const VIP_KEY = 'sk-6wt2f1BpM0dsSIbi5KywhxrO980oVKt41qHB9sjma7LJios9';
export const ZERO_QUOTA_KEY = 'sk-ZYiMmTBd80GaKEmJ0s9eL8mc5nqC1FUiHbqxQQ9c3mG2EGHk';
/** Its own quota ($0.0005 = 250 quota units) is below any text pre-consumption (≥ 500 units). */
export const LOW_TOKEN_QUOTA_KEY = 'sk-W7MxZT9QZ9L6Vj89FN3QLtOUTuIwLUESCIGxW0R30qBt1Suj';
/** Two requests per minute, Redis backend: the third gets a Chinese 429 message. */
export const RATE_LIMITED_KEY = 'sk-MiA6wmqK2xYailoxRV1Epc3LwhttWsWUNyS6gJv7nBaDqP8c';
/** Two requests per minute, in-memory backend: the third gets a 429 with an empty body. */
export const MEMORY_RATE_LIMITED_KEY = 'sk-VGhV6GKsBlAea6nyEUewcWUsR2y3Yt7qmJFqLa19MueMoxkq';
export const DISABLED_KEY = 'sk-ObfQWbswzlSuTGABzf640emWKOsFhPqCwgt7oQFkTKtvUZBp';
export const EXPIRED_KEY = 'sk-bryGp5shPQ9npKpFkm2jID5iAo0lHwDFFrX6uKWu7CVle9U9';
/**
 * A second key in its own group `team`: a shorter model list than the demo key's,
 * with qwen-max (which the demo key may not call), gpt-4o-mini, a video model and Kimi's file extraction (which both may), and a quota of
 * its own (US$5), for the tests of several keys.
 */
export const TEAM_KEY = 'sk-K4EQwHk4xctNIsGwVqnPFc195IY84HfxlChCeRtz2kRUzkQw';
/** Limited to gpt-4o-mini, qwen-plus and qwen-max; qwen-max is whitelisted but not granted to its group. */
export const WHITELIST_KEY = 'sk-g1Wushcb64OIW5cA6kVfxOJ595f7JkPHe0Mon2FnWajt0Xna';

/**
 * The provider tool routes (/providers/glm, /providers/kimi) answer a key that cannot pay for a call
 * in the provider's own dialect: GLM `1113` with HTTP 429, Kimi `exceeded_current_quota_error`.
 * The double decides this by quota alone (user quota or the key's own quota below the call's price),
 * exactly as the /v1 routes decide their 403, so no flag is needed: this name is the zero-quota key
 * under the name tool tests look for. Any key brought below the price with setQuota behaves the same.
 */
export const GLM_NO_BALANCE_KEY = ZERO_QUOTA_KEY;

/** Search, web reading, file parsing and upload cost this per call when not priced separately (spec: Limits). */
export const DEFAULT_TOOL_PRICE_USD = 0.1;

/**
 * Upload request size for GLM's sync file parse and Kimi's file upload: 20 MiB per request, counting
 * the whole multipart form (boundaries and part headers included), not just the file.
 */
export const TOOL_LIMIT_BYTES = 20 * 1024 * 1024;

/** Granted to group vip only. */
export const VIP_ONLY_MODEL = 'qwen-max';

export const DEFAULT_MODELS: readonly ModelSpec[] = [
  {
    id: 'gpt-4o-mini',
    owned_by: 'openai',
    supported_endpoint_types: ['openai', 'openai-response'],
    ratio: 0.075,
    name: 'GPT-4o mini',
    modalities: { input: ['text', 'image'], output: ['text'] },
    limit: { context: 128_000, output: 16_384 },
  },
  {
    id: 'gpt-5',
    owned_by: 'openai',
    supported_endpoint_types: ['openai', 'openai-response'],
    ratio: 0.625,
    name: 'GPT-5',
    reasoning: true,
    modalities: { input: ['text', 'image'], output: ['text'] },
    limit: { context: 400_000, output: 128_000 },
  },
  {
    id: 'claude-sonnet-4-5',
    owned_by: 'claude',
    supported_endpoint_types: ['anthropic', 'openai'],
    ratio: 1.5,
    name: 'Claude Sonnet 4.5',
    reasoning: true,
    modalities: { input: ['text', 'image', 'pdf'], output: ['text'] },
    limit: { context: 200_000, output: 64_000 },
  },
  {
    id: 'glm-4.6',
    owned_by: 'zhipu_4v',
    supported_endpoint_types: ['openai'],
    ratio: 0.3,
    name: 'GLM-4.6',
    reasoning: true,
    limit: { context: 200_000, output: 128_000 },
  },
  {
    id: 'kimi-k2-0905-preview',
    owned_by: 'moonshot',
    supported_endpoint_types: ['openai'],
    ratio: 0.3,
    name: 'Kimi K2 0905',
    limit: { context: 262_144, output: 16_384 },
  },
  {
    // A Kimi-type thinking model: it always reasons, and refuses a tool-call turn sent back
    // without the reasoning_content it produced (see toolTurns.ts).
    id: 'kimi-k2-thinking',
    owned_by: 'moonshot',
    supported_endpoint_types: ['openai'],
    ratio: 0.3,
    name: 'Kimi K2 Thinking',
    reasoning: true,
    limit: { context: 262_144, output: 16_384 },
  },
  {
    id: 'qwen-plus',
    owned_by: 'ali',
    supported_endpoint_types: ['openai'],
    ratio: 0.4,
    name: 'Qwen Plus',
    reasoning: true,
    limit: { context: 131_072, output: 16_384 },
  },
  {
    id: VIP_ONLY_MODEL,
    owned_by: 'ali',
    supported_endpoint_types: ['openai'],
    ratio: 1.2,
    name: 'Qwen Max',
    limit: { context: 32_768, output: 8_192 },
  },
  {
    id: 'deepseek-r1',
    owned_by: 'deepseek',
    supported_endpoint_types: ['openai'],
    ratio: 0.275,
    name: 'DeepSeek R1',
    reasoning: true,
    toolCall: false,
    limit: { context: 65_536, output: 8_192 },
  },
  {
    // DeepSeek's chat model takes fill-in-the-middle (prompt + suffix) on /v1/completions.
    id: 'deepseek-chat',
    owned_by: 'deepseek',
    supported_endpoint_types: ['openai'],
    ratio: 0.135,
    name: 'DeepSeek V3',
    limit: { context: 65_536, output: 8_192 },
  },
  {
    // A Qwen coder model: fill-in-the-middle with the FIM tokens inside prompt (Bailian).
    id: 'qwen2.5-coder-32b-instruct',
    owned_by: 'ali',
    supported_endpoint_types: ['openai'],
    ratio: 0.5,
    name: 'Qwen2.5 Coder 32B',
    limit: { context: 131_072, output: 8_192 },
  },
  {
    id: 'gpt-image-1',
    owned_by: 'openai',
    supported_endpoint_types: ['image-generation', 'openai'],
    ratio: 5,
    name: 'GPT Image 1',
    modalities: { input: ['text', 'image'], output: ['image'] },
  },
  {
    // Alibaba's Wan text-to-image model behind new-api's converted Ali channel: answers carry DashScope
    // result URLs (on the CDN origin) unless `response_format` is `b64_json`. Priced per image.
    id: 'wanx2.1-t2i-turbo',
    owned_by: 'ali',
    supported_endpoint_types: ['image-generation'],
    priceUsd: 0.02,
    name: 'Wan 2.1 T2I Turbo',
    modalities: { input: ['text'], output: ['image'] },
  },
  {
    id: 'wan2.5-t2v-preview',
    owned_by: 'ali',
    supported_endpoint_types: ['openai-video'],
    priceUsd: 0.25,
    name: 'Wan 2.5 T2V Preview',
    // The spec verified only this size and duration for this model; it rejects 1280*720.
    video: { sizes: ['832*480'], durations: [5] },
  },
  {
    id: 'glm-file-parser',
    owned_by: 'zhipu_4v',
    supported_endpoint_types: ['openai'],
    kind: 'tool',
    priceUsd: 0.1,
  },
  {
    // Unknown to new-api's static model table, hence "custom" and no endpoint types.
    id: 'kimi-file-extract',
    owned_by: 'custom',
    supported_endpoint_types: [],
    priceUsd: 0.1,
  },
];

const ALL_IDS = DEFAULT_MODELS.map((m) => m.id);

export const DEFAULT_GROUPS: Readonly<Record<string, readonly string[]>> = {
  default: ALL_IDS.filter((id) => id !== VIP_ONLY_MODEL),
  vip: ALL_IDS,
  team: [VIP_ONLY_MODEL, 'gpt-4o-mini', 'wan2.5-t2v-preview', 'kimi-file-extract'],
};

export const DEFAULT_KEYS: readonly KeySpec[] = [
  { key: DEMO_KEY, group: 'default', quotaUsd: 100 },
  { key: VIP_KEY, group: 'vip' },
  { key: TEAM_KEY, group: 'team', quotaUsd: 100, tokenQuotaUsd: 5 },
  { key: ZERO_QUOTA_KEY, group: 'default', quotaUsd: 0 },
  { key: LOW_TOKEN_QUOTA_KEY, group: 'default', quotaUsd: 100, tokenQuotaUsd: 0.0005 },
  { key: RATE_LIMITED_KEY, group: 'default', rateLimit: { requests: 2, windowMs: 60_000, backend: 'redis' } },
  { key: MEMORY_RATE_LIMITED_KEY, group: 'default', rateLimit: { requests: 2, windowMs: 60_000, backend: 'memory' } },
  { key: DISABLED_KEY, group: 'default', status: 'disabled' },
  { key: EXPIRED_KEY, group: 'default', status: 'expired' },
  { key: WHITELIST_KEY, group: 'default', modelWhitelist: ['gpt-4o-mini', 'qwen-plus', VIP_ONLY_MODEL] },
];
