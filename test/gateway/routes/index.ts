import type { Route } from '../route';
import { chatRoutes } from './chat';
import { completionRoutes } from './completions';
import { glmRoutes } from './glm';
import { imageRoutes } from './images';
import { kimiRoutes } from './kimi';
import { messagesRoutes } from './messages';
import { modelRoutes } from './models';
import { notImplementedRoutes } from './notImplemented';
import { responsesRoutes } from './responses';
import { videoRoutes } from './video';

/** Every gateway endpoint. A new endpoint family is a module exporting Route[] and one line here. */
export const gatewayRoutes: Route[] = [
  ...modelRoutes,
  ...chatRoutes,
  ...completionRoutes,
  ...responsesRoutes,
  ...messagesRoutes,
  ...notImplementedRoutes,
  ...glmRoutes,
  ...kimiRoutes,
  ...imageRoutes,
  ...videoRoutes,
];
