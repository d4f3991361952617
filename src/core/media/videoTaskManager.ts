import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as z from 'zod/mini';
import { partFilesOf } from '../atomicFile';
import { TaskWork } from './taskWork';
import { GatewayError, isGatewayError } from '../errors';
import type { HttpClient } from '../http';
import type { DownloadGuard } from './downloadGuard';
import { mediaBaseName } from './mediaFiles';
import { queryVideo, submitVideo, validateVideoParams, type VideoParams } from './video';
import { downloadVideo, videoDownloadUrl } from './videoDownload';
import * as T from './videoTaskStates';
import type { PollPolicy, VideoTask } from './videoTaskStates';
import { words } from '../../shared/words';

/** Where tasks are kept between sessions (the host uses the workspace's storage). */
export interface TaskStore {
  load(): Promise<unknown> | unknown;
  save(tasks: VideoTask[]): Promise<void>;
}

export interface VideoTaskManagerDeps {
  http: () => HttpClient;
  store: TaskStore;
  policy: () => PollPolicy;
  now?: () => number;
  newId?: () => string;
  log?: (line: string) => void;
  /** Downloads each task's result once across windows (downloadGuard.ts); without it, this manager alone decides. */
  downloads?: DownloadGuard;
  /** The key a model's requests go with (core/keys.ts): recorded with the task, which stays with it. */
  keyOf?: (model: string) => Promise<{ id: string; name: string } | undefined>;
  /** The folder a download into a task's folder must stay in (core/confinedWrite.ts); the task's folder itself when absent. */
  outputRoot?: (dir: string) => string;
}

export interface DownloadProgress {
  received: number;
  total?: number;
}

type Listener = (task: VideoTask | undefined) => void;

const PROGRESS_EVERY_MS = 250;

/**
 * Runs video tasks: submits, polls with the state machine's delays, downloads the result and keeps
 * every step in the store, so a new manager built from the same store (after a reload or restart)
 * carries on where the last one stopped. It never resubmits anything by itself.
 */
export class VideoTaskManager {
  private readonly tasks = new Map<string, VideoTask>();
  private readonly work = new TaskWork();
  private readonly downloads = new Map<string, DownloadProgress & { emittedAt: number }>();
  private readonly listeners = new Set<Listener>();
  private readonly waiters = new Set<(err: GatewayError) => void>();
  private saving: Promise<void> = Promise.resolve();
  private disposed = false;
  private readonly now: () => number;
  private readonly newId: () => string;

  constructor(private readonly deps: VideoTaskManagerDeps) {
    this.now = deps.now ?? Date.now;
    this.newId = deps.newId ?? randomUUID;
  }

  /** Loads the stored tasks and resumes the unfinished ones. */
  async start(): Promise<void> {
    const stored = await this.deps.store.load();
    const items = Array.isArray(stored) ? stored : [];
    const now = this.now();
    for (const item of items) {
      const parsed = z.safeParse(T.storedTasksSchema, [item]);
      if (!parsed.success || !parsed.data[0]) {
        this.log(
          `Dropped a stored video task that does not fit the expected shape: ${JSON.stringify(item).slice(0, 200)}`,
        );
        continue;
      }
      const task = T.restored(parsed.data[0], now);
      this.tasks.set(task.localId, task);
    }
    if (items.length) this.persist();
    for (const task of this.tasks.values()) this.schedule(task);
    this.emit(undefined);
  }

  /** Newest first. */
  list(): VideoTask[] {
    return [...this.tasks.values()].sort((a, b) => b.createdAt - a.createdAt);
  }

  /** By the gateway's task id or the local id. */
  find(id: string): VideoTask | undefined {
    return this.tasks.get(id) ?? [...this.tasks.values()].find((t) => t.taskId === id);
  }

  downloadProgress(localId: string): DownloadProgress | undefined {
    const p = this.downloads.get(localId);
    return p ? { received: p.received, ...(p.total !== undefined ? { total: p.total } : {}) } : undefined;
  }

  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /**
   * Submits a task and resolves once the gateway accepted it (the task then runs on). A refusal
   * (a size the model rejects, quota…) is recorded as a failed task and thrown.
   */
  async submit(
    params: VideoParams & { outputDir: string },
    options: { signal?: AbortSignal; resubmittedFrom?: string } = {},
  ): Promise<VideoTask> {
    this.assertOpen();
    const p = validateVideoParams(params);
    const key = await this.deps.keyOf?.(p.model);
    let task: VideoTask = {
      ...T.createTask({ ...p, outputDir: params.outputDir }, this.newId(), this.now(), options.resubmittedFrom),
      ...(key ? { keyId: key.id, keyName: key.name } : {}),
    };
    this.set(task);
    try {
      const taskId = await submitVideo(this.deps.http(), task.keyId, p, options.signal);
      task = T.accepted(this.current(task), taskId, this.now(), this.deps.policy());
      this.log(`Video task ${taskId} accepted (${p.model}, ${p.size}, ${p.duration} s).`);
      this.set(task);
      this.schedule(task);
      return task;
    } catch (err) {
      const error = asGatewayError(err);
      this.set(T.submitFailed(this.current(task), error, this.now()));
      throw error;
    }
  }

