import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { RESUME_DELAY_MS } from './studioStart';
import { isGatewayError } from '../../core/errors';
import type { ModelInfo } from '../../core/models/types';
import type { MediaSnapshot, MediaTab, MediaWebviewMessage } from '../../shared/mediaProtocol';
import { showError } from '../notify';
import type { Services } from '../services';
import { loadModelsOnFirstUse, runSetupAction, setupNotice } from '../setup';
import { fileAction, galleryItemAction, insertLink } from './fileActions';
import { Gallery, type GalleryItem } from './gallery';
import { ImageRunner } from './imageRunner';
import { LastChoicesStore } from './lastChoices';
import { sweepLeftoversLater } from './leftoverSweep';
import { MediaPanel, type MediaPanelOwner } from './mediaPanel';
import { mediaSnapshot } from './mediaSnapshot';
import { OutputLocation } from './outputLocation';
import { VideoActions } from './videoActions';
import { VideoTasks } from './videoTasks';

const SNAPSHOT_EVERY_MS = 100;
/** Unfinished video tasks resume this long after activation, never during it. */

/**
 * The Media Studio: coordinates image generation (imageRunner.ts), video tasks (videoActions.ts,
 * videoTasks.ts), the gallery and the file actions (fileActions.ts), and the panel, which only
 * renders the snapshots built in mediaSnapshot.ts. Commands and the panel both come here.
 */
export class MediaStudio implements vscode.Disposable, MediaPanelOwner {
  readonly gallery: Gallery;
  readonly video: VideoTasks;
  readonly output: OutputLocation;
  readonly choices: LastChoicesStore;
  readonly images: ImageRunner;
  readonly videos: VideoActions;
  private panel?: MediaPanel;
  private lastEditor?: vscode.TextEditor;
  private snapshotTimer?: ReturnType<typeof setTimeout>;
  private lastSnapshotAt = 0;
  private readonly subscriptions: vscode.Disposable[] = [];
  private resumeTimer?: ReturnType<typeof setTimeout>;

