import * as vscode from 'vscode';
import { MEDIA_PANEL_VIEW_TYPE } from './studioStart';
import * as z from 'zod/mini';
import {
  mediaWebviewMessageSchema,
  type MediaHostMessage,
  type MediaTab,
  type MediaWebviewMessage,
} from '../../shared/mediaProtocol';
import { showError } from '../notify';
import { webviewHtml } from '../views/webviewHtml';

/** What the panel needs from the studio behind it. */
export interface MediaPanelOwner {
  attach(panel: MediaPanel | undefined): void;
  handle(msg: MediaWebviewMessage): Promise<void>;
  resourceRoots(): vscode.Uri[];
}

/**
 * The Media Studio editor panel. As the chat view: a shell with a strict CSP (no inline script or
 * style, the script by nonce only), a ready handshake, and full snapshots only. Thumbnails are
 * loaded from the output folders through `asWebviewUri`; nothing remote is ever loaded.
 */
export class MediaPanel implements vscode.Disposable {
  static readonly viewType = MEDIA_PANEL_VIEW_TYPE;
  private static current?: MediaPanel;
  private ready = false;
  private pendingTab?: MediaTab;
  private readonly disposables: vscode.Disposable[] = [];

  /** Shows the panel (creating it if needed) on `tab`. */
  static show(
    extensionUri: vscode.Uri,
    owner: MediaPanelOwner,
    log: vscode.LogOutputChannel,
    tab?: MediaTab,
  ): MediaPanel {
    const existing = MediaPanel.current;
    if (existing) {
      existing.panel.reveal(existing.panel.viewColumn ?? vscode.ViewColumn.Active);
      if (tab) existing.showTab(tab);
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(
      MediaPanel.viewType,
      vscode.l10n.t('Media Studio'),
      vscode.ViewColumn.Active,
      {
        enableScripts: true,
        localResourceRoots: MediaPanel.roots(extensionUri, owner),
      },
    );
    const created = new MediaPanel(panel, extensionUri, owner, log);
    created.pendingTab = tab;
    MediaPanel.current = created;
    return created;
  }

  /**
   * After a window reload VS Code brings the panel back (its tab and form drafts are the webview's
   * own saved state) and hands it here to be given its page again; the gallery and tasks come from
   * the host's snapshot once the page says ready, as for a new panel.
   */
  static revive(
    panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    owner: MediaPanelOwner,
    log: vscode.LogOutputChannel,
  ): MediaPanel | undefined {
    if (MediaPanel.current) {
      // One studio panel at a time: a second restored one would compete for the same state.
      panel.dispose();
      return undefined;
    }
    panel.webview.options = { enableScripts: true, localResourceRoots: MediaPanel.roots(extensionUri, owner) };
    panel.title = vscode.l10n.t('Media Studio');
    const revived = new MediaPanel(panel, extensionUri, owner, log);
    MediaPanel.current = revived;
    return revived;
  }

  static get open(): MediaPanel | undefined {
    return MediaPanel.current;
  }

  private static roots(extensionUri: vscode.Uri, owner: MediaPanelOwner): vscode.Uri[] {
    return [
      vscode.Uri.joinPath(extensionUri, 'media'),
      vscode.Uri.joinPath(extensionUri, 'dist', 'webview'),
      ...owner.resourceRoots(),
    ];
  }

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private readonly owner: MediaPanelOwner,
    private readonly log: vscode.LogOutputChannel,
  ) {
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'activity.svg');
    panel.webview.html = this.html();
    owner.attach(this);
    this.disposables.push(
      panel.onDidDispose(() => this.dispose()),
      // A hidden panel's page is torn down; when it shows again it reloads and says ready.
      panel.onDidChangeViewState(() => {
        if (!panel.visible) this.ready = false;
      }),
      panel.webview.onDidReceiveMessage(async (raw: unknown) => {
        const parsed = z.safeParse(mediaWebviewMessageSchema, raw);
        if (!parsed.success) {
          log.warn(`Ignored a malformed message from Media Studio: ${JSON.stringify(raw).slice(0, 200)}`);
          return;
        }
        if (parsed.data.type === 'ready') this.ready = true;
        try {
          await owner.handle(parsed.data);
        } catch (err) {
          showError(err, log);
        }
        if (parsed.data.type === 'ready' && this.pendingTab) this.showTab(this.pendingTab);
      }),
    );
  }

  isLive(): boolean {
    return this.ready && this.panel.visible;
  }

  post(message: MediaHostMessage): void {
    if (this.isLive()) void this.panel.webview.postMessage(message);
  }

  showTab(tab: MediaTab): void {
    if (this.isLive()) {
      this.pendingTab = undefined;
      void this.panel.webview.postMessage({ type: 'showTab', tab } satisfies MediaHostMessage);
    } else {
      this.pendingTab = tab;
    }
  }

  asWebviewUri(uri: vscode.Uri): string {
    return this.panel.webview.asWebviewUri(uri).toString();
  }

  /** The output folder may have changed (a folder chosen without a workspace): thumbnails need it. */
  updateRoots(): void {
    const roots = MediaPanel.roots(this.extensionUri, this.owner);
    const current = (this.panel.webview.options.localResourceRoots ?? []).map((u) => u.toString());
    if (roots.every((r) => current.includes(r.toString()))) return;
    this.ready = false;
    this.panel.webview.options = { ...this.panel.webview.options, localResourceRoots: roots };
    this.panel.webview.html = this.html();
  }

  close(): void {
    this.panel.dispose();
  }

  dispose(): void {
    if (MediaPanel.current === this) MediaPanel.current = undefined;
    this.owner.attach(undefined);
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private html(): string {
    return webviewHtml(this.panel.webview, this.extensionUri, {
      app: 'media',
      style: 'media',
      title: vscode.l10n.t('Media Studio'),
    });
  }
}
