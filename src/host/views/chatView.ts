import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { webviewMessageSchema } from '../../shared/protocol';
import type { ChatController, ChatViewPort } from '../chat/chatController';
import { AnswerImages } from '../chat/answerImages';
import { REMOTE_IMAGE_HOSTS_SETTING } from '../chat/remoteImages';
import { shownTitle } from '../chat/snapshot';
import { showError } from '../notify';
import { webviewHtml } from './webviewHtml';
import type { Route } from '../../core/proxy';

/**
 * The sidebar chat. The HTML is a shell with a strict CSP (no inline script or style, script by
 * nonce only); the app in dist/webview/chat.js renders what the controller sends.
 */
export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'modelGateway.chat';
  private view?: vscode.WebviewView;
  private ready = false;

  /** An answer's remote images, fetched here for the page (its CSP lists no remote host). */
  private readonly images: AnswerImages;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
    private readonly log: vscode.LogOutputChannel,
    route: (url: URL, signal: AbortSignal) => Promise<Route>,
  ) {
    this.images = new AnswerImages((message) => void this.view?.webview.postMessage(message), route);
  }

  /** The snapshot names the allowed image hosts, so a change of them sends a new one. */
  private readonly settingsWatch = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration(REMOTE_IMAGE_HOSTS_SETTING) && this.view) void this.controller.sendSnapshot();
  });

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    this.images.cancelAll();
    const webview = view.webview;
    webview.options = {
      enableScripts: true,
      // Stored chat images are shown from their files (thumbnails of attached and sent images).
      localResourceRoots: [
        vscode.Uri.joinPath(this.extensionUri, 'media'),
        vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview'),
        this.controller.imageDir,
      ],
    };
    const port: ChatViewPort = {
      post: (message) => {
        // The conversation's title goes beside the view's own ("CHAT · Sorting in TypeScript"), not
        // in a strip of its own inside the view.
        if (message.type === 'snapshot') {
          view.description = shownTitle(message.state);
          // A conversation left: its images still being fetched are not wanted.
          this.images.shown(message.state.key);
        }
        void webview.postMessage(message);
      },
      isLive: () => this.ready && view.visible,
      resourceUri: (file) => webview.asWebviewUri(file).toString(),
      // The page is rebuilt; it then reports ready again and gets a snapshot.
      reload: () => {
        this.ready = false;
        this.images.cancelAll();
        webview.html = this.html(webview);
      },
    };
    this.controller.attach(port);
    webview.html = this.html(webview);
    view.onDidChangeVisibility(() => {
      // Hidden views are torn down and reload; a visible one is resynced from a full snapshot.
      if (view.visible) void this.controller.sendSnapshot();
    });
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
        this.ready = false;
        this.images.cancelAll();
        this.controller.attach(undefined);
      }
    });
    webview.onDidReceiveMessage(async (raw: unknown) => {
      const parsed = z.safeParse(webviewMessageSchema, raw);
      if (!parsed.success) {
        this.log.warn(`Ignored a malformed message from the chat view: ${JSON.stringify(raw).slice(0, 200)}`);
        return;
      }
      if (parsed.data.type === 'ready') this.ready = true;
      if (parsed.data.type === 'loadRemoteImage') {
        this.images.load(parsed.data.url, parsed.data.conversationId);
        return;
      }
      try {
        await this.controller.handle(parsed.data);
      } catch (err) {
        showError(err, this.log);
      }
    });
  }

  dispose(): void {
    this.settingsWatch.dispose();
    this.images.dispose();
    this.controller.attach(undefined);
  }

  private html(webview: vscode.Webview): string {
    return webviewHtml(webview, this.extensionUri, {
      app: 'chat',
      style: 'chat',
      title: vscode.l10n.t('Model Gateway Chat'),
      blobWorkers: true,
    });
  }
}
