import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MediaWebviewMessage } from '../../shared/mediaProtocol';
import type { Gallery, GalleryItem } from './gallery';
import { displayPath } from './outputLocation';

/** What the user can do with a saved image or video: open it, reveal it, link it, ask about it. */

export async function fileAction(action: 'open' | 'openExternal' | 'reveal', file: string): Promise<void> {
  const uri = vscode.Uri.file(file);
  switch (action) {
    case 'open':
      await vscode.commands.executeCommand('vscode.open', uri);
      return;
    case 'openExternal':
      // VS Code's own preview cannot play every MP4; the system's player can.
      await vscode.env.openExternal(uri);
      return;
    case 'reveal':
      if (vscode.workspace.getWorkspaceFolder(uri)) await vscode.commands.executeCommand('revealInExplorer', uri);
      else await vscode.commands.executeCommand('revealFileInOS', uri);
      return;
  }
}

/** The actions on a gallery card. `lastEditor` is where a Markdown link goes when no editor has focus. */
export async function galleryItemAction(
  gallery: Gallery,
  action: Extract<MediaWebviewMessage, { type: 'item' }>['action'],
  id: string,
  lastEditor: vscode.TextEditor | undefined,
): Promise<void> {
  const item = gallery.find(id);
  if (!item) return;
  switch (action) {
    case 'remove':
      return gallery.remove(id);
    case 'copyPath':
      await vscode.env.clipboard.writeText(item.file);
      void vscode.window.setStatusBarMessage(vscode.l10n.t('Copied {0}', item.file), 3000);
      return;
    case 'insertLink':
      await insertLink(item, lastEditor);
      return;
    case 'askInChat':
      // The chat attaches the image to its next message (and picks a model that takes images).
      await vscode.commands.executeCommand('modelGateway.askAboutImage', { uri: vscode.Uri.file(item.file) });
      return;
    default:
      if (!existsSync(item.file)) {
        void vscode.window.showWarningMessage(vscode.l10n.t('{0} no longer exists.', displayPath(item.file)));
        return;
      }
      return fileAction(action, item.file);
  }
}

/** A Markdown link at the cursor of the last editor used; relative to that document where possible. */
export async function insertLink(item: GalleryItem, lastEditor: vscode.TextEditor | undefined): Promise<string> {
  const editor = [vscode.window.activeTextEditor, lastEditor].find(
    (e): e is vscode.TextEditor => !!e && !e.document.isClosed,
  );
  const link = markdownLink(item, editor?.document.uri);
  if (!editor) {
    await vscode.env.clipboard.writeText(link);
    void vscode.window.showInformationMessage(
      vscode.l10n.t('No editor is open, so the Markdown link was copied to the clipboard.'),
    );
    return link;
  }
  const shown = await vscode.window.showTextDocument(editor.document, {
    viewColumn: editor.viewColumn,
    preserveFocus: false,
    selection: editor.selection,
  });
  await shown.edit((edit) => {
    for (const selection of shown.selections) edit.replace(selection, link);
  });
  return link;
}

/** `![prompt](relative/path.png)` for images, `[prompt](path.mp4)` for videos. */
export function markdownLink(
  item: Pick<GalleryItem, 'kind' | 'file' | 'prompt'>,
  from: vscode.Uri | undefined,
): string {
  let target: string;
  if (from?.scheme === 'file') target = path.relative(path.dirname(from.fsPath), item.file).split(path.sep).join('/');
  else target = vscode.Uri.file(item.file).toString();
  if (/[\s()<>]/.test(target)) target = `<${target.replace(/[<>]/g, encodeURIComponent)}>`;
  // Brackets and line breaks would end the link text early.
  const alt =
    item.prompt
      .replace(/[[\]\r\n]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 80) || (item.kind === 'image' ? vscode.l10n.t('generated image') : vscode.l10n.t('generated video'));
  return `${item.kind === 'image' ? '!' : ''}[${alt}](${target})`;
}
