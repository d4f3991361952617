import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import { videoHints } from '../../core/media/video';
import { describeTask, isActive, type VideoTask } from '../../core/media/videoTaskStates';
import type { ModelInfo } from '../../core/models/types';
import type { ImageJobView, MediaSnapshot, TaskView } from '../../shared/mediaProtocol';
import type { Gallery, GalleryItem } from './gallery';
import { outerModels } from './imageRunner';
import type { LastChoices } from './lastChoices';
import type { MediaPanel } from './mediaPanel';
import { mediaSettings } from './mediaSettings';
import { displayPath, type OutputLocation } from './outputLocation';
import type { VideoTasks } from './videoTasks';
import { failureText } from '../../core/chat/failures';

/** The Media Studio panel's whole state (the snapshot), built from the studio's parts; the panel only renders it. */

export interface SnapshotParts {
  /** The models this key may use. */
  models: readonly ModelInfo[];
  last: LastChoices;
  job?: ImageJobView;
  video: VideoTasks;
  gallery: Gallery;
  output: OutputLocation;
  notice: Pick<MediaSnapshot, 'notice'>;
}

export function mediaSnapshot(panel: MediaPanel, parts: SnapshotParts): MediaSnapshot {
  const settings = mediaSettings();
  const { last, models } = parts;
  const image = models.filter((m) => m.kind === 'image');
  const video = models.filter((m) => m.kind === 'video');
  const outer = outerModels([...models]);
  return {
    imageModels: image.map((m) => ({ id: m.id, provider: m.provider })),
    outerModels: outer.map((m) => ({ id: m.id, provider: m.provider })),
    videoModels: video.map((m) => {
      const h = videoHints(m);
      return {
        id: m.id,
        provider: m.provider,
        sizes: h.sizes,
        durations: h.durations,
        ...(h.defaultSize ? { defaultSize: h.defaultSize } : {}),
        ...(h.defaultDuration !== undefined ? { defaultDuration: h.defaultDuration } : {}),
        hintSource: h.source,
      };
    }),
    defaults: {
      route: last.route ?? settings.imageRoute,
      ...pick('imageModel', last.imageModel, image),
      ...pick('outerModel', last.outerModel, outer),
      ...pick('videoModel', last.videoModel, video),
      imageSize: last.imageSize ?? settings.imageSize,
      imageCount: last.imageCount ?? settings.imageCount,
      stream: last.stream ?? settings.stream,
    },
    ...(parts.job ? { imageJob: parts.job } : {}),
    tasks: parts.video.list().map((t) => taskView(t, parts.video)),
    gallery: parts.gallery.list().map((item) => galleryView(item, panel)),
    outputFolder: parts.output.describe(),
    ...parts.notice,
  };
}

function taskView(t: VideoTask, video: VideoTasks): TaskView {
  const download = t.phase === 'downloading' ? video.downloadProgress(t.localId) : undefined;
  const retry = t.phase === 'failed' && (t.error?.stage === 'download' || t.error?.stage === 'check') && !!t.taskId;
  return {
    localId: t.localId,
    ...(t.taskId ? { taskId: t.taskId } : {}),
    model: t.model,
    prompt: t.prompt,
    size: t.size,
    duration: t.duration,
    phase: t.phase,
    ...(t.remoteStatus ? { remoteStatus: t.remoteStatus } : {}),
    ...(t.progress !== undefined ? { progress: t.progress } : {}),
    // The badge says only "Failed": the reason is in the paragraph below it, said once.
    statusText: t.phase === 'failed' ? vscode.l10n.t('Failed') : describeTask(t),
    createdAt: t.createdAt,
    ...(t.finishedAt ? { finishedAt: t.finishedAt } : {}),
    ...(t.error ? { error: { message: failureText(t.error), stage: t.error.stage } } : {}),
    ...(t.phase === 'failed' ? { billing: failureBilling(t) } : {}),
    ...(t.file ? { file: { path: t.file, label: displayPath(t.file) } } : {}),
    ...(download ? { download } : {}),
    canCancel: isActive(t) && t.phase !== 'submitting',
    canResume: t.phase === 'stopped' && !!t.taskId,
    canRetryDownload: retry,
    canResubmit: t.phase === 'failed' || t.phase === 'stopped',
  };
}

/**
 * What is known about the charge for a failed task. The gateway charges a video task when it
 * accepts it; whether it gives the charge back when the task then fails is the gateway's choice
 * (new-api refunds a task that timed out; for other failures it depends on the version and the
 * operator), so the words point at the key's quota, which is read again after a failure.
 */
export function failureBilling(t: VideoTask): string {
  switch (t.error?.stage) {
    case 'submit':
      return t.error.kind === 'cancelled'
        ? vscode.l10n.t("Whether it was billed is unknown: check the key's quota in the status bar.")
        : vscode.l10n.t('Not billed: the gateway did not accept the task.');
    case 'download':
    case 'check':
      return vscode.l10n.t(
        'Billed: the video was made; only the download failed. Retry Download fetches it again at no charge.',
      );
    default:
      return vscode.l10n.t(
        "Billing: the gateway charged this task when it accepted it and may refund it now that it failed. This session's figures leave it out; the key's quota has been read again (status bar).",
      );
  }
}

function pick<K extends string>(key: K, wanted: string | undefined, list: ModelInfo[]): Partial<Record<K, string>> {
  const id = list.find((m) => m.id === wanted)?.id ?? list[0]?.id;
  return id ? ({ [key]: id } as Partial<Record<K, string>>) : {};
}

function galleryView(item: GalleryItem, panel: MediaPanel) {
  const exists = existsSync(item.file);
  const src = item.kind === 'image' && exists ? panel.asWebviewUri(vscode.Uri.file(item.file)) : undefined;
  return {
    id: item.id,
    kind: item.kind,
    prompt: item.prompt,
    model: item.model,
    size: item.size,
    ...(item.pixels !== undefined ? { pixels: item.pixels } : {}),
    createdAt: item.createdAt,
    label: displayPath(item.file),
    ...(src ? { src } : {}),
    exists,
  };
}
