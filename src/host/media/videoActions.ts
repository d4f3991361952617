import * as vscode from 'vscode';
import { GatewayError } from '../../core/errors';
import { readPixelSize } from '../../core/media/mediaFiles';
import { requireListedModel } from '../../core/media/modelChoice';
import { validateVideoParams, videoApiFor, videoHints } from '../../core/media/video';
import { describeTask, type VideoTask } from '../../core/media/videoTaskStates';
import type { ModelInfo } from '../../core/models/types';
import { videoBillingNote, type MediaTab, type MediaWebviewMessage } from '../../shared/mediaProtocol';
import { showError } from '../notify';
import type { Services } from '../services';
import { fileAction } from './fileActions';
import type { Gallery } from './gallery';
import { firstOf } from './imageRunner';
import type { LastChoicesStore } from './lastChoices';
import { displayPath, type OutputLocation } from './outputLocation';
import type { VideoTasks } from './videoTasks';
import { words } from '../../shared/words';
import { failureText } from '../../core/chat/failures';

/**
 * Video tasks as the user drives them: submitting (with the billing note), the task actions, the
 * summary commands return, and what the user is told when a task succeeds, fails or stops.
 */

export interface SubmitVideoArgs {
  prompt: string;
  model?: string;
  size?: string;
  duration?: number;
  /** A reference image file; only models on OpenAI's video API take one. */
  inputReference?: string;
}

/** A task as commands return it: no link (it is temporary and signed), paths and URIs for the file. */
export interface VideoTaskSummary {
  taskId?: string;
  localId: string;
  model: string;
  prompt: string;
  size: string;
  duration: number;
  phase: VideoTask['phase'];
  status: string;
  remoteStatus?: string;
  progress?: number;
  file?: string;
  path?: string;
  error?: { kind: string; message: string; stage: string };
  createdAt: number;
  finishedAt?: number;
}

/** What the video actions need from the Media Studio. */
export interface VideoActionsHost {
  readonly services: Services;
  readonly gallery: Gallery;
  readonly output: OutputLocation;
  readonly choices: LastChoicesStore;
  readonly video: VideoTasks;
  models(): Promise<ModelInfo[]>;
  open(tab?: MediaTab): unknown;
  /** Whether the studio is on screen (its panel visible and loaded). */
  isShowing(): boolean;
}

export class VideoActions {
  constructor(private readonly host: VideoActionsHost) {}

  /** Submits a task; resolves once the gateway accepted it (the id), throws when it refused it. */
  async submit(args: SubmitVideoArgs): Promise<VideoTask> {
    const models = await this.host.models();
    const model = requireListedModel(
      args.model ?? this.host.choices.get().videoModel ?? firstOf(models, 'video') ?? '',
      models,
      'video',
    );
    const hints = videoHints(model);
    const size = args.size ?? hints.defaultSize;
    const duration = args.duration ?? hints.defaultDuration;
    if (!size || duration === undefined) {
      throw new GatewayError(
        'badRequest',
        words(
          'Nothing is known about the sizes and durations {0} accepts (the catalog has no hints for it). Give both, e.g. size 832 × 480 and duration 5; the gateway will say if the model rejects them.',
          model.id,
        ),
      );
    }
    const api = videoApiFor(model);
    const params = validateVideoParams({
      model: model.id,
      prompt: args.prompt,
      size,
      duration,
      ...(api === 'openai' ? { api } : {}),
      ...(args.inputReference !== undefined ? { inputReference: args.inputReference } : {}),
    });
    const dir = await this.host.output.resolve('videos');
    await this.host.choices.remember({ videoModel: model.id });
    const manager = await this.host.video.ready();
    this.host.services.log.info(videoBillingNote(params));
    return manager.submit({ ...params, outputDir: dir });
  }

  async wait(id: string): Promise<VideoTask> {
    return this.host.video.wait(id);
  }

  async taskAction(
    action: Extract<MediaWebviewMessage, { type: 'task' }>['action'],
    id: string,
  ): Promise<VideoTask | undefined> {
    const manager = await this.host.video.ready();
    const task = manager.find(id);
    if (!task) throw new GatewayError('badRequest', words('There is no video task {0}.', id));
    switch (action) {
      case 'cancel':
        return manager.cancel(id);
      case 'resume':
      case 'retryDownload':
        return manager.resume(id);
      case 'resubmit': {
        const again = vscode.l10n.t('Submit Again');
        const choice = await vscode.window.showWarningMessage(
          vscode.l10n.t('Submit this video task again as a new task? {0}', videoBillingNote(task)),
          { modal: true },
          again,
        );
        if (choice !== again) return undefined;
        return manager.resubmit(id);
      }
      case 'forget':
        manager.forget(id);
        return undefined;
      case 'open':
      case 'openExternal':
      case 'reveal':
        if (!task.file) throw new GatewayError('badRequest', words('This task has no saved video yet.'));
        await fileAction(action, task.file);
        return task;
    }
  }

