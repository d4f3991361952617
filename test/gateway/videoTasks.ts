import { randomUUID } from 'node:crypto';
import { charge } from './billing';
import { CdnStore, type CdnVariant } from './cdn';
import type { MediaMarkers } from './mediaScenarios';
import { buildMp4 } from './mp4';
import type { VideoTiming } from './types';
import type { KeyState } from './world';

/**
 * Video tasks as new-api keeps them (wire-formats §6): a row per task, scoped to the user, whose
 * status only changes when the task polling loop runs (`service/task_polling.go`, every 15 s in
 * new-api) and reads the upstream DashScope task. The double simulates both sides:
 *
 * - the upstream (DashScope) task moves through its stages with time, `videoTiming.stepMs` per
 *   stage, or one stage per tickVideo()/advanceVideo() call when `videoTiming.manual` is set;
 * - the gateway row is updated only by a poll (`videoTiming.pollMs`, or each tick), so a GET
 *   between polls returns the state of the last poll, and a poll that finds the upstream several
 *   stages further skips the statuses in between, as it does for real.
 *
 * Stages and what a poll writes (status, progress, `data.data` = the raw upstream body):
 *   0 NOT_START   "0%"   model.InitTask at submit; data = DashScope's submit response (PENDING)
 *   1 SUBMITTED   "10%"  the upstream accepted the task (still the submit response)
 *   2 QUEUED      "20%"  DashScope PENDING
 *   3 IN_PROGRESS "30%"  DashScope RUNNING (start_time set)
 *   4 SUCCESS     "100%" DashScope SUCCEEDED; result_url = data.data.output.video_url
 *     FAILURE     "100%" DashScope FAILED ([[fail]]), or the timeout sweep; fail_reason set
 * new-api's Ali adaptor itself maps PENDING straight to QUEUED, so SUBMITTED is seen only with
 * adaptors that report it; the double shows every stage so that clients meet each one.
 *
 * Billing: charged at submit (model price × seconds × resolution ratio). A FAILURE refunds the whole
 * charge, as new-api's poller does for any task that fails with a non-zero quota
 * (`updateVideoSingleTask`: shouldRefund → RefundTaskQuota), and so does the timeout sweep.
 */

export const VIDEO_STATUSES = [
  'NOT_START',
  'SUBMITTED',
  'QUEUED',
  'IN_PROGRESS',
  'SUCCESS',
  'FAILURE',
  'UNKNOWN',
] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

/** new-api's taskcommon progress strings. */
export const VIDEO_PROGRESS: Record<VideoStatus, string> = {
  NOT_START: '0%',
  SUBMITTED: '10%',
  QUEUED: '20%',
  IN_PROGRESS: '30%',
  SUCCESS: '100%',
  FAILURE: '100%',
  UNKNOWN: '0%',
};

const STAGE_STATUS: VideoStatus[] = ['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS'];
const FINAL_STAGE = 4;

export const DEFAULT_VIDEO_TIMING: VideoTiming = { stepMs: 4000, pollMs: 5000, manual: false, timeoutMinutes: 1440 };

/** DashScope result links stay valid for 24 hours. */
export const RESULT_LINK_VALIDITY_MS = 24 * 60 * 60 * 1000;

/** Platform "17" = ChannelTypeAli; a fixed channel id for the Wan channel of the double. */
const ALI_PLATFORM = '17';
const WAN_CHANNEL_ID = 5;

/** The failure DashScope reports for [[fail]]: output moderation, the commonest late failure. */
const FAIL_CODE = 'DataInspectionFailed';
const FAIL_MESSAGE = 'Output data may contain inappropriate content.';

export interface VideoTask {
  rowId: number;
  taskId: string;
  upstreamTaskId: string;
  owner: KeyState;
  userId: number;
  group: string;
  model: string;
  markers: MediaMarkers;
  width: number;
  height: number;
  /** `480P`, `720P`, `1080P`. */
  resolution: string;
  duration: number;
  quota: number;
  refunded: boolean;
  status: VideoStatus;
  /** Gateway row stage (0–4) as of the last poll. */
  stage: number;
  /** Upstream stage forced by ticks (the timed stage is added in real-time mode). */
  upstreamStage: number;
  submitMs: number;
  updatedMs: number;
  startTime: number;
  finishTime: number;
  /** When the upstream was first seen RUNNING (DashScope's scheduled_time); 0 before. */
  scheduledMs: number;
  failReason: string;
  resultUrl?: string;
  /** The raw upstream body new-api keeps in `data`. */
  data: Record<string, unknown>;
}

