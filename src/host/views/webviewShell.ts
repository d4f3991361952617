/**
 * The HTML shell every webview of the extension uses: a strict content security policy (no inline
 * script or style, the one script by nonce, images only from the extension and `data:`: no remote
 * host, an answer's remote images are fetched by the extension and handed over), the shared stylesheet and the app's own, one app bundle that
 * renders into #app.
 * No `vscode` import, so the webview tests serve exactly this page.
 */
export interface ShellParts {
  /** A fresh random nonce per page. */
  nonce: string;
  /** Where the extension's own files are served from (`webview.cspSource`). */
  cspSource: string;
  scriptUri: string;
  /** Stylesheets in order: the shared one first, then the app's own. */
  styleUris: readonly string[];
  title: string;
  /**
   * The app starts Web Workers from blob: URLs made from its own script's text (the chat's code
   * highlighting): `worker-src blob:`. VS Code webviews run workers from no other source.
   */
  blobWorkers?: boolean;
  /** VS Code's display language (`vscode.env.language`). */
  language: string;
  /** The translations for that language (`vscode.l10n.bundle`); none for English. */
  bundle?: Record<string, string>;
}

/** What a webview app reads before it renders: the display language and its translations. */
export interface WebviewLocale {
  language: string;
  bundle: Record<string, string>;
}

/** JSON inside a script element must not close the element or open a comment: escape `<`. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

export function shellHtml(parts: ShellParts): string {
  const csp = [
    `default-src 'none'`,
    `img-src ${parts.cspSource} data:`,
    `style-src ${parts.cspSource}`,
    `font-src ${parts.cspSource}`,
    `script-src 'nonce-${parts.nonce}'`,
    ...(parts.blobWorkers ? ['worker-src blob:'] : []),
  ].join('; ');
  const locale = scriptJson({ language: parts.language, bundle: parts.bundle ?? {} } satisfies WebviewLocale);
  return `<!DOCTYPE html>
<html lang="${escapeAttribute(parts.language)}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${parts.styleUris.map((uri) => `<link rel="stylesheet" href="${uri}">`).join('\n')}
<title>${parts.title}</title>
</head>
<body>
<div id="app"></div>
<script type="application/json" id="locale" nonce="${parts.nonce}">${locale}</script>
<script nonce="${parts.nonce}" src="${parts.scriptUri}"></script>
</body>
</html>`;
}

function escapeAttribute(text: string): string {
  return text.replace(/[^A-Za-z0-9-]/g, '');
}
