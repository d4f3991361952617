import * as path from 'node:path';
import * as vscode from 'vscode';
import { writeFolderPlace } from '../../core/confinedWrite';
import { GatewayError, isGatewayError } from '../../core/errors';
import { writeFileConfined, writeFileUnique } from '../../core/outputFiles';
import { readableText } from '../../core/tools/readableText';
import { words } from '../../shared/words';
import { markdownFileName, type ShownResult } from './results';

// Saving a shown tool result as a file (results.ts shows them): apart from the showing, which
// activation registers, so that the confined file writing is loaded only by a save.

/**
 * Saves a shown result: next to its source file as `<name>.md`, or where the user picks for a web
 * result. Returns undefined when the save dialog is cancelled. An existing file is never replaced.
 */
export async function saveResult(result: ShownResult): Promise<vscode.Uri | undefined> {
  if (typeof result.source !== 'string' && result.source.scheme === 'file')
    return saveBeside(result.source, result.content);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const target = await vscode.window.showSaveDialog({
    title: vscode.l10n.t('Save {0}', result.label),
    defaultUri: folder ? vscode.Uri.joinPath(folder, markdownFileName(result.label)) : undefined,
    filters: { [vscode.l10n.t('Markdown files')]: ['md'] },
  });
  if (!target) return undefined;
  try {
    // Confined to the folder the user picked: a link swapped in there meanwhile is not followed out.
    await writeFileConfined(target.fsPath, result.content, { overwrite: false, within: path.dirname(target.fsPath) });
  } catch (err) {
    if (isGatewayError(err) && err.code === 'EEXIST')
      throw new GatewayError(
        'badRequest',
        words('{0} already exists and was left as it is. Choose another name.', path.basename(target.fsPath)),
      );
    throw err;
  }
  return target;
}

/**
 * Saves the text as shown (readableText) next to the source as `<name>.md`, else the first free
 * `<name>_2.md`, `<name>_3.md`… (the one unique-name rule, as for generated images and videos): an
 * existing file is never replaced.
 */
export async function saveBeside(source: vscode.Uri, content: string, suffix = ''): Promise<vscode.Uri> {
  const dir = path.dirname(source.fsPath);
  const base = path.basename(source.fsPath, path.extname(source.fsPath)) + suffix;
  // Within the workspace folder that holds the source (a link in it may not lead out), else the source's own folder.
  const within = vscode.workspace.getWorkspaceFolder(source)?.uri.fsPath ?? dir;
  return vscode.Uri.file(
    await writeFileUnique(dir, base, 'md', Buffer.from(readableText(content), 'utf8'), {
      within: writeFolderPlace(dir, within) === 'inside' ? within : dir,
    }),
  );
}
