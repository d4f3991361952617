import * as path from 'node:path';
import { sweepLeftovers } from '../../core/media/leftovers';
import type { Services } from '../services';
import type { Gallery } from './gallery';
import type { OutputLocation } from './outputLocation';
import { VIDEO_DOWNLOADS_FOLDER, type VideoTasks } from './videoTasks';

/** Long after start-up: the sweep is housekeeping and must not compete with what the user opened the window for. */
const SWEEP_DELAY_MS = 2 * 60 * 1000;

/**
 * Once per session, a while after the features start, removes the temporary files that writes of
 * this and earlier versions left when cut short (core/media/leftovers.ts): in the extension's
 * global storage (the chat store, its images, caches, the video downloads' records) and in the
 * folders generated files went to (the output folders, the folders of the gallery's files and of
 * the video tasks). Returns a function that cancels a sweep not yet started.
 */
export function sweepLeftoversLater(
  services: Services,
  sources: { output: OutputLocation; gallery: Gallery; video: VideoTasks },
  delayMs = SWEEP_DELAY_MS,
): () => void {
  const timer = setTimeout(() => {
    const storage = services.context.globalStorageUri.fsPath;
    const outputs = new Set<string>();
    for (const kind of ['images', 'videos'] as const) {
      const dir = sources.output.current(kind);
      if (dir) outputs.add(dir);
    }
    for (const item of sources.gallery.list()) outputs.add(path.dirname(item.file));
    for (const task of sources.video.list()) outputs.add(task.outputDir);
    void sweepLeftovers({
      // The store keeps its files two levels down at most (conversations/.index/…).
      folders: [{ dir: storage, depth: 3 }, ...[...outputs].map((dir) => ({ dir, depth: 0 }))],
      guardDir: path.join(storage, VIDEO_DOWNLOADS_FOLDER),
    }).then(
      (removed) => {
        if (removed.length)
          services.log.info(`Removed ${removed.length} temporary files that interrupted writes left.`);
      },
      (err: unknown) => services.log.warn(`Removing temporary files of interrupted writes failed: ${String(err)}`),
    );
  }, delayMs);
  // Never keeps a closing extension host alive.
  timer.unref?.();
  return () => clearTimeout(timer);
}
