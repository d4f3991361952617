import type { Language } from './types';

/**
 * The middleware messages new-api translates (wire-formats §7.2). Quota and rate-limit messages are
 * hard-coded in Chinese upstream, so they live with their callers instead.
 */
const MESSAGES = {
  'token.invalid': { en: 'Invalid token', 'zh-CN': '无效的令牌' },
  'distributor.invalid_request': { en: 'Invalid request: {Error}', 'zh-CN': '无效的请求，{Error}' },
  'distributor.model_name_required': {
    en: 'Model name not specified, model name cannot be empty',
    'zh-CN': '未指定模型名称，模型名称不能为空',
  },
  'distributor.no_available_channel': {
    en: 'No available channel for model {Model} under group {Group} (distributor)',
    'zh-CN': '分组 {Group} 下模型 {Model} 无可用渠道（distributor）',
  },
  'distributor.token_model_forbidden': {
    en: 'This token has no access to model {Model}',
    'zh-CN': '该令牌无权访问模型 {Model}',
  },
  'distributor.token_no_model_access': {
    en: 'This token has no access to any models',
    'zh-CN': '该令牌无权访问任何模型',
  },
} satisfies Record<string, Record<Language, string>>;

export type MessageKey = keyof typeof MESSAGES;

export function translate(lang: Language, key: MessageKey, vars: Record<string, string> = {}): string {
  return MESSAGES[key][lang].replace(/\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole);
}

/** new-api falls back to Accept-Language when the user has no saved language, then to English. */
export function languageFor(saved: Language | undefined, acceptLanguage: string | undefined): Language {
  if (saved) return saved;
  return acceptLanguage?.trim().toLowerCase().startsWith('zh') ? 'zh-CN' : 'en';
}
