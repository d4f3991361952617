import { notFoundError } from './errorBodies';
import { languageFor } from './i18n';
import { concurrencyLimit, distribute, rateLimit, tokenAuth } from './middleware';
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
    const found = findRoute(routes, http.method, http.path);
    if (!found) return http.sendJson(404, notFoundError(http.method, http.path));

    const { route, params } = found;
    const lang = languageFor(world.language, http.header('accept-language'));
    const key = route.auth ? route.auth(http, world) : tokenAuth(http, world, lang);
    if (!key) return;
    if (route.rateLimit && !rateLimit(http, key)) return;
    // new-api reads (and size-checks) the body first thing after the middleware that need no body.
    if (http.bodyTooLarge) return new GatewayContext(http, world, route, params, key, lang, '').bodyTooLarge();
    // Routes without a JSON `model` either name theirs (`route.model`, e.g. the GLM parser and Kimi
    // upload under their tool entries) or skip Distribute: see routes/glm.ts and routes/kimi.ts.
    const modelId = route.distribute ? distribute(http, world, key, lang, route.model, route.formModel) : '';
    if (modelId === undefined) return;
    // Only relays and submissions take a slot: task queries and downloads never do.
    if (route.distribute && !concurrencyLimit(http, key)) return;
    if (route.distribute && world.relayHold) await world.relayHold;
    await route.handle(new GatewayContext(http, world, route, params, key, lang, modelId));
  };
}

function findRoute(
  routes: Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | undefined {
  for (const route of routes) {
    const params = route.method === method ? matchPath(route.path, path) : undefined;
    if (params) return { route, params };
  }
  return undefined;
}

/** For the origin server: how much body the matching route accepts, read before any middleware runs. */
export function gatewayBodyLimit(routes: Route[]): (method: string, path: string) => number | undefined {
  return (method, path) => findRoute(routes, method, path)?.route.maxBodyBytes;
}