  constructor(readonly services: Services) {
    const context = services.context;
    this.gallery = new Gallery(context.workspaceState);
    this.output = new OutputLocation(() => services.settings().outputFolder);
    this.choices = new LastChoicesStore(context.workspaceState);
    this.video = new VideoTasks(
      services,
      context.workspaceState,
      (task, from) => void this.videos.onTaskTransition(task, from),
      (dir) => this.output.within(dir),
    );
    this.images = new ImageRunner(this);
    this.videos = new VideoActions(this);
    this.lastEditor = vscode.window.activeTextEditor;
    this.subscriptions.push(
      this.gallery,
      this.video,
      services.registry.onDidChange(() => this.refresh()),
      services.keys.onDidChange(() => this.refresh()),
      services.onDidChangeSettings(() => this.refresh()),
      this.gallery.onDidChange(() => this.refresh()),
      this.video.onDidChange(() => this.refresh()),
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e) this.lastEditor = e;
      }),
      { dispose: sweepLeftoversLater(services, this) },
    );
    // Tasks left running by the last session resume soon after activation, not during it.
    if (this.video.hasUnfinished())
      this.resumeTimer = setTimeout(
        () =>
          void this.video
            .ready()
            .catch((err: unknown) => services.log.warn(`Resuming video tasks failed: ${String(err)}`)),
        RESUME_DELAY_MS,
      );
  }

  /** A panel VS Code restored after a reload (the entry's serializer hands it here). */
  revive(panel: vscode.WebviewPanel): void {
    MediaPanel.revive(panel, this.services.context.extensionUri, this, this.services.log);
  }

  attach(panel: MediaPanel | undefined): void {
    this.panel = panel;
    if (!panel) return;
    void this.video
      .ready()
      .catch((err: unknown) => this.services.log.warn(`Loading video tasks failed: ${String(err)}`));
    void this.gallery
      .measureMissing()
      .catch((err: unknown) => this.services.log.warn(`Reading the sizes of gallery files failed: ${String(err)}`));
    // A panel restored after a reload opens with no command behind it: it loads the models itself.
    void loadModelsOnFirstUse(this.services, 'media');
  }

  /** Thumbnails may be read from these folders. */
  resourceRoots(): vscode.Uri[] {
    return this.output.roots();
  }

  updateRoots(): void {
    this.panel?.updateRoots();
  }

  isShowing(): boolean {
    return this.panel?.isLive() ?? false;
  }

  /** Shows the Media Studio panel on `tab`. */
  open(tab?: MediaTab): MediaPanel {
    return MediaPanel.show(this.services.context.extensionUri, this, this.services.log, tab);
  }

  /** A Markdown link to a gallery item at the cursor of the last editor used. */
  insertLink(item: GalleryItem): Promise<string> {
    return insertLink(item, this.lastEditor);
  }

  async handle(msg: MediaWebviewMessage): Promise<void> {
    switch (msg.type) {
      case 'ready':
        return this.sendSnapshot(true);
      case 'generateImage':
        await this.images
          .generate({
            ...msg.request,
            outerModel: msg.request.route === 'responses' ? msg.request.outerModel : undefined,
          })
          .catch((err: unknown) => {
            if (!isGatewayError(err, 'cancelled')) showError(err, this.services.log);
          });
        // The view disabled its button when it sent the request; a snapshot gives it back.
        this.refresh();
        return;
      case 'cancelImage':
        return this.images.cancel();
      case 'submitVideo':
        await this.videos.submit(msg.request).catch((err: unknown) => showError(err, this.services.log));
        this.refresh();
        return;
      case 'task':
        await this.videos.taskAction(msg.action, msg.id);
        return;
      case 'item':
        return galleryItemAction(this.gallery, msg.action, msg.id, this.lastEditor);
      case 'action':
        return this.runAction(msg.action);
    }
  }

  /** Full state for the panel; coalesced to at most one post per ~100 ms. */
  refresh(): void {
    if (!this.panel || this.snapshotTimer) return;
    const wait = Math.max(0, this.lastSnapshotAt + SNAPSHOT_EVERY_MS - Date.now());
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = undefined;
      void this.sendSnapshot();
    }, wait);
  }

  async sendSnapshot(force = false): Promise<void> {
    const panel = this.panel;
    if (!panel || (!force && !panel.isLive())) return;
    this.lastSnapshotAt = Date.now();
    const models = this.services.registry.snapshot.models.filter((m) => m.available);
    const media = models.filter((m) => m.kind === 'image' || m.kind === 'video').length;
    const notice = await this.notice(media);
    // The panel may have been closed while the notice was worked out; a closed one takes nothing.
    if (this.panel !== panel) return;
    panel.post({
      type: 'snapshot',
      state: mediaSnapshot(panel, {
        models,
        last: this.choices.get(),
        ...(this.images.job ? { job: this.images.job.view } : {}),
        video: this.video,
        gallery: this.gallery,
        output: this.output,
        notice,
      }),
    });
  }

  private async notice(mediaModels: number): Promise<Pick<MediaSnapshot, 'notice'>> {
    const notice = await setupNotice(this.services, mediaModels, {
      noBase: vscode.l10n.t('Set the gateway base address to generate images and videos.'),
      noKey: vscode.l10n.t('Set your API key to generate images and videos.'),
      noModels: vscode.l10n.t('This key has no image or video models.'),
    });
    return notice ? { notice } : {};
  }

  private async runAction(action: 'setKey' | 'openSettings' | 'refreshModels' | 'openOutputFolder'): Promise<void> {
    if (action !== 'openOutputFolder') return runSetupAction(action);
    const images = this.output.current('images');
    const root = images ? path.dirname(images) : undefined;
    if (!root || !existsSync(root)) {
      void vscode.window.showInformationMessage(
        vscode.l10n.t('Nothing has been saved yet; generated files will go to {0}.', this.output.describe()),
      );
      return;
    }
    await fileAction('reveal', root);
  }

  /** The merged model list, loaded once if nothing was loaded yet; the key's error if it could not be. */
  async models(): Promise<ModelInfo[]> {
    await loadModelsOnFirstUse(this.services, 'media');
    const snap = this.services.registry.snapshot;
    if (snap.keyError && !snap.models.some((m) => m.available)) throw snap.keyError;
    return snap.models;
  }

  dispose(): void {
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    if (this.snapshotTimer) clearTimeout(this.snapshotTimer);
    this.images.job?.abort.abort();
    MediaPanel.open?.close();
    for (const s of this.subscriptions) s.dispose();
  }
}
