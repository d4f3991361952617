import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import type { HttpClient } from '../http';
import { isRecord, lazySchema, positiveCount } from '../validate';
import type { KeyModel, ModelLimits } from './types';

const openAiList = lazySchema(() =>
  z.looseObject({
    data: z.array(
      z.looseObject({
        id: z.string(),
        owned_by: z.optional(z.nullable(z.string())),
        supported_endpoint_types: z.optional(z.nullable(z.array(z.string()))),
        // Limits some gateways list (OpenRouter: `context_length`, `top_provider.max_completion_tokens`).
        context_length: z.optional(z.unknown()),
        context_window: z.optional(z.unknown()),
        max_output_tokens: z.optional(z.unknown()),
        max_completion_tokens: z.optional(z.unknown()),
        top_provider: z.optional(z.unknown()),
      }),
    ),
  }),
);

/**
 * `GET /v1/models` with the key `key` (an id; the first key when absent): the only truth about what
 * this key may call. Idempotent, so transient failures are retried by the client.
 */
export async function fetchKeyModels(http: HttpClient, signal?: AbortSignal, key?: string): Promise<KeyModel[]> {
  const body = await http.sendJson(
    { method: 'GET', url: http.endpoints.models, signal, key },
    openAiList(),
    l10n.t("The gateway's model list"),
  );
  return body.data.map((m) => {
    const limits = listedLimits(m);
    return {
      id: m.id,
      ownedBy: m.owned_by ?? undefined,
      endpointTypes: m.supported_endpoint_types ?? undefined,
      ...(limits ? { limits } : {}),
    };
  });
}

/**
 * The limits an entry of the list gives, read leniently: a field of another type or a figure that
 * is not a positive number is no figure (the list is for availability first, and must not fail on
 * a gateway's extra fields).
 */
export function listedLimits(entry: Record<string, unknown>): ModelLimits | undefined {
  const top = isRecord(entry.top_provider) ? entry.top_provider : {};
  const contextWindow =
    positiveCount(entry.context_length) ?? positiveCount(entry.context_window) ?? positiveCount(top.context_length);
  const maxOutput =
    positiveCount(entry.max_output_tokens) ??
    positiveCount(entry.max_completion_tokens) ??
    positiveCount(top.max_completion_tokens);
  if (contextWindow === undefined && maxOutput === undefined) return undefined;
  return {
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    ...(maxOutput !== undefined ? { maxOutput } : {}),
  };
}
