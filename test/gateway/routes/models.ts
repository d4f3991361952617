import { unknownModelError } from '../errorBodies';
import type { GatewayContext, Route } from '../route';

/** new-api reports this fixed creation time for every model it lists (wire-formats §5.2). */
export const MODEL_CREATED = 1626777600;

interface OpenAIModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  supported_endpoint_types: string[] | null;
}

function openAIModel(ctx: GatewayContext, id: string): OpenAIModel {
  const spec = ctx.world.models.get(id);
  return {
    id,
    object: 'model',
    created: MODEL_CREATED,
    owned_by: spec?.owned_by ?? 'custom',
    supported_endpoint_types: spec?.supported_endpoint_types ?? [],
  };
}

function anthropicModel(id: string) {
  const createdAt = new Date(MODEL_CREATED * 1000).toISOString().replace('.000Z', 'Z');
  return { id, created_at: createdAt, display_name: id, type: 'model' };
}

/** new-api picks the Anthropic format only when both headers are present. */
function wantsAnthropic(ctx: GatewayContext): boolean {
  return Boolean(ctx.http.header('x-api-key') && ctx.http.header('anthropic-version'));
}

function listModels(ctx: GatewayContext): void {
  const models = ctx.world.visibleModels(ctx.key).map((id) => openAIModel(ctx, id));
  if (!wantsAnthropic(ctx)) {
    // Go marshals this map with its keys sorted.
    return ctx.http.sendJson(200, { data: models, object: 'list', success: true });
  }
  const data = models.map((m) => anthropicModel(m.id));
  const first = data[0];
  const last = data[data.length - 1];
  if (!first || !last) {
    // new-api indexes data[0] unchecked; its recovery middleware turns the panic into this 500.
    return ctx.http.sendJson(500, {
      error: {
        message: 'Panic detected, error: runtime error: index out of range [0] with length 0',
        type: 'new_api_panic',
      },
    });
  }
  ctx.http.sendJson(200, { data, first_id: first.id, has_more: false, last_id: last.id });
}

/**
 * new-api answers from its static model table, regardless of the key's group, and the endpoint
 * types are left unset (null). An unknown id is an error body with HTTP 200.
 */
function retrieveModel(ctx: GatewayContext): void {
  const id = ctx.params.model ?? '';
  if (!ctx.world.models.has(id)) return ctx.http.sendJson(200, unknownModelError(id));
  if (wantsAnthropic(ctx)) return ctx.http.sendJson(200, anthropicModel(id));
  ctx.http.sendJson(200, { ...openAIModel(ctx, id), supported_endpoint_types: null });
}

/** The /v1/models group has TokenAuth only: no rate limit, no Distribute. */
export const modelRoutes: Route[] = [
  { method: 'GET', path: '/v1/models', rateLimit: false, distribute: false, errorFormat: 'openai', handle: listModels },
  {
    method: 'GET',
    path: '/v1/models/:model',
    rateLimit: false,
    distribute: false,
    errorFormat: 'openai',
    handle: retrieveModel,
  },
];
