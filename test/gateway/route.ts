import { claudeRelayError, relayError, taskError } from './errorBodies';
import type { RequestContext } from './requestContext';
import type { Language, ModelSpec } from './types';
import type { KeyState, World } from './world';

/**
 * How errors raised inside the relay look on a route (wire-formats §7.1, §3.5, §6.7). Middleware
 * errors (auth, distributor, rate limit) ignore this and always use the middleware shape.
 */
export type ErrorFormat = 'openai' | 'claude' | 'task';

/** One gateway endpoint. Every gateway route authenticates with TokenAuth first. */
export interface Route {
  method: string;
  /** `:name` captures one segment. */
  path: string;
  /** new-api's ModelRequestRateLimit, which the /v1 relay group has and /v1/models does not. */
  rateLimit: boolean;
  /** new-api's Distribute: take `model` from the body and demand a channel for it in the key's group. */
  distribute: boolean;
  errorFormat: ErrorFormat;
  handle: (ctx: GatewayContext) => void | Promise<void>;
}

export function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (w.startsWith(':')) {
      if (!g) return undefined;
      params[w.slice(1)] = decodeURIComponent(g);
    } else if (w !== g) {
      return undefined;
    }
  }
  return params;
}

/** A request that has passed the middleware chain, as the route's handler sees it. */
export class GatewayContext {
  constructor(
    readonly http: RequestContext,
    readonly world: World,
    readonly route: Route,
    readonly params: Record<string, string>,
    readonly key: KeyState,
    readonly lang: Language,
    /** The model Distribute accepted; '' on routes without Distribute. */
    readonly modelId: string,
  ) {}

  /** The accepted model; one granted to a group but absent from the model list counts as new-api's "custom". */
  get model(): ModelSpec {
    return this.world.models.get(this.modelId) ?? { id: this.modelId, owned_by: 'custom', supported_endpoint_types: [] };
  }

  /** An error the gateway itself raises inside the relay, in this route's shape. */
  relayError(status: number, code: string, message: string): void {
    const id = this.http.requestId;
    switch (this.route.errorFormat) {
      case 'openai':
        return this.http.sendJson(status, relayError(message, code, id));
      case 'claude':
        return this.http.sendJson(status, claudeRelayError(message, id));
      case 'task':
        return this.http.sendJson(status, taskError(code, message));
    }
  }
}
