import * as path from 'node:path';
import * as vscode from 'vscode';
import { writeFileAtomic } from '../../core/atomicFile';
import { isGatewayError } from '../../core/errors';
import { readableText } from '../../core/tools/readableText';

/**
 * Opens a tool's Markdown result as an untitled document nothing is lost from, in the second
 * column: beside the source, and always the same column, so results do not keep splitting the
 * editor area.
 */
export async function showMarkdown(content: string): Promise<vscode.TextDocument> {
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: readableText(content) });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Two, preview: false });
  return doc;
}

/** Saves the text as shown (readableText) next to the source as `<name>.md`, then `<name>-1.md`…: an existing file is never replaced. */
export async function saveBeside(source: vscode.Uri, content: string, suffix = ''): Promise<vscode.Uri> {
  const dir = path.dirname(source.fsPath);
  const base = path.basename(source.fsPath, path.extname(source.fsPath)) + suffix;
  for (let i = 0; i < 1000; i++) {
    const file = path.join(dir, `${base}${i ? `-${i}` : ''}.md`);
    try {
      await writeFileAtomic(file, readableText(content), { overwrite: false });
      return vscode.Uri.file(file);
    } catch (err) {
      if (!isGatewayError(err) || err.code !== 'EEXIST') throw err;
    }
  }
  throw new Error(vscode.l10n.t('Could not find a free file name next to {0}.', path.basename(source.fsPath)));
}
