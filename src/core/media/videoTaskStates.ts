import * as l10n from '@vscode/l10n';
import * as z from 'zod/mini';
import type { GatewayError } from '../errors';
import { formatNumber } from '../../shared/format';
import { say, words, wordsSchema, type Said, type Words } from '../../shared/words';
import { TASK_PHASES, taskIdentityShape } from '../../shared/mediaProtocol';
import { type VideoParams } from './video';
import { REMOTE_STATUSES, type VideoStatus } from './videoStatus';

/**
 * The life of one video task on the client, as pure transitions (no timers, no I/O), so that it can
 * be persisted after every step and resumed after a restart exactly where it stopped.
 *
 *   submitting ──accepted──▶ running ──SUCCESS──▶ downloading ──playable──▶ succeeded
 *        │                     │  ▲                    │
 *        │                 FAILURE│ resume (user)   link expired / not playable
 *        ▼                     ▼  │                    ▼
 *      failed ◀────────────── stopped (user, poll limit, repeated errors)      failed
 *
 * `failed` is final: a failed task is never resubmitted automatically; the user may resubmit it
 * (a new task) or, when only the download failed, fetch the link again.
 */

/** Where a failure happened: the user's next step differs for each. */
export const FAILURE_STAGES = ['submit', 'task', 'poll', 'download', 'check'] as const;
export type FailureStage = (typeof FAILURE_STAGES)[number];

const taskSchema = z.object({
  ...taskIdentityShape,
  outputDir: z.string(),
  phase: z.enum(TASK_PHASES),
  remoteStatus: z.optional(z.enum(REMOTE_STATUSES)),
  rawStatus: z.optional(z.string()),
  progress: z.optional(z.number()),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** When the current polling period began (submit or resume); the poll limit counts from here. */
  pollStartedAt: z.optional(z.number()),
  finishedAt: z.optional(z.number()),
  polls: z.number(),
  errorsInRow: z.number(),
  nextPollAt: z.optional(z.number()),
  videoUrl: z.optional(z.string()),
  file: z.optional(z.string()),
  error: z.optional(
    z.object({
      kind: z.string(),
      message: z.string(),
      stage: z.enum(FAILURE_STAGES),
      requestId: z.optional(z.string()),
      /** The short reason a status line shows ("Failed: <reason>"); older stored tasks have none. */ reason:
        z.optional(z.string()),
      /**
       * What `message` and `reason` were worded from (absent in tasks older versions stored), so that a
       * failure is worded again in the display language of the day it is shown; words of a shape this
       * version does not know read as absent.
       */
      words: z.optional(z.catch(z.optional(wordsSchema), undefined)),
      reasonWords: z.optional(z.catch(z.optional(wordsSchema), undefined)),
    }),
  ),
  stoppedBy: z.optional(z.enum(['user', 'limit', 'errors'])),
  /** Submitted on OpenAI's video API (`openai`); absent for the task API. */
  api: z.optional(z.enum(['task', 'openai'])),
  /** OpenAI's video API: the reference image the task was submitted with, for a resubmission. */
  inputReference: z.optional(z.string()),
  /** Set once the gateway answered the task only on OpenAI's video route; later queries go there. */
  queryRoute: z.optional(z.enum(['generations', 'videos'])),
  /** The task this one was resubmitted from, by the user. */
  resubmittedFrom: z.optional(z.string()),
  /**
   * The key that submitted it (its id and, for messages, its name; never the key): only that key may
   * poll and download it. Tasks stored before several keys have none and go with the first key.
   */
  keyId: z.optional(z.string()),
  keyName: z.optional(z.string()),
});
export type VideoTask = z.infer<typeof taskSchema>;

export const storedTasksSchema = z.array(taskSchema);

export interface PollPolicy {
  /** The gateway refreshes task states from the upstream every 15 s; polls follow that rhythm. */
  baseMs: number;
  /** Polling stops (resumable) after this long without a final state; 0 = no limit. */
  maxPollMs: number;
  /** Consecutive failed queries before polling stops (resumable). */
  maxErrors: number;
}

