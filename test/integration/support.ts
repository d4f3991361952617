import * as vscode from 'vscode';

export const EXTENSION_ID = 'model-gateway.model-gateway';

export async function setSetting(key: string, value: unknown, section = 'modelGateway'): Promise<void> {
  await vscode.workspace.getConfiguration(section).update(key, value, vscode.ConfigurationTarget.Global);
}

/** Runs one of our commands and returns its result, typed by the caller. */
export function run<T>(command: string, ...args: unknown[]): Promise<T> {
  return Promise.resolve(vscode.commands.executeCommand<T>(`modelGateway.${command}`, ...args));
}

/** An open document by the uri string a command returned (e.g. the `document` of a tool result). */
export function documentByUri(uri: string | undefined): vscode.TextDocument | undefined {
  return uri === undefined ? undefined : vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
}

/**
 * Closes the text editors a test opened (tool results are read-only result documents) without the
 * "save changes?" prompt nobody would answer here.
 */
export async function closeEditorsDiscarding(max = 50): Promise<void> {
  const ours = () =>
    vscode.window.visibleTextEditors.filter((e) =>
      ['untitled', 'file', 'model-gateway-result'].includes(e.document.uri.scheme),
    );
  for (let i = 0; i < max; i++) {
    const editor = ours()[0];
    if (!editor) return;
    await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preview: false });
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }
}

/**
 * Waits for a command that shows a quick pick and settles only once it is closed: closes the quick
 * input (as Escape would) until the command's promise settles, and returns its result.
 */
export async function settleWhileClosingQuickInput<T>(pending: Promise<T>, timeoutMs = 60_000): Promise<T> {
  let settled = false;
  const done = pending.finally(() => {
    settled = true;
  });
  const deadline = Date.now() + timeoutMs;
  while (!settled && Date.now() < deadline) {
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    await Promise.race([done.catch(() => undefined), new Promise((r) => setTimeout(r, 100))]);
  }
  if (!settled) throw new Error(`the command did not settle within ${timeoutMs} ms after closing its quick pick`);
  return done;
}

/** Points the extension at a started gateway double with its demo key, and reads the key's models. */
export async function useDouble(gw: { url: string; catalogUrl: string; demoKey: string }): Promise<void> {
  await setSetting('baseUrl', gw.url);
  await setSetting('catalogUrl', gw.catalogUrl);
  await run('setApiKey', gw.demoKey);
  await run('refreshModels');
}
