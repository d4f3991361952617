import * as vscode from 'vscode';
import type { OpenedFile } from '../../core/tools/openedFile';
import { withWorkspaceFile } from '../trust/workspaceFiles';

/**
 * The file a document command works on: the explorer item it was run on, else the active tab's
 * resource (a PDF shows as a binary or custom-editor tab, not a text editor), else a file picker.
 */
export async function resolveTarget(
  arg: unknown,
  filters: Record<string, string[]>,
  title: string,
): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg;
  if (typeof arg === 'string') return arg.includes('://') ? vscode.Uri.parse(arg) : vscode.Uri.file(arg);
  if (arg && typeof arg === 'object' && 'uri' in arg)
    return resolveTarget((arg as { uri: unknown }).uri, filters, title);
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  const uri = input instanceof vscode.TabInputText || input instanceof vscode.TabInputCustom ? input.uri : undefined;
  const extensions = Object.values(filters).flat();
  if (uri && extensions.some((ext) => uri.path.toLowerCase().endsWith(`.${ext}`))) return uri;
  const picked = await vscode.window.showOpenDialog({
    title,
    canSelectMany: false,
    filters,
    openLabel: vscode.l10n.t('Choose'),
  });
  return picked?.[0];
}

/**
 * Runs `use` on the file a command was run on, opened once and closed afterwards. The user named
 * it (explorer, editor, dialog or argument), so it may lie outside the workspace; a link inside a
 * workspace folder that leads out of it is refused, and the open handle is checked to be the file
 * approved (trust/workspaceFiles.ts). Everything sent is read through that handle. Files are read
 * from this machine's disk; remote workspaces are not supported by the upload code.
 */
export async function withTargetFile<T>(uri: vscode.Uri, use: (file: OpenedFile) => Promise<T>): Promise<T> {
  if (uri.scheme !== 'file' && uri.scheme !== 'vscode-remote')
    throw new Error(vscode.l10n.t('Only files on disk can be sent (this one is {0}:).', uri.scheme));
  return withWorkspaceFile(uri.fsPath, { outsideAllowed: true }, use);
}
