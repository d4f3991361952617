import { claudeRelayError, glmError, kimiError, relayError, taskError } from './errorBodies';
import type { RequestContext } from './requestContext';
import type { Language, ModelSpec } from './types';
import type { KeyState, World } from './world';

/**
 * How errors raised inside the relay look on a route (wire-formats §7.1, §3.5, §6.7, §8.6, §9.5).
 * Middleware errors (auth, distributor, rate limit) ignore this and always use the middleware shape.
 * The provider tool routes keep their upstream's error bodies: `glm` = `{error:{code,message}}` with a
 * string code, `kimi` = `{error:{type,message}}`.
 */
export type ErrorFormat = 'openai' | 'claude' | 'task' | 'glm' | 'kimi';

/** One gateway endpoint. Every gateway route authenticates with TokenAuth first. */
export interface Route {
  method: string;
  /** `:name` captures one segment. */
  path: string;
  /** new-api's ModelRequestRateLimit, which the /v1 relay group has and /v1/models does not. */
  rateLimit: boolean;
  /** new-api's Distribute: take `model` from the body and demand a channel for it in the key's group. */
  distribute: boolean;
  /**
   * For routes whose body carries no JSON `model` (multipart uploads): the permission and billing
   * name Distribute checks instead of reading one from the body, as new-api derives the model from
   * the path on its relays without one (Midjourney, Suno, images, moderations).
   */
  model?: string;
  /** Distribute reads `model` from the multipart form, as new-api does for POST /v1/videos only. */
  formModel?: boolean;
  /** Largest body accepted; a larger one is answered 413 in the route's error format after auth. */
  maxBodyBytes?: number;
  errorFormat: ErrorFormat;
  /**
   * Replaces TokenAuth for a route that reads the key itself (new-api's /api/usage/token): returns the
   * key's state, or undefined once it has answered.
   */
  auth?: (http: RequestContext, world: World) => KeyState | undefined;
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
    return (
      this.world.models.get(this.modelId) ?? { id: this.modelId, owned_by: 'custom', supported_endpoint_types: [] }
    );
  }

  /**
   * An error the gateway itself raises inside the relay, in this route's shape. For `glm` the code is
   * GLM's business code (a string such as "1214"); for `kimi` it is the Kimi error `type`. Provider
   * shapes carry no request-id suffix: they are the upstream's bodies.
   */
  relayError(status: number, code: string, message: string, headers: Record<string, string> = {}): void {
    const id = this.http.requestId;
    switch (this.route.errorFormat) {
      case 'openai':
        return this.http.sendJson(status, relayError(message, code, id), headers);
      case 'claude':
        return this.http.sendJson(status, claudeRelayError(message, id), headers);
      case 'task':
        return this.http.sendJson(status, taskError(code, message), headers);
      case 'glm':
        return this.http.sendJson(status, glmError(code, message), headers);
      case 'kimi':
        return this.http.sendJson(status, kimiError(code, message), headers);
    }
  }

  /**
   * 413 for a body past `route.maxBodyBytes`. Connection: close so the rest of the upload, which the
   * origin discards, ends with the connection instead of being read to its end.
   */
  bodyTooLarge(): void {
    const limit = this.route.maxBodyBytes ?? 0;
    const mib = `${Math.round((limit / (1024 * 1024)) * 100) / 100} MiB`;
    const close = { Connection: 'close' };
    const form = (this.http.header('content-type') ?? '').toLowerCase().includes('multipart/form-data');
    switch (this.route.errorFormat) {
      case 'glm':
        return this.relayError(
          413,
          '1214',
          `file 参数非法：请求体超过 ${mib} 上限${form ? '（含表单内容）' : ''}。`,
          close,
        );
      case 'kimi':
        return this.relayError(
          413,
          'invalid_request_error',
          `Request too large: the request${form ? ', form content included,' : ''} exceeds the ${mib} limit`,
          close,
        );
      default:
        // new-api's common.GetRequestBody → ErrRequestBodyTooLarge, reported as read_request_body_failed.
        return this.relayError(413, 'read_request_body_failed', 'request body too large', close);
    }
  }
}