  summary(task: VideoTask): VideoTaskSummary {
    return {
      ...(task.taskId ? { taskId: task.taskId } : {}),
      localId: task.localId,
      model: task.model,
      prompt: task.prompt,
      size: task.size,
      duration: task.duration,
      phase: task.phase,
      status: describeTask(task),
      ...(task.remoteStatus ? { remoteStatus: task.remoteStatus } : {}),
      ...(task.progress !== undefined ? { progress: task.progress } : {}),
      ...(task.file ? { file: vscode.Uri.file(task.file).toString(), path: task.file } : {}),
      ...(task.error
        ? { error: { kind: task.error.kind, message: failureText(task.error), stage: task.error.stage } }
        : {}),
      createdAt: task.createdAt,
      ...(task.finishedAt ? { finishedAt: task.finishedAt } : {}),
    };
  }

  async onTaskTransition(task: VideoTask, from: VideoTask['phase'] | undefined): Promise<void> {
    if (task.phase === 'running' && from === 'submitting') {
      // The gateway bills a video task when it accepts it (by model, duration and resolution).
      this.host.services.billing.recordVideo(task.model, task.size, task.duration);
      return;
    }
    if (task.phase === 'succeeded' && task.file) {
      const pixels = (await readPixelSize(task.file, 'video')) ?? null;
      await this.host.gallery.add([
        {
          kind: 'video',
          file: task.file,
          prompt: task.prompt,
          model: task.model,
          size: task.size,
          pixels,
          createdAt: task.finishedAt ?? Date.now(),
          route: 'video',
          ...(task.taskId ? { taskId: task.taskId } : {}),
        },
      ]);
      // The studio on screen shows the video in the task's row and the gallery; a toast would say it twice.
      if (this.host.isShowing()) return;
      const play = vscode.l10n.t('Open with System Player');
      const reveal = vscode.l10n.t('Reveal in Explorer');
      const choice = await vscode.window.showInformationMessage(
        vscode.l10n.t('Video saved: {0}', displayPath(task.file)),
        play,
        reveal,
      );
      if (choice === play) await fileAction('openExternal', task.file);
      else if (choice === reveal) await fileAction('reveal', task.file);
      return;
    }
    if (task.phase === 'failed' && from && from !== 'submitting') {
      const retry = task.error?.stage === 'download' || task.error?.stage === 'check';
      if (!retry) {
        // Made nothing: the session's figures leave it out, and the key's quota says whether it was refunded.
        this.host.services.billing.recordVideoFailed(task.size, task.duration);
        void this.host.services.quota.refresh();
      }
      // The studio on screen shows the failure in the task's row; a notification would say it twice.
      if (this.host.isShowing()) return;
      const retryDownload = vscode.l10n.t('Retry Download');
      const showTasks = vscode.l10n.t('Show Tasks');
      const actions = retry ? [retryDownload, showTasks] : [showTasks];
      const choice = await vscode.window.showWarningMessage(
        vscode.l10n.t(
          'Video task {0} failed: {1}',
          task.taskId ?? '',
          task.error ? failureText(task.error) : vscode.l10n.t('no reason given'),
        ),
        ...actions,
      );
      if (choice === retryDownload)
        await this.taskAction('retryDownload', task.localId).catch((err: unknown) =>
          showError(err, this.host.services.log),
        );
      else if (choice === showTasks) this.host.open('video');
      return;
    }
    if (task.phase === 'stopped' && task.stoppedBy !== 'user') {
      const why =
        task.stoppedBy === 'limit'
          ? vscode.l10n.t('it did not finish within "modelGateway.video.maxPollMinutes"')
          : vscode.l10n.t(
              'queries kept failing ({0})',
              task.error ? failureText(task.error) : vscode.l10n.t('no reason given'),
            );
      const resume = vscode.l10n.t('Resume Polling');
      const choice = await vscode.window.showWarningMessage(
        vscode.l10n.t(
          'Stopped polling video task {0}: {1}. The task may still finish on the gateway.',
          task.taskId ?? '',
          why,
        ),
        resume,
      );
      if (choice === resume)
        await this.taskAction('resume', task.localId).catch((err: unknown) => showError(err, this.host.services.log));
    }
  }
}
