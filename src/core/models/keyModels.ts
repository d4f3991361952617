import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import type { HttpClient } from '../http';
import { lazySchema } from '../validate';
import type { KeyModel } from './types';

const openAiList = lazySchema(() =>
  z.looseObject({
    data: z.array(
      z.looseObject({
        id: z.string(),
        owned_by: z.optional(z.nullable(z.string())),
        supported_endpoint_types: z.optional(z.nullable(z.array(z.string()))),
      }),
    ),
  }),
);

/**
 * `GET /v1/models` with the key: the only truth about what this key may call.
 * Idempotent, so transient failures are retried by the client.
 */
export async function fetchKeyModels(http: HttpClient, signal?: AbortSignal): Promise<KeyModel[]> {
  const body = await http.sendJson({ method: 'GET', url: http.endpoints.models, signal }, openAiList(), l10n.t("The gateway's model list"));
  return body.data.map((m) => ({
    id: m.id,
    ownedBy: m.owned_by ?? undefined,
    endpointTypes: m.supported_endpoint_types ?? undefined,
  }));
}