  /** A new task with the same parameters, by the user's hand only. */
  resubmit(id: string, signal?: AbortSignal): Promise<VideoTask> {
    const old = this.require(id);
    const api =
      old.api === 'openai'
        ? { api: old.api, ...(old.inputReference !== undefined ? { inputReference: old.inputReference } : {}) }
        : {};
    return this.submit(
      {
        model: old.model,
        prompt: old.prompt,
        size: old.size,
        duration: old.duration,
        outputDir: old.outputDir,
        ...api,
      },
      { signal, resubmittedFrom: old.taskId ?? old.localId },
    );
  }

  /** Stops polling (or a download in progress); the task can be resumed. */
  cancel(id: string): VideoTask {
    const task = this.require(id);
    this.work.halt(task.localId);
    const next = T.stoppedByUser(task, this.now());
    if (next !== task) this.set(next);
    return next;
  }

  /** Polls a stopped task again, or fetches the link again after a failed download. */
  resume(id: string): VideoTask {
    const task = this.require(id);
    const next = T.resumed(task, this.now());
    if (next === task)
      throw new GatewayError(
        'badRequest',
        words('The task {0} is {1}; there is nothing to resume.', task.taskId ?? task.localId, T.describeTask(task)),
      );
    this.set(next);
    this.schedule(next);
    return next;
  }

  /** Removes the task from the list (a saved file stays where it is). */
  forget(id: string): void {
    const task = this.require(id);
    this.work.halt(task.localId);
    this.tasks.delete(task.localId);
    this.persist();
    this.emit(undefined);
  }

  /** Resolves when the task has succeeded, failed, or polling stopped. */
  wait(id: string, signal?: AbortSignal): Promise<VideoTask> {
    return new Promise<VideoTask>((resolve, reject) => {
      if (this.disposed) return reject(closedError());
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        sub.dispose();
        this.waiters.delete(onClose);
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const check = () => {
        const task = this.find(id);
        if (!task)
          finish(() =>
            reject(
              new GatewayError('badRequest', words('There is no video task {0} (it may have been forgotten).', id)),
            ),
          );
        else if (T.isFinal(task) || task.phase === 'stopped') finish(() => resolve(task));
      };
      const onClose = (err: GatewayError) => finish(() => reject(err));
      const onAbort = () =>
        finish(() =>
          reject(new GatewayError('cancelled', words('Stopped waiting for the video task; it carries on.'))),
        );
      const sub = this.onDidChange(check);
      this.waiters.add(onClose);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      else check();
    });
  }

  /**
   * Stops every timer and request without changing any task: what is stored is what a new manager
   * resumes from. Waits for the last save.
   */
  async dispose(): Promise<void> {
    if (this.disposed) return this.saving;
    this.disposed = true;
    const halted = this.work.haltAll();
    for (const reject of [...this.waiters]) reject(closedError());
    this.listeners.clear();
    // Polls and downloads under way end before the manager says it is closed: none touches files after.
    await halted;
    await this.saving;
  }

  private schedule(task: VideoTask): void {
    this.work.cancelTimer(task.localId);
    if (this.disposed) return;
    if (task.phase === 'running' && task.taskId) {
      const delay = Math.max(0, (task.nextPollAt ?? this.now()) - this.now());
      this.work.later(task.localId, delay, () => this.poll(task.localId));
    } else if (task.phase === 'downloading') {
      this.work.later(task.localId, 0, () => this.download(task.localId));
    }
  }

  private async poll(localId: string): Promise<void> {
    const task = this.tasks.get(localId);
    if (!task || task.phase !== 'running' || !task.taskId || this.disposed) return;
    const ctl = this.work.begin(localId);
    let next: VideoTask;
    try {
      const status = await queryVideo(
        this.deps.http(),
        task.keyId,
        task.taskId,
        ctl.signal,
        task.queryRoute ?? 'generations',
      );
      if (this.stale(localId, ctl)) return;
      next = T.observed(this.current(task), status, this.now(), this.deps.policy());
      if (next.remoteStatus !== task.remoteStatus || next.phase !== task.phase) {
        this.log(
          `Video task ${task.taskId}: ${status.rawStatus || status.status}${status.progress !== undefined ? ` ${status.progress}%` : ''}`,
        );
      }
    } catch (err) {
      if (this.stale(localId, ctl)) return;
      const error = asGatewayError(err);
      this.log(`Video task ${task.taskId}: query failed: ${error.message}`);
      next = T.pollFailed(this.current(task), error, this.now(), this.deps.policy());
    } finally {
      this.work.end(localId, ctl);
    }
    this.set(next);
    this.schedule(next);
  }

