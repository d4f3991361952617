import * as path from 'node:path';
import * as vscode from 'vscode';
import { isBelow, pathForm, realPathOf } from '../../core/workspacePaths';
import { locateFile } from '../trust/workspaceFiles';

/**
 * Which files the chat view may have the host read as images (`attachImageUris`): files inside a
 * workspace folder, inside the extension's own storage, or picked by the user in an open dialog
 * during this session. Anything else (a path a page could make up) is refused: the webview renders
 * model output and must not be a way to read arbitrary files.
 */
export class ImageReadPolicy {
  private readonly picked = new Set<string>();

  constructor(private readonly storageRoots: () => vscode.Uri[]) {}

  /** Files the user chose in a dialog may be read later in this session (e.g. dropped again). */
  async rememberPicked(uris: readonly vscode.Uri[]): Promise<void> {
    for (const uri of uris)
      if (uri.scheme === 'file')
        this.picked.add(pathForm(uri.fsPath) === 'unc' ? path.resolve(uri.fsPath) : await real(uri.fsPath));
  }

  /** Undefined when the file may be read, else why not (a sentence for the user). */
  async refusal(uri: vscode.Uri): Promise<string | undefined> {
    const name = path.basename(uri.path) || uri.toString(true);
    const refused = vscode.l10n.t(
      '{0} was not attached: only images in the open workspace folders, or picked with "Image…", can be attached from the chat view.',
      name,
    );
    if (uri.scheme !== 'file') {
      // Files of a remote workspace (vscode-remote and the like) are allowed when inside a workspace folder.
      const folder = vscode.workspace.getWorkspaceFolder(uri);
      return folder && isBelow(uri.path, folder.uri.path, path.posix) ? undefined : refused;
    }
    // A path the page names is judged by its text first: a device or UNC path the user did not pick
    // is never touched (locateFile refuses one outside the folders before any file system call).
    const form = pathForm(uri.fsPath);
    if (form === 'device') return refused;
    const picked = form === 'unc' ? path.resolve(uri.fsPath) : await real(uri.fsPath);
    if (this.picked.has(picked)) return undefined;
    const storage = this.storageRoots()
      .filter((r) => r.scheme === 'file')
      .map((r) => r.fsPath);
    const located = await locateFile(uri.fsPath, { outsideAllowed: false, extraFolders: storage });
    if (located.ok) return undefined;
    return located.why === 'outside' || located.why === 'linkOut' || located.why === 'noWorkspace'
      ? refused
      : located.message;
  }
}

/** The path with symbolic links resolved (a link inside a folder may point out of it); as given where that fails. */
function real(p: string): Promise<string> {
  return realPathOf(p).catch(() => path.resolve(p));
}
