import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

export interface WebviewPage {
  /** Bundle name under dist/webview, e.g. `chat`. */
  app: string;
  /** Stylesheet name under media/, e.g. `chat`. */
  style: string;
  title: string;
  /** Hosts `https:` images may load from (only hosts the user allowed one by one). */
  imageHosts?: readonly string[];
}

/**
 * The shell every webview of the extension uses: a strict content security policy (no inline
 * script or style, the one script by nonce, images only from the extension and `data:`), one
 * stylesheet, one app bundle that renders into #app.
 */
export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, page: WebviewPage): string {
  const nonce = randomBytes(16).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', `${page.app}.js`));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', `${page.style}.css`));
  const images = ['img-src', webview.cspSource, 'data:', ...(page.imageHosts ?? []).map((host) => `https://${host}`)].join(' ');
  const csp = [`default-src 'none'`, images, `style-src ${webview.cspSource}`, `font-src ${webview.cspSource}`, `script-src 'nonce-${nonce}'`].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>${page.title}</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
