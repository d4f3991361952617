/**
 * A webview's only channel to the host, for both apps: typed `post` of the app's intents, and VS
 * Code's per-webview state for UI-local things (drafts, scroll position, open sections), saved a
 * moment after the last change so typing and scrolling do not write on every key. Content always
 * comes from the host's messages, never from this state.
 */
import { applyLocale } from './locale';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

export class WebviewChannel<Out, State> {
  private readonly api: VsCodeApi;
  /** The UI-local state, read once at start; change it in place, then call `saveSoon()`. */
  readonly state: State;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    /** Reads what was saved (anything, from an older version or none at all) into a valid state. */
    readState: (saved: unknown) => State,
    private readonly saveDelayMs: number,
    /** Trims the state before it is saved (e.g. caps a map that grows with use). */
    private readonly beforeSave?: (state: State) => void,
  ) {
    this.api = acquireVsCodeApi();
    this.state = readState(this.api.getState());
  }

  post(message: Out): void {
    this.api.postMessage(message);
  }

  saveSoon(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.saveNow();
    }, this.saveDelayMs);
  }

  saveNow(): void {
    this.beforeSave?.(this.state);
    this.api.setState(this.state);
  }
}

/** What an app's host messages are checked with (a zod schema, or a reader built on one). */
export interface MessageSchema<In> {
  safeParse(data: unknown): { success: true; data: In } | { success: false; error: { issues: unknown } };
}

/**
 * Starts a webview app: applies the display language, creates it on #app, hands it every host message that fits the shared
 * protocol (anything else is logged and dropped), then tells the host it is ready.
 */
export function startWebviewApp<In>(
  name: string,
  schema: MessageSchema<In>,
  create: (root: HTMLElement) => { receive(message: In): void },
  ready: () => void,
): void {
  applyLocale();
  const root = document.getElementById('app') ?? document.body.appendChild(document.createElement('div'));
  const app = create(root);
  window.addEventListener('message', (event: MessageEvent<unknown>) => {
    const parsed = schema.safeParse(event.data);
    if (!parsed.success) {
      console.warn(
        `[Model Gateway ${name}] ignored a host message that does not fit the protocol:`,
        parsed.error.issues,
        event.data,
      );
      return;
    }
    app.receive(parsed.data);
  });
  ready();
}
