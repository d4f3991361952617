import * as path from 'node:path';
import * as vscode from 'vscode';
import { hasUnfinishedVideoTasks, VIDEO_TASKS_KEY } from './studioStart';
import { isGatewayError } from '../../core/errors';
import { VideoDownloadGuard } from '../../core/media/downloadGuard';
import { VideoTaskManager, type TaskStore } from '../../core/media/videoTaskManager';
import type { VideoTask } from '../../core/media/videoTaskStates';
import type { Services } from '../services';
import { mediaSettings } from './mediaSettings';

const KEY = VIDEO_TASKS_KEY;

/** The folder in the global storage where video downloads keep their locks and records (downloadGuard.ts). */
export const VIDEO_DOWNLOADS_FOLDER = 'video-downloads';

/**
 * The video tasks of this workspace, kept in its storage after every step. The manager is built
 * on first use; `reload()` drops it and builds a new one from storage, exactly as a window reload
 * or a restart of VS Code does, and waiting callers carry on with the new one.
 */
export class VideoTasks implements vscode.Disposable {
  private current?: Promise<VideoTaskManager>;
  private manager?: VideoTaskManager;
  private generation = 0;
  private disposed = false;
  private readonly phases = new Map<string, VideoTask['phase']>();
  private readonly changed = new vscode.EventEmitter<VideoTask | undefined>();
  readonly onDidChange = this.changed.event;
  private readonly store: TaskStore;

  constructor(
    private readonly services: Services,
    private readonly memento: vscode.Memento,
    private readonly onTransition: (task: VideoTask, from: VideoTask['phase'] | undefined) => void,
    /** The folder a download into a task's folder must stay in (OutputLocation.within). */
    private readonly outputRoot: (dir: string) => string,
  ) {
    this.store = {
      load: () => this.memento.get<unknown>(KEY),
      save: (tasks) => Promise.resolve(this.memento.update(KEY, tasks)),
    };
  }

  /** Whether storage holds a task that still needs polling or a download (read without the network). */
  hasUnfinished(): boolean {
    return hasUnfinishedVideoTasks(this.memento);
  }

  ready(): Promise<VideoTaskManager> {
    this.current ??= this.build();
    return this.current;
  }

  /** What is known now, without starting anything. */
  list(): VideoTask[] {
    return this.manager?.list() ?? [];
  }

  downloadProgress(localId: string): { received: number; total?: number } | undefined {
    return this.manager?.downloadProgress(localId);
  }

  /** Drops the running manager and resumes every task from storage, as after a window reload. */
  async reload(): Promise<VideoTask[]> {
    const previous = this.current;
    this.generation++;
    this.current = (async () => {
      const old = await previous?.catch(() => undefined);
      await old?.dispose();
      return this.build();
    })();
    return (await this.current).list();
  }

  /** Resolves when the task succeeded, failed or stopped polling, across reloads of the task list. */
  async wait(id: string, signal?: AbortSignal): Promise<VideoTask> {
    for (;;) {
      const generation = this.generation;
      const manager = await this.ready();
      try {
        return await manager.wait(id, signal);
      } catch (err) {
        if (isGatewayError(err, 'cancelled') && !signal?.aborted && !this.disposed && generation !== this.generation)
          continue;
        throw err;
      }
    }
  }

  private async build(): Promise<VideoTaskManager> {
    const manager = new VideoTaskManager({
      http: () => this.services.http(),
      store: this.store,
      policy: () => mediaSettings((line) => this.services.log.warn(line)).poll,
      log: (line) => this.services.log.info(line),
      // Every window of the workspace restores the same tasks: each result is downloaded once.
      downloads: new VideoDownloadGuard(
        path.join(this.services.context.globalStorageUri.fsPath, VIDEO_DOWNLOADS_FOLDER),
      ),
      keyOf: (model) => this.services.keyEntryFor({ model }),
      outputRoot: this.outputRoot,
    });
    manager.onDidChange((task) => {
      if (task) {
        const from = this.phases.get(task.localId);
        this.phases.set(task.localId, task.phase);
        if (from !== task.phase) this.onTransition(task, from);
      }
      this.changed.fire(task);
    });
    await manager.start();
    for (const task of manager.list()) if (!this.phases.has(task.localId)) this.phases.set(task.localId, task.phase);
    this.manager = manager;
    this.changed.fire(undefined);
    return manager;
  }

  dispose(): void {
    this.disposed = true;
    void this.manager?.dispose();
    this.changed.dispose();
  }
}