  private async download(localId: string): Promise<void> {
    const task = this.tasks.get(localId);
    if (!task || task.phase !== 'downloading' || !task.videoUrl || this.disposed) return;
    const videoUrl = task.videoUrl;
    const ctl = this.work.begin(localId);
    this.downloads.set(localId, { received: 0, emittedAt: 0 });
    const baseName = mediaBaseName(task.prompt, 1, new Date(task.createdAt), 'video');
    const owner = /^[A-Za-z0-9_-]{1,80}$/.test(localId) ? localId : undefined;
    const fetch = async (): Promise<string> => {
      // Run only while no other download of this task can be running (the guard's lock): any
      // temporary file of the task is a crashed download's leftover.
      if (owner)
        for (const part of await partFilesOf(task.outputDir, baseName, owner)) await fs.rm(part, { force: true });
      const http = this.deps.http();
      return downloadVideo(http, task.keyId, videoDownloadUrl(http, task.taskId, videoUrl), {
        dir: task.outputDir,
        baseName,
        signal: ctl.signal,
        onBytes: (received, total) => this.downloadTick(localId, received, total),
        ...(owner ? { owner } : {}),
        within: this.deps.outputRoot?.(task.outputDir) ?? task.outputDir,
      });
    };
    let next: VideoTask;
    try {
      const outcome = this.deps.downloads
        ? await this.deps.downloads.run(localId, fetch)
        : { kind: 'downloaded' as const, file: await fetch() };
      if (outcome.kind === 'elsewhere') {
        // Another window is downloading it: look again later (it finishes, or its lock goes stale).
        if (this.stale(localId, ctl)) return;
        this.log(`Video task ${task.taskId ?? localId}: downloading in another window; checking again later.`);
        this.work.later(localId, this.deps.policy().baseMs, () => this.download(localId));
        return;
      }
      this.log(
        outcome.kind === 'done'
          ? `Video task ${task.taskId ?? localId}: already saved as ${outcome.file}`
          : `Video task ${task.taskId ?? localId}: saved ${outcome.file}`,
      );
      // The file exists now: record it even if the manager is closing, so it is not fetched twice.
      const current = this.tasks.get(localId);
      if (!current) return;
      next = T.downloaded(current, outcome.file, this.now());
    } catch (err) {
      if (this.stale(localId, ctl)) return;
      const error = asGatewayError(err);
      this.log(`Video task ${task.taskId ?? localId}: download failed: ${error.message}`);
      next = T.downloadFailed(this.current(task), error, this.now());
    } finally {
      this.work.end(localId, ctl);
      this.downloads.delete(localId);
    }
    this.set(next);
  }

  private downloadTick(localId: string, received: number, total?: number): void {
    const p = this.downloads.get(localId);
    if (!p) return;
    p.received = received;
    p.total = total;
    const now = Date.now();
    if (now - p.emittedAt >= PROGRESS_EVERY_MS) {
      p.emittedAt = now;
      this.emit(this.tasks.get(localId));
    }
  }

  private stale(localId: string, ctl: AbortController): boolean {
    return this.disposed || !this.work.isCurrent(localId, ctl) || !this.tasks.has(localId);
  }

  private current(task: VideoTask): VideoTask {
    return this.tasks.get(task.localId) ?? task;
  }

  private require(id: string): VideoTask {
    const task = this.find(id);
    if (!task) throw new GatewayError('badRequest', words('There is no video task {0}.', id));
    return task;
  }

  private set(task: VideoTask): void {
    if (!this.tasks.has(task.localId) && task.phase !== 'submitting') {
      // Forgotten while a request was in flight: stays forgotten.
      return;
    }
    this.tasks.set(task.localId, task);
    this.persist();
    this.emit(task);
  }

  /** Saves are chained, so they land in order. */
  private persist(): void {
    const snapshot = [...this.tasks.values()];
    this.saving = this.saving
      .then(() => this.deps.store.save(snapshot))
      .catch((err: unknown) => this.log(`Could not save the video tasks: ${String(err)}`));
  }

  private emit(task: VideoTask | undefined): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(task);
      } catch (err) {
        this.log(`A video task listener failed: ${String(err)}`);
      }
    }
  }

  private assertOpen(): void {
    if (this.disposed) throw closedError();
  }

  private log(line: string): void {
    this.deps.log?.(line);
  }
}

function closedError(): GatewayError {
  return new GatewayError(
    'cancelled',
    words(
      'The video task list was closed (the window is reloading or the tasks were reloaded); the tasks carry on from storage.',
    ),
  );
}

function asGatewayError(err: unknown): GatewayError {
  return isGatewayError(err)
    ? err
    : new GatewayError('protocol', err instanceof Error ? err.message : String(err), { cause: err });
}
