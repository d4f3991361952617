import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { GatewayError } from '../../core/errors';
import { writeFolderPlace } from '../../core/confinedWrite';
import { resolveOutputFolder, type OutputFolderRule } from '../../core/outputFolder';
import { existingReal, isInside } from '../../core/workspacePaths';
import { DEFAULT_SETTINGS } from '../../core/settings';
import { words } from '../../shared/words';

export type MediaKind = 'images' | 'videos';

/**
 * Where generated files go: `<workspace>/<modelGateway.outputFolder>/images|videos`, or below an
 * absolute folder from the user settings. A relative setting may not lead outside the workspace
 * (core/outputFolder.ts), not even through a symbolic link a cloned folder could contain. Without
 * an open (local) workspace folder and no absolute setting, the user is asked once per session.
 */
export class OutputLocation {
  private chosen?: string;

  /** @param outputFolder the user's value of the setting (workspace values are never passed here). */
  constructor(private readonly outputFolder: () => string) {}

  /** The folder for `kind`, or undefined when it is not known yet (no workspace, nothing chosen) or refused. */
  current(kind: MediaKind): string | undefined {
    const rule = this.rule();
    const root = rule.ok ? (rule.folder ?? this.chosen) : undefined;
    return root ? path.join(root, kind) : undefined;
  }

  /**
   * The folder for `kind`, asking where to save when no workspace is open. Throws a `badRequest`
   * GatewayError with the reason, before anything is requested or written, when the setting is refused.
   */
  async resolve(kind: MediaKind): Promise<string> {
    const rule = this.rule();
    if (!rule.ok) throw new GatewayError('badRequest', words('Nothing was generated: {0}', rule.reason));
    if (rule.folder) {
      const workspace = localWorkspace();
      if (workspace && !path.isAbsolute(this.setting()))
        await ensureNoLinkOutside(path.join(rule.folder, kind), workspace);
      return path.join(rule.folder, kind);
    }
    if (this.chosen) return path.join(this.chosen, kind);
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      openLabel: vscode.l10n.t('Save Here'),
      title:
        kind === 'videos'
          ? vscode.l10n.t('No folder is open: where should generated videos be saved?')
          : vscode.l10n.t('No folder is open: where should generated images be saved?'),
    });
    const folder = picked?.[0];
    if (!folder) throw new GatewayError('cancelled', words('No folder was chosen, so nothing was generated.'));
    if (folder.scheme !== 'file')
      throw new GatewayError(
        'badRequest',
        words("Generated media can only be saved to a folder on this machine's disk."),
      );
    this.chosen = folder.fsPath;
    return path.join(this.chosen, kind);
  }

  /**
   * The folder a write into `dir` must stay in, however `dir` is changed meanwhile (see
   * core/confinedWrite.ts): the workspace folder for a relative setting (a link in it may not lead
   * out), the absolute folder of the user's setting, the folder the user picked; else `dir` itself
   * (a restored task's folder from an earlier setting: it may not be swapped while written).
   */
  within(dir: string): string {
    const rule = this.rule();
    const workspace = localWorkspace();
    const roots = [
      ...(rule.ok && rule.folder ? [path.isAbsolute(this.setting()) ? rule.folder : (workspace ?? rule.folder)] : []),
      ...(this.chosen ? [this.chosen] : []),
    ];
    return roots.find((root) => writeFolderPlace(dir, root) === 'inside') ?? dir;
  }

  /** The folder shown to the user, e.g. `generated/`, the absolute folder, or why the setting is refused. */
  describe(): string {
    const rule = this.rule();
    if (!rule.ok) return vscode.l10n.t('not usable: {0}', rule.reason);
    if (rule.folder) return path.isAbsolute(this.setting()) ? rule.folder : `${this.setting().replace(/[\\/]+$/, '')}/`;
    return this.chosen ?? vscode.l10n.t('asked on first use (no folder is open)');
  }

  /** Folders thumbnails may be loaded from. */
  roots(): vscode.Uri[] {
    const roots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri);
    const images = this.current('images');
    if (images) roots.push(vscode.Uri.file(path.dirname(images)));
    return roots;
  }

  private setting(): string {
    return this.outputFolder().trim() || DEFAULT_SETTINGS.outputFolder;
  }

  private rule(): OutputFolderRule {
    return resolveOutputFolder(this.outputFolder(), 'user', localWorkspace());
  }
}

/**
 * A relative output folder is inside the workspace by its text; this checks it stays there on
 * disk: the deepest part of it that exists must, with symbolic links followed, still lie inside
 * the workspace folder (itself with links followed).
 */
async function ensureNoLinkOutside(folder: string, workspace: string): Promise<void> {
  const realWorkspace = await fs.realpath(workspace);
  const { existing, real } = await existingReal(folder);
  if (isInside(real, realWorkspace)) return;
  throw new GatewayError(
    'badRequest',
    words(
      'Nothing was generated: the output folder "{0}" is a link to {1}, outside the workspace. Remove the link, or set an absolute "modelGateway.outputFolder" in your user settings.',
      displayPath(existing),
      real,
    ),
  );
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
