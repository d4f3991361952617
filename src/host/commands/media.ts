import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { GatewayError, isGatewayError } from '../../core/errors';
import { parseWith } from '../../core/validate';
import { imageRouteSchema, mediaTabSchema } from '../../shared/mediaProtocol';
import type { MediaStudio } from '../media/mediaStudio';
import type { VideoTaskSummary } from '../media/videoActions';
import { showError } from '../notify';
import type { CommandContext, CommandDef } from './types';
import { words } from '../../shared/words';

const openArgs = z.optional(z.object({ tab: z.optional(mediaTabSchema) }));

const imageArgs = z.object({
  prompt: z.string(),
  model: z.optional(z.string()),
  route: z.optional(imageRouteSchema),
  outerModel: z.optional(z.string()),
  n: z.optional(z.number().check(z.int(), z.gte(1), z.lte(10))),
  size: z.optional(z.string()),
  stream: z.optional(z.boolean()),
});

const videoArgs = z.object({
  prompt: z.string(),
  model: z.optional(z.string()),
  size: z.optional(z.string()),
  duration: z.optional(z.number().check(z.int(), z.gte(1))),
  /** A reference image file for a model on OpenAI's video API (`input_reference`). */
  inputReference: z.optional(z.string()),
  /** Resolve with the saved file (or the failure) instead of the accepted task id. */
  wait: z.optional(z.boolean()),
});

const taskArgs = z.union([z.string(), z.object({ taskId: z.string() })]);

export type GenerateVideoResult = VideoTaskSummary;

/** A command on one video task, given its id (or `{taskId}`). */
const taskCommand = (
  id: string,
  title: () => string,
  act: (s: MediaStudio, taskId: string) => Promise<unknown>,
): CommandDef => ({
  id,
  async run(ctx: CommandContext, arg: unknown) {
    const given = parseWith(taskArgs, arg, vscode.l10n.t('The argument of "{0}"', title()));
    return act(ctx.media, typeof given === 'string' ? given : given.taskId);
  },
});

/**
 * Media Studio commands. Without arguments the generate commands open the panel on their tab (it
 * shows the parameters and, for video, the billing before anything is sent); with arguments they
 * run headless and return the result.
 */
export const mediaCommands: CommandDef[] = [
  {
    id: 'modelGateway.openMediaStudio',
    run(ctx: CommandContext, arg: unknown) {
      const tab = parseWith(openArgs, arg, vscode.l10n.t('The argument of "Open Media Studio"'))?.tab;
      ctx.media.open(tab);
      return { opened: true, ...(tab ? { tab } : {}) };
    },
  },
  {
    id: 'modelGateway.generateImage',
    async run(ctx: CommandContext, arg: unknown) {
      if (arg === undefined) {
        ctx.media.open('images');
        return undefined;
      }
      const args = parseWith(imageArgs, arg, vscode.l10n.t('The argument of "Generate Image"'));
      try {
        return await ctx.media.images.generate(args);
      } catch (err) {
        showError(err, ctx.services.log);
        throw err;
      }
    },
  },
  {
    id: 'modelGateway.generateVideo',
    async run(ctx: CommandContext, arg: unknown): Promise<GenerateVideoResult | undefined> {
      if (arg === undefined) {
        ctx.media.open('video');
        return undefined;
      }
      const { wait, ...args } = parseWith(videoArgs, arg, vscode.l10n.t('The argument of "Generate Video"'));
      const s = ctx.media;
      let task;
      try {
        task = await s.videos.submit(args);
      } catch (err) {
        showError(err, ctx.services.log);
        throw err;
      }
      if (!wait) return s.videos.summary(task);
      // Waiting follows the task across a reload of the task list; its outcome is the result.
      return s.videos.summary(await s.videos.wait(task.localId));
    },
  },
  {
    id: 'modelGateway.listVideoTasks',
    async run(ctx: CommandContext) {
      const s = ctx.media;
      await s.video.ready();
      return s.video.list().map((t) => s.videos.summary(t));
    },
  },
  taskCommand(
    'modelGateway.cancelVideoTask',
    () => vscode.l10n.t('Cancel Video Task Polling'),
    async (s, id) => s.videos.summary(required(await s.videos.taskAction('cancel', id))),
  ),
  taskCommand(
    'modelGateway.resumeVideoTask',
    () => vscode.l10n.t('Resume Video Task'),
    async (s, id) => s.videos.summary(required(await s.videos.taskAction('resume', id))),
  ),
  taskCommand(
    'modelGateway.resubmitVideoTask',
    () => vscode.l10n.t('Resubmit Video Task'),
    async (s, id) => {
      const manager = await s.video.ready();
      return s.videos.summary(await manager.resubmit(id));
    },
  ),
  taskCommand(
    'modelGateway.forgetVideoTask',
    () => vscode.l10n.t('Forget Video Task'),
    async (s, id) => {
      await s.videos.taskAction('forget', id);
      return { forgotten: true };
    },
  ),
  {
    id: 'modelGateway.reloadVideoTasks',
    async run(ctx: CommandContext) {
      const s = ctx.media;
      try {
        return (await s.video.reload()).map((t) => s.videos.summary(t));
      } catch (err) {
        if (!isGatewayError(err, 'cancelled')) showError(err, ctx.services.log);
        throw err;
      }
    },
  },
];

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new GatewayError('badRequest', words('The task is gone.'));
  return value;
}
