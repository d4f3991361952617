import { CdnStore } from './cdn';
import type { RequestContext } from './requestContext';
import type { VideoQueryShape, VideoTiming } from './types';
import { DEFAULT_VIDEO_TIMING, VideoBoard } from './videoTasks';
import type { World } from './world';

/**
 * What the media routes keep between requests, one per World (so one per double): the CDN origin's
 * objects, the video tasks and the timers of slow answers. GatewayDouble configures it before any
 * request and disposes of it on stop().
 */
export class MediaState {
  /** Set by GatewayDouble: the CDN origin, `http://127.0.0.1:port`. */
  cdnOrigin: () => string = () => {
    throw new Error('gateway double: the cdn origin is not started');
  };
  readonly cdn = new CdnStore(() => this.cdnOrigin());
  board = new VideoBoard(DEFAULT_VIDEO_TIMING, this.cdn);
  /** How video task queries are answered; see VideoQueryShape. */
  videoQuery: VideoQueryShape = 'task';
  /** The origin new-api writes into links to its own content route (its configured server address); default the gateway's own. */
  serverAddress?: string;
  private readonly sleepers = new Set<() => void>();

  configure(timing: Partial<VideoTiming> | undefined): void {
    this.board.stop();
    this.board = new VideoBoard({ ...DEFAULT_VIDEO_TIMING, ...timing }, this.cdn);
  }

  start(): void {
    this.board.start();
  }

  stop(): void {
    this.board.stop();
    for (const wake of [...this.sleepers]) wake();
  }

  /**
   * Waits `ms`; resolves false early when the client went away or the double stopped, so a long
   * [[slow]] answer neither keeps the process alive nor charges for an answer nobody reads.
   */
  sleep(ms: number, http: RequestContext): Promise<boolean> {
    return new Promise((resolve) => {
      const finish = (done: boolean) => {
        clearTimeout(timer);
        http.res.off('close', onClose);
        this.sleepers.delete(onStop);
        resolve(done);
      };
      const onClose = () => finish(false);
      const onStop = () => finish(false);
      const timer = setTimeout(() => finish(!http.res.destroyed), ms);
      http.res.once('close', onClose);
      this.sleepers.add(onStop);
    });
  }
}

const states = new WeakMap<World, MediaState>();

export function mediaState(world: World): MediaState {
  let state = states.get(world);
  if (!state) {
    state = new MediaState();
    states.set(world, state);
  }
  return state;
}
