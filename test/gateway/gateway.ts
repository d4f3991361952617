import { notFoundError } from './errorBodies';
import { languageFor } from './i18n';
import { distribute, rateLimit, tokenAuth } from './middleware';
import type { Dispatch } from './originServer';
import { GatewayContext, matchPath, type Route } from './route';
import type { World } from './world';

/**
 * The gateway origin: route lookup, then new-api's chain TokenAuth → ModelRequestRateLimit →
 * Distribute as each route asks, then the handler. Unknown paths answer 404 before any middleware,
 * as new-api's NoRoute handler does.
 */
export function gatewayDispatch(world: World, routes: Route[]): Dispatch {
  return async (http) => {
    let found: { route: Route; params: Record<string, string> } | undefined;
    for (const route of routes) {
      const params = route.method === http.method ? matchPath(route.path, http.path) : undefined;
      if (params) {
        found = { route, params };
        break;
      }
    }
    if (!found) return http.sendJson(404, notFoundError(http.method, http.path));

    const { route, params } = found;
    const lang = languageFor(world.language, http.header('accept-language'));
    const key = tokenAuth(http, world, lang);
    if (!key) return;
    if (route.rateLimit && !rateLimit(http, key)) return;
    const modelId = route.distribute ? distribute(http, world, key, lang) : '';
    if (modelId === undefined) return;
    await route.handle(new GatewayContext(http, world, route, params, key, lang, modelId));
  };
}
