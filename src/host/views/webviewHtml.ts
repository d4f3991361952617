import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { shellHtml } from './webviewShell';

export interface WebviewPage {
  /** Bundle name under dist/webview, e.g. `chat`. */
  app: string;
  /** Stylesheet name under media/, e.g. `chat`. */
  style: string;
  title: string;
  /** The app starts Web Workers from blob: URLs (the chat's code highlighting). */
  blobWorkers?: boolean;
}

/** A webview's page: the shell (webviewShell.ts) with this extension's bundle and stylesheet. */
export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, page: WebviewPage): string {
  return shellHtml({
    nonce: randomBytes(16).toString('base64'),
    cspSource: webview.cspSource,
    scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', `${page.app}.js`)).toString(),
    styleUris: ['common', page.style].map((name) =>
      webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', `${name}.css`)).toString(),
    ),
    title: page.title,
    language: vscode.env.language,
    ...(vscode.l10n.bundle ? { bundle: vscode.l10n.bundle } : {}),
    ...(page.blobWorkers ? { blobWorkers: true } : {}),
  });
}