/** What GatewayDouble.videoTask reports. */
export interface VideoTaskInfo {
  taskId: string;
  status: VideoStatus;
  progress: string;
  model: string;
  size: string;
  duration: number;
  quota: number;
  refunded: boolean;
  failReason: string;
  resultUrl?: string;
}

const unix = (ms: number) => Math.floor(ms / 1000);

/** DashScope's time format, Beijing time: `2025-10-11 18:55:56.952`. */
function dashscopeTime(ms: number): string {
  return new Date(ms + 8 * 3600_000).toISOString().replace('T', ' ').replace('Z', '');
}

export class VideoBoard {
  readonly tasks = new Map<string, VideoTask>();
  private nextRowId = 1;
  private readonly userIds = new WeakMap<KeyState, number>();
  private nextUserId = 1;
  private timer?: NodeJS.Timeout;

  constructor(
    readonly timing: VideoTiming,
    private readonly cdn: CdnStore,
  ) {}

  /** Starts new-api's polling loop (not in manual mode). */
  start(): void {
    if (this.timing.manual || this.timer) return;
    this.timer = setInterval(() => this.pollAll(Date.now()), this.timing.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** new-api's users are the double's keys: each key is its own user. */
  userIdOf(key: KeyState): number {
    let id = this.userIds.get(key);
    if (id === undefined) {
      id = this.nextUserId++;
      this.userIds.set(key, id);
    }
    return id;
  }

  create(
    init: Omit<
      VideoTask,
      | 'rowId'
      | 'status'
      | 'stage'
      | 'upstreamStage'
      | 'updatedMs'
      | 'startTime'
      | 'finishTime'
      | 'scheduledMs'
      | 'failReason'
      | 'refunded'
      | 'data'
    >,
  ): VideoTask {
    const task: VideoTask = {
      ...init,
      rowId: this.nextRowId++,
      status: 'NOT_START',
      stage: 0,
      upstreamStage: 0,
      updatedMs: init.submitMs,
      startTime: 0,
      finishTime: 0,
      scheduledMs: 0,
      failReason: '',
      refunded: false,
      data: { output: { task_status: 'PENDING', task_id: init.upstreamTaskId }, request_id: randomUUID() },
    };
    this.tasks.set(task.taskId, task);
    return task;
  }

  /** A task as its owner may see it (model.GetByTaskId(userId, taskId)). */
  find(taskId: string, owner: KeyState): VideoTask | undefined {
    const task = this.tasks.get(taskId);
    return task && task.owner === owner ? task : undefined;
  }

  /** One run of the polling loop as new-api's tick would do it, after every open upstream task moved one stage. */
  tick(): void {
    const now = Date.now();
    for (const task of this.tasks.values()) {
      if (!isFinal(task.status))
        task.upstreamStage = Math.min(this.upstreamStageAt(task, now) + 1, this.lastUpstreamStage(task));
    }
    this.pollAll(now);
  }

  /**
   * Moves one task: by one stage, or until it reaches `to`. Throws for a target the task cannot
   * reach (a [[stuck]] task never succeeds; a finished task does not move).
   */
  advance(taskId: string, to?: VideoStatus): VideoStatus {
    const task = this.tasks.get(taskId);
    if (!task) throw new Error(`gateway double: no video task ${taskId}`);
    const target = to ?? STAGE_STATUS[task.stage + 1] ?? (task.markers.fail ? 'FAILURE' : 'SUCCESS');
    if (target === 'FAILURE' && !task.markers.fail && !isFinal(task.status))
      task.markers = { ...task.markers, fail: true };
    for (let guard = 0; guard < 8 && task.status !== target; guard++) {
      if (isFinal(task.status)) break;
      const now = Date.now();
      const before = task.stage;
      task.upstreamStage = Math.min(this.upstreamStageAt(task, now) + 1, this.lastUpstreamStage(task));
      this.poll(task, now);
      if (task.stage === before && !isFinal(task.status)) break; // cannot move (stuck)
    }
    if (task.status !== target)
      throw new Error(`gateway double: video task ${taskId} is ${task.status} and cannot reach ${target}`);
    return task.status;
  }

  private lastUpstreamStage(task: VideoTask): number {
    return task.markers.stuck ? FINAL_STAGE - 1 : FINAL_STAGE;
  }

  private upstreamStageAt(task: VideoTask, now: number): number {
    const timed = this.timing.manual ? 0 : 1 + Math.floor((now - task.submitMs) / this.timing.stepMs);
    return Math.min(Math.max(task.upstreamStage, timed), this.lastUpstreamStage(task));
  }

  pollAll(now: number): void {
    for (const task of this.tasks.values()) this.poll(task, now);
  }

  private poll(task: VideoTask, now: number): void {
    if (isFinal(task.status)) return;
    // sweepTimedOutTasks runs first in each pass.
    const minutes = this.timing.timeoutMinutes;
    if (minutes > 0 && now - task.submitMs >= minutes * 60_000) {
      this.fail(task, now, `任务超时（${minutes}分钟）`);
      return;
    }
    const stage = this.upstreamStageAt(task, now);
    if (stage <= task.stage) return;
    task.stage = stage;
    task.updatedMs = now;
    const output = (status: string, extra: Record<string, unknown> = {}) => ({
      request_id: randomUUID(),
      output: {
        task_id: task.upstreamTaskId,
        task_status: status,
        submit_time: dashscopeTime(task.submitMs),
        ...extra,
      },
    });
    if (stage >= 3) task.scheduledMs ||= now;
    const scheduled = dashscopeTime(task.scheduledMs);
    switch (stage) {
      case 1:
        task.status = 'SUBMITTED';
        return;
      case 2:
        task.status = 'QUEUED';
        task.data = output('PENDING');
        return;
      case 3:
        task.status = 'IN_PROGRESS';
        task.startTime = unix(now);
        task.data = output('RUNNING', { scheduled_time: scheduled });
        return;
    }
    task.startTime ||= unix(now);
    if (task.markers.fail) {
      task.data = output('FAILED', {
        scheduled_time: scheduled,
        end_time: dashscopeTime(now),
        code: FAIL_CODE,
        message: FAIL_MESSAGE,
      });
      // The Ali adaptor's ParseTaskResult: no top-level message, so "task failed, code: … , message: …".
      this.fail(task, now, `task failed, code: ${FAIL_CODE} , message: ${FAIL_MESSAGE}`);
      return;
    }
    const url = this.publish(task, now);
    task.status = 'SUCCESS';
    task.finishTime = unix(now);
    task.resultUrl = url;
    task.data = {
      ...output('SUCCEEDED', {
        scheduled_time: scheduled,
        end_time: dashscopeTime(now),
        video_url: url,
        orig_prompt: task.markers.prompt,
        actual_prompt: `${task.markers.prompt}. Cinematic lighting, smooth camera motion, rich detail.`,
      }),
      usage: { duration: task.duration, video_count: 1, SR: Number.parseInt(task.resolution, 10) },
    };
  }

  private fail(task: VideoTask, now: number, reason: string): void {
    task.status = 'FAILURE';
    task.stage = FINAL_STAGE;
    task.updatedMs = now;
    task.finishTime = unix(now);
    task.failReason = reason;
    if (task.quota !== 0 && !task.refunded) {
      charge(task.owner, -task.quota);
      task.refunded = true;
    }
  }

  /** Puts the result on the CDN origin and returns its signed link. */
  private publish(task: VideoTask, now: number): string {
    const m = task.markers;
    const variant: CdnVariant = m.html ? 'html' : m.xml ? 'xml' : 'ok';
    const token = randomUUID().replace(/-/g, '');
    return this.cdn.put({
      path: `/videos/${token}.mp4`,
      contentType: 'video/mp4',
      expiresAtMs: now + (m.expireMs ?? RESULT_LINK_VALIDITY_MS),
      variant,
      build: () =>
        buildMp4({
          seedText: m.prompt,
          width: task.width,
          height: task.height,
          durationSec: task.duration,
          ...(m.bigMb > 0 ? { targetBytes: m.bigMb * 1024 * 1024 } : {}),
          ...(m.truncated ? { withoutMoov: true } : {}),
        }),
    });
  }

  /** new-api's TaskDto (`dto/task.go`), field order as marshalled. */
  dto(task: VideoTask): Record<string, unknown> {
    return {
      id: task.rowId,
      created_at: unix(task.submitMs),
      updated_at: unix(task.updatedMs),
      task_id: task.taskId,
      platform: ALI_PLATFORM,
      user_id: task.userId,
      group: task.group,
      channel_id: WAN_CHANNEL_ID,
      quota: task.quota,
      action: 'textGenerate',
      status: task.status,
      fail_reason: task.failReason,
      ...(task.resultUrl ? { result_url: task.resultUrl } : {}),
      submit_time: unix(task.submitMs),
      start_time: task.startTime,
      finish_time: task.finishTime,
      progress: VIDEO_PROGRESS[task.status],
      properties: { input: '', upstream_model_name: task.model, origin_model_name: task.model },
      data: task.data,
    };
  }

  /**
   * The short task shape new-api answers on the generic query route for channels it asks in real
   * time (`relay/relay_task.go`, tryRealtimeFetch): status in four lower-case words, the link in
   * `url`, `error` and `metadata` null even for a failed task.
   */
  shortDto(task: VideoTask, proxyUrl: string): Record<string, unknown> {
    const status =
      task.status === 'SUCCESS'
        ? 'succeeded'
        : task.status === 'FAILURE'
          ? 'failed'
          : task.status === 'QUEUED' || task.status === 'SUBMITTED'
            ? 'queued'
            : 'processing';
    // Such channels' upstreams hand back the video itself, not a link: new-api then links its own
    // content route (taskcommon.BuildProxyURL), written with its configured server address.
    return {
      error: null,
      format: 'mp4',
      metadata: null,
      status,
      task_id: task.taskId,
      url: task.status === 'SUCCESS' ? proxyUrl : '',
    };
  }

  /**
   * OpenAI's video object, as new-api's `GET /v1/videos/{id}` converts a task (dto.OpenAIVideo):
   * `queued|in_progress|completed|failed`, integer progress, the failure in `error`, and the
   * upstream link in `metadata.url` when the channel has one (`withLink`); without it the video is
   * only at `/v1/videos/{id}/content`.
   */
  openAIVideo(task: VideoTask, withLink: boolean): Record<string, unknown> {
    const status =
      task.status === 'SUCCESS'
        ? 'completed'
        : task.status === 'FAILURE'
          ? 'failed'
          : task.status === 'IN_PROGRESS'
            ? 'in_progress'
            : 'queued';
    return {
      id: task.taskId,
      task_id: task.taskId,
      object: 'video',
      model: task.model,
      status,
      progress: Number.parseInt(VIDEO_PROGRESS[task.status], 10),
      created_at: unix(task.submitMs),
      ...(task.finishTime ? { completed_at: task.finishTime } : {}),
      seconds: String(task.duration),
      size: `${task.width}x${task.height}`,
      ...(task.status === 'FAILURE' ? { error: { message: task.failReason, code: 'generation_failed' } } : {}),
      ...(withLink && task.resultUrl ? { metadata: { url: task.resultUrl } } : {}),
    };
  }

  info(task: VideoTask): VideoTaskInfo {
    return {
      taskId: task.taskId,
      status: task.status,
      progress: VIDEO_PROGRESS[task.status],
      model: task.model,
      size: `${task.width}*${task.height}`,
      duration: task.duration,
      quota: task.quota,
      refunded: task.refunded,
      failReason: task.failReason,
      ...(task.resultUrl ? { resultUrl: task.resultUrl } : {}),
    };
  }
}

export function isFinal(status: VideoStatus): boolean {
  return status === 'SUCCESS' || status === 'FAILURE';
}
