import * as l10n from '@vscode/l10n';

/**
 * What people call the providers behind the gateway's channel ids (`owned_by`: `zhipu_4v`, `ali`,
 * `custom`…). Functions, not strings: the display language's bundle is read when a name is shown.
 * Brand names that are the same in every language are not localised.
 */
const NAMES: Record<string, () => string> = {
  openai: () => 'OpenAI',
  azure: () => 'Azure OpenAI',
  ali: () => l10n.t('Alibaba Bailian'),
  zhipu: () => l10n.t('Zhipu GLM'),
  zhipu_4v: () => l10n.t('Zhipu GLM'),
  moonshot: () => l10n.t('Moonshot Kimi'),
  deepseek: () => 'DeepSeek',
  claude: () => 'Anthropic Claude',
  anthropic: () => 'Anthropic Claude',
  gemini: () => 'Google Gemini',
  'vertex-ai': () => 'Google Vertex AI',
  baidu: () => l10n.t('Baidu Qianfan'),
  baidu_v2: () => l10n.t('Baidu Qianfan'),
  xunfei: () => l10n.t('iFlytek Spark'),
  tencent: () => l10n.t('Tencent Hunyuan'),
  volcengine: () => l10n.t('Volcengine Doubao'),
  doubao: () => l10n.t('Volcengine Doubao'),
  minimax: () => 'MiniMax',
  mistral: () => 'Mistral AI',
  xai: () => 'xAI Grok',
  cohere: () => 'Cohere',
  siliconflow: () => l10n.t('SiliconFlow'),
  openrouter: () => 'OpenRouter',
  ollama: () => 'Ollama',
  perplexity: () => 'Perplexity',
  jina: () => 'Jina AI',
  // new-api's word for a model missing from its own table, when neither the catalog nor the name says whose.
  custom: () => l10n.t('Custom channel'),
};

/**
 * The name to show for a provider id. An id not in the table (a new channel type, or a catalog's
 * own provider name such as "Acme AI") is shown as it came: better its own words than a guess.
 */
export function providerName(id: string): string {
  const known = NAMES[id.trim().toLowerCase()];
  return known ? known() : id;
}