export function isFinal(task: VideoTask): boolean {
  return task.phase === 'succeeded' || task.phase === 'failed';
}

/** Whether the task needs work from the client (a query or a download). */
export function isActive(task: VideoTask): boolean {
  return task.phase === 'submitting' || task.phase === 'running' || task.phase === 'downloading';
}

export function createTask(
  params: VideoParams & { outputDir: string },
  localId: string,
  now: number,
  resubmittedFrom?: string,
): VideoTask {
  return {
    localId,
    model: params.model,
    prompt: params.prompt,
    size: params.size,
    duration: params.duration,
    outputDir: params.outputDir,
    ...(params.api === 'openai' ? { api: 'openai' as const } : {}),
    ...(params.inputReference !== undefined ? { inputReference: params.inputReference } : {}),
    phase: 'submitting',
    createdAt: now,
    updatedAt: now,
    polls: 0,
    errorsInRow: 0,
    ...(resubmittedFrom ? { resubmittedFrom } : {}),
  };
}

export function accepted(task: VideoTask, taskId: string, now: number, policy: PollPolicy): VideoTask {
  // A task of OpenAI's video API is queried on its route from the start.
  const next: VideoTask = {
    ...task,
    taskId,
    phase: 'running',
    remoteStatus: 'NOT_START',
    progress: 0,
    pollStartedAt: now,
    updatedAt: now,
    polls: 0,
    errorsInRow: 0,
    ...(task.api === 'openai' ? { queryRoute: 'videos' as const } : {}),
  };
  return { ...next, nextPollAt: now + pollDelay(next, now, policy) };
}

export function submitFailed(task: VideoTask, error: GatewayError, now: number): VideoTask {
  const { kind, requestId } = error;
  return fail(
    task,
    'submit',
    { kind, message: error.words ?? error.message, ...(requestId ? { requestId } : {}) },
    now,
  );
}

/** A query answered: move on according to `data.status`. */
export function observed(task: VideoTask, s: VideoStatus, now: number, policy: PollPolicy): VideoTask {
  if (task.phase !== 'running') return task;
  const base: VideoTask = {
    ...task,
    remoteStatus: s.status,
    rawStatus: s.rawStatus,
    ...(s.progress !== undefined ? { progress: s.progress } : {}),
    polls: task.polls + 1,
    errorsInRow: 0,
    updatedAt: now,
    ...(s.route ? { queryRoute: s.route } : {}),
  };
  if (s.status === 'SUCCESS') {
    if (!s.videoUrl) {
      return fail(
        base,
        'task',
        {
          kind: 'protocol',
          message: words(
            'The gateway reports the task as SUCCESS but sent no video link (data.data.output.video_url, data.result_url, data.url or metadata.url).',
          ),
          reason: words('finished without a video link'),
        },
        now,
      );
    }
    const { nextPollAt: _drop, ...rest } = base;
    return { ...rest, phase: 'downloading', progress: 100, videoUrl: s.videoUrl };
  }
  if (s.status === 'FAILURE') {
    const reason = s.failReason
      ? words('The gateway reports the task as failed: {0}', s.failReason)
      : words('The gateway reports the task as failed without a reason.');
    return fail(
      base,
      'task',
      {
        kind: 'server',
        message: words(
          '{0} It was not resubmitted; change the prompt or parameters and submit again if you want another try.',
          reason,
        ),
        reason: s.failReason ?? words('no reason given'),
      },
      now,
    );
  }
  if (policy.maxPollMs > 0 && now - (task.pollStartedAt ?? task.createdAt) >= policy.maxPollMs) {
    return stop(base, 'limit', now);
  }
  return { ...base, nextPollAt: now + pollDelay(base, now, policy) };
}

/**
 * A query failed. A task the gateway does not know is final; a refused key stops polling until
 * the user resumes; anything else (network, 5xx, 429) is retried with a growing delay, a bounded
 * number of times.
 */
