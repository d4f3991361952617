import { notImplementedError } from '../errorBodies';
import type { Route } from '../route';

/**
 * Paths new-api registers only to answer 501 (wire-formats §7.2). Distribute is left out so they
 * answer 501 as the notes record instead of first demanding a model.
 */
const PATHS: [method: string, path: string][] = [
  ['POST', '/v1/images/variations'],
  ['GET', '/v1/files'],
  ['POST', '/v1/files'],
  ['DELETE', '/v1/files/:id'],
  ['GET', '/v1/files/:id'],
  ['GET', '/v1/files/:id/content'],
  ['POST', '/v1/fine-tunes'],
  ['GET', '/v1/fine-tunes'],
  ['GET', '/v1/fine-tunes/:id'],
  ['POST', '/v1/fine-tunes/:id/cancel'],
  ['GET', '/v1/fine-tunes/:id/events'],
  ['DELETE', '/v1/models/:model'],
];

export const notImplementedRoutes: Route[] = PATHS.map(([method, path]) => ({
  method,
  path,
  rateLimit: true,
  distribute: false,
  errorFormat: 'openai',
  handle: (ctx) => ctx.http.sendJson(501, notImplementedError()),
}));
