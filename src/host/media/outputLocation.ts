import * as path from 'node:path';
import * as vscode from 'vscode';
import { GatewayError } from '../../core/errors';

export type MediaKind = 'images' | 'videos';

/**
 * Where generated files go: `<workspace>/<modelGateway.outputFolder>/images|videos`. Without an
 * open (local) workspace folder the user is asked once per session for a folder.
 */
export class OutputLocation {
  private chosen?: string;

  constructor(private readonly outputFolder: () => string) {}

  /** The folder for `kind`, or undefined when there is no workspace and the user has not chosen one yet. */
  current(kind: MediaKind): string | undefined {
    const root = this.root();
    return root ? path.join(root, kind) : undefined;
  }

  /** The folder for `kind`, asking where to save when no workspace is open. */
  async resolve(kind: MediaKind): Promise<string> {
    const known = this.current(kind);
    if (known) return known;
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      openLabel: 'Save Here',
      title: `No folder is open: where should generated ${kind} be saved?`,
    });
    const folder = picked?.[0];
    if (!folder) throw new GatewayError('cancelled', 'No folder was chosen, so nothing was generated.');
    if (folder.scheme !== 'file') throw new GatewayError('badRequest', 'Generated media can only be saved to a folder on this machine\'s disk.');
    this.chosen = folder.fsPath;
    return path.join(this.chosen, kind);
  }

  /** The folder shown to the user, e.g. `generated/` or the chosen absolute folder. */
  describe(): string {
    const workspace = localWorkspace();
    const setting = this.outputFolder().trim() || 'generated';
    if (workspace) return path.isAbsolute(setting) ? setting : `${setting.replace(/[\\/]+$/, '')}/`;
    return this.chosen ?? 'asked on first use (no folder is open)';
  }

  /** Folders thumbnails may be loaded from. */
  roots(): vscode.Uri[] {
    const roots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri);
    const root = this.root();
    if (root) roots.push(vscode.Uri.file(root));
    return roots;
  }

  private root(): string | undefined {
    const workspace = localWorkspace();
    const setting = this.outputFolder().trim() || 'generated';
    if (workspace) return path.resolve(workspace, setting);
    return this.chosen;
  }
}

function localWorkspace(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  return folder?.uri.fsPath;
}

/** A path for people: relative to the workspace folder that holds it, else absolute. */
export function displayPath(file: string): string {
  const uri = vscode.Uri.file(file);
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  return folder ? path.relative(folder.uri.fsPath, file).split(path.sep).join('/') : file;
}