export function pollFailed(
  task: VideoTask,
  error: Pick<GatewayError, 'kind' | 'message' | 'code' | 'requestId' | 'words'>,
  now: number,
  policy: PollPolicy,
): VideoTask {
  if (task.phase !== 'running') return task;
  if (error.code === 'task_not_exist') {
    return fail(
      task,
      'poll',
      {
        kind: error.kind,
        message: words('The gateway does not know the task {0}: {1}', task.taskId ?? '', error.words ?? error.message),
        requestId: error.requestId,
        reason: words('the gateway does not know this task'),
      },
      now,
    );
  }
  const errorsInRow = task.errorsInRow + 1;
  const base: VideoTask = {
    ...task,
    errorsInRow,
    updatedAt: now,
    error: {
      kind: error.kind,
      message: error.message,
      stage: 'poll',
      ...(error.words ? { words: error.words } : {}),
      ...(error.requestId ? { requestId: error.requestId } : {}),
    },
  };
  if (error.kind === 'auth' || error.kind === 'quota' || errorsInRow >= policy.maxErrors) {
    return stop(base, 'errors', now);
  }
  return { ...base, nextPollAt: now + pollDelay(base, now, policy) };
}

export function downloaded(task: VideoTask, file: string, now: number): VideoTask {
  const { error: _e, nextPollAt: _n, stoppedBy: _s, ...rest } = task;
  return { ...rest, phase: 'succeeded', file, progress: 100, updatedAt: now, finishedAt: now };
}

export function downloadFailed(
  task: VideoTask,
  error: Pick<GatewayError, 'kind' | 'message' | 'requestId' | 'words'>,
  now: number,
): VideoTask {
  const { kind, requestId } = error;
  return fail(
    task,
    kind === 'protocol' ? 'check' : 'download',
    { kind, message: error.words ?? error.message, ...(requestId ? { requestId } : {}) },
    now,
  );
}

/** The user stopped polling (or a download); the task keeps its id and may be resumed. */
export function stoppedByUser(task: VideoTask, now: number): VideoTask {
  if (!isActive(task)) return task;
  if (task.phase === 'submitting') return task;
  return stop(task, 'user', now);
}

/**
 * The user resumes a stopped task, or fetches the link of a task whose download failed: both poll
 * again at once (a fresh query also brings the link back). Nothing is resubmitted.
 */
export function resumed(task: VideoTask, now: number): VideoTask {
  const downloadFailure =
    task.phase === 'failed' && (task.error?.stage === 'download' || task.error?.stage === 'check');
  if (!task.taskId || !(task.phase === 'stopped' || downloadFailure)) return task;
  const { error: _e, stoppedBy: _s, finishedAt: _f, ...rest } = task;
  return { ...rest, phase: 'running', pollStartedAt: now, errorsInRow: 0, nextPollAt: now, updatedAt: now };
}

/**
 * Loaded from storage after VS Code restarted or the window reloaded. A running task is queried at
 * once, a download starts again. A task that was being submitted when the window closed may or may
 * not have been accepted: it is not submitted again (it could be billed twice); the user decides.
 */
export function restored(task: VideoTask, now: number): VideoTask {
  switch (task.phase) {
    case 'submitting':
      return fail(
        task,
        'submit',
        {
          kind: 'cancelled',
          message: words(
            'VS Code closed while this task was being submitted, so whether the gateway accepted it is unknown. It was not submitted again; check the console, or resubmit it yourself.',
          ),
          reason: words('VS Code closed during the submission'),
        },
        now,
      );
    case 'running':
      return { ...task, nextPollAt: Math.min(task.nextPollAt ?? now, now) };
    default:
      return task;
  }
}

/**
 * The first queries, as fractions of the interval (2 s, 5 s and 10 s at 15 s): the gateway's first
 * refresh of a new task comes at any moment within its first interval, so early looks show
 * "Generating" (or an early rejection) soon instead of a quarter minute later.
 */
const EARLY_POLLS = [2 / 15, 1 / 3, 2 / 3];

/**
 * How long to wait before the next query. The gateway refreshes a task every 15 s, so once the
 * early looks are done asking more often only repeats the last answer: every interval; long tasks
 * are asked less often; failed queries back off exponentially, up to four intervals.
 */
