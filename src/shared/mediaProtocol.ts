/**
 * Every message between the extension host and the Media Studio webview, as zod schemas both sides
 * import. The host owns all state (models, the image job, video tasks, the gallery); the webview
 * renders the latest full `snapshot` and sends intents. There are no deltas, so a view that was
 * hidden, reloaded or missed a message is always one snapshot away from being right.
 */
import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import { formatDuration } from './format';
import { displaySize, parseSize, resolutionTier } from './mediaSize';

export const mediaTabSchema = z.enum(['images', 'video']);
export type MediaTab = z.infer<typeof mediaTabSchema>;

export const imageRouteSchema = z.enum(['images', 'responses']);
export type ImageRoute = z.infer<typeof imageRouteSchema>;

export const mediaModelSchema = z.object({ id: z.string(), provider: z.string() });

export const videoModelSchema = z.object({
  id: z.string(),
  provider: z.string(),
  sizes: z.array(z.string()),
  durations: z.array(z.number()),
  defaultSize: z.optional(z.string()),
  defaultDuration: z.optional(z.number()),
  /** Where the hints come from: the catalog, the values known for the Wan-type model, or nothing known. */
  hintSource: z.enum(['catalog', 'verified', 'none']),
});
export type VideoModelView = z.infer<typeof videoModelSchema>;

export const imageJobSchema = z.object({
  id: z.string(),
  route: imageRouteSchema,
  model: z.string(),
  outerModel: z.optional(z.string()),
  prompt: z.string(),
  startedAt: z.number(),
  finishedAt: z.optional(z.number()),
  state: z.enum(['running', 'done', 'failed', 'cancelled']),
  message: z.optional(z.string()),
  /** The latest partial preview while streaming, as a data: URL. */
  partial: z.optional(z.object({ src: z.string(), index: z.number() })),
  files: z.array(z.string()),
});
export type ImageJobView = z.infer<typeof imageJobSchema>;

/** A video task's phases on the client (the transitions are in core/media/videoTaskStates.ts). */
export const TASK_PHASES = ['submitting', 'running', 'downloading', 'succeeded', 'failed', 'stopped'] as const;

/** What identifies a video task and what was asked of it: stored by the host and shown by the view alike. */
export const taskIdentityShape = {
  localId: z.string(),
  taskId: z.optional(z.string()),
  model: z.string(),
  prompt: z.string(),
  size: z.string(),
  duration: z.number(),
};

export const taskViewSchema = z.object({
  ...taskIdentityShape,
  phase: z.enum(TASK_PHASES),
  /** `data.status` as the gateway reported it last. */
  remoteStatus: z.optional(z.string()),
  progress: z.optional(z.number()),
  statusText: z.string(),
  createdAt: z.number(),
  finishedAt: z.optional(z.number()),
  error: z.optional(z.object({ message: z.string(), stage: z.string() })),
  /** What is known about billing of a failed task (charged, not charged, may be refunded). */
  billing: z.optional(z.string()),
  file: z.optional(z.object({ path: z.string(), label: z.string() })),
  download: z.optional(z.object({ received: z.number(), total: z.optional(z.number()) })),
  canCancel: z.boolean(),
  canResume: z.boolean(),
  canRetryDownload: z.boolean(),
  canResubmit: z.boolean(),
});
export type TaskView = z.infer<typeof taskViewSchema>;

export const galleryItemSchema = z.object({
  id: z.string(),
  kind: z.enum(['image', 'video']),
  prompt: z.string(),
  model: z.string(),
  /** The size that was asked for. */
  size: z.string(),
  /** The saved file's real size, from its header: null when the header does not say, absent while not yet read. */
  pixels: z.optional(z.nullable(z.object({ width: z.number(), height: z.number() }))),
  createdAt: z.number(),
  /** Path as shown: relative to the workspace where possible. */
  label: z.string(),
  /** Webview address of an image thumbnail. */
  src: z.optional(z.string()),
  exists: z.boolean(),
});
export type GalleryItemView = z.infer<typeof galleryItemSchema>;

export const noticeSchema = z.object({
  message: z.string(),
  action: z.optional(z.enum(['setKey', 'openSettings', 'refreshModels'])),
});

export const mediaSnapshotSchema = z.object({
  imageModels: z.array(mediaModelSchema),
  /** Language models that can carry the image tool on the Responses protocol. */
  outerModels: z.array(mediaModelSchema),
  videoModels: z.array(videoModelSchema),
  defaults: z.object({
    route: imageRouteSchema,
    imageModel: z.optional(z.string()),
    outerModel: z.optional(z.string()),
    videoModel: z.optional(z.string()),
    imageSize: z.string(),
    imageCount: z.number(),
    stream: z.boolean(),
  }),
  imageJob: z.optional(imageJobSchema),
  tasks: z.array(taskViewSchema),
  gallery: z.array(galleryItemSchema),
  outputFolder: z.string(),
  notice: z.optional(noticeSchema),
});
export type MediaSnapshot = z.infer<typeof mediaSnapshotSchema>;

/** Host → webview. */
export const mediaHostMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('snapshot'), state: mediaSnapshotSchema }),
  z.object({ type: z.literal('showTab'), tab: mediaTabSchema }),
]);
export type MediaHostMessage = z.infer<typeof mediaHostMessageSchema>;

export const generateImageSchema = z.object({
  route: imageRouteSchema,
  model: z.string(),
  outerModel: z.optional(z.string()),
  prompt: z.string(),
  n: z.number(),
  size: z.string(),
  stream: z.boolean(),
});

export const submitVideoSchema = z.object({
  model: z.string(),
  prompt: z.string(),
  size: z.string(),
  duration: z.number(),
});

/** Webview → host. */
export const mediaWebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('generateImage'), request: generateImageSchema }),
  z.object({ type: z.literal('cancelImage') }),
  z.object({ type: z.literal('submitVideo'), request: submitVideoSchema }),
  z.object({
    type: z.literal('task'),
    action: z.enum(['cancel', 'resume', 'retryDownload', 'resubmit', 'forget', 'open', 'openExternal', 'reveal']),
    id: z.string(),
  }),
  z.object({
    type: z.literal('item'),
    action: z.enum(['open', 'reveal', 'copyPath', 'insertLink', 'openExternal', 'askInChat', 'remove']),
    id: z.string(),
  }),
  z.object({
    type: z.literal('action'),
    action: z.enum(['setKey', 'openSettings', 'refreshModels', 'openOutputFolder']),
  }),
]);
export type MediaWebviewMessage = z.infer<typeof mediaWebviewMessageSchema>;

/** Shown before a video is submitted: video is billed by model, duration and resolution. */
export function videoBillingNote(p: { model: string; size: string; duration: number }): string {
  const size = parseSize(p.size);
  const tier = size ? resolutionTier(size) : undefined;
  const shown = size ? displaySize(size) : p.size;
  return l10n.t(
    "Billed per task by model, duration and resolution: {0}, {1}, {2}. The gateway sets each model's price; a longer or larger video costs more.",
    p.model,
    formatDuration(p.duration * 1000),
    tier ? `${shown} (${tier})` : shown,
  );
}