export function pollDelay(task: VideoTask, now: number, policy: PollPolicy): number {
  const base = policy.baseMs;
  if (task.errorsInRow > 0) return Math.min(base * 2 ** (task.errorsInRow - 1), base * 4);
  const early = EARLY_POLLS[task.polls];
  if (early !== undefined) return Math.max(1, Math.round(base * early));
  const elapsed = now - (task.pollStartedAt ?? task.createdAt);
  if (elapsed < base * 20) return base;
  if (elapsed < base * 60) return base * 2;
  return base * 4;
}

function stop(task: VideoTask, by: 'user' | 'limit' | 'errors', now: number): VideoTask {
  const { nextPollAt: _n, ...rest } = task;
  return { ...rest, phase: 'stopped', stoppedBy: by, updatedAt: now };
}

function fail(
  task: VideoTask,
  stage: FailureStage,
  error: { kind: string; message: Said; requestId?: string; reason?: Said },
  now: number,
): VideoTask {
  const { nextPollAt: _n, stoppedBy: _s, ...rest } = task;
  const reason = error.reason ?? failedAtWords(stage);
  return {
    ...rest,
    phase: 'failed',
    error: {
      kind: error.kind,
      // Worded now too, for versions that do not read the words.
      message: say(error.message),
      stage,
      ...(error.requestId ? { requestId: error.requestId } : {}),
      reason: say(reason),
      ...(typeof error.message === 'object' ? { words: error.message } : {}),
      ...(typeof reason === 'object' ? { reasonWords: reason } : {}),
    },
    updatedAt: now,
    finishedAt: now,
  };
}

/**
 * A short status line for cards and lists, in words rather than the gateway's codes: `Queued`,
 * `Generating 40 %`, `Downloading`, `Done`, `Failed: <reason>`, `Stopped (time limit)`.
 */
export function describeTask(task: VideoTask): string {
  switch (task.phase) {
    case 'submitting':
      return l10n.t('Submitting');
    case 'running':
      return describeRunning(task);
    case 'downloading':
      return l10n.t('Downloading');
    case 'succeeded':
      return l10n.t('Done');
    case 'failed':
      return l10n.t('Failed: {0}', failureReason(task.error));
    case 'stopped':
      return task.stoppedBy === 'limit'
        ? l10n.t('Stopped (time limit)')
        : task.stoppedBy === 'errors'
          ? l10n.t('Stopped (queries failed)')
          : l10n.t('Stopped (by you)');
  }
}

/**
 * A running task by its last reported status: not started, submitted and queued all read "Queued"
 * (the gateway has it, nothing is being made yet); in progress reads "Generating", with the
 * progress when one was reported; a status no one knows reads "Waiting for the gateway".
 */
function describeRunning(task: VideoTask): string {
  const status = task.remoteStatus ?? 'NOT_START';
  if (status === 'NOT_START' || status === 'SUBMITTED' || status === 'QUEUED') return l10n.t('Queued');
  if (status === 'UNKNOWN') return l10n.t('Waiting for the gateway');
  const progress = task.progress;
  return progress !== undefined && progress > 0
    ? l10n.t('Generating {0} %', formatNumber(Math.round(progress)))
    : l10n.t('Generating');
}

/** A failed task's short reason in the display language now; one kept without its words, as worded then. */
function failureReason(error: VideoTask['error']): string {
  if (error?.reasonWords) return say(error.reasonWords);
  return error?.reason ?? say(failedAtWords(error?.stage));
}

/** Where it failed, when the failure brought no reason of its own (and for older stored tasks). */
function failedAtWords(stage: FailureStage | undefined): Words {
  switch (stage) {
    case 'submit':
      return words('the gateway did not accept the task');
    case 'poll':
      return words('the task could not be queried');
    case 'download':
      return words('the video could not be downloaded');
    case 'check':
      return words('the downloaded file is not a playable video');
    case 'task':
    case undefined:
      return words('the gateway reports the task as failed');
  }
}
