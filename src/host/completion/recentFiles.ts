import * as vscode from 'vscode';
import type { Snippet } from '../../core/completion/prompt';

/** Lines of a recent file around where the user was, as one snippet. */
const AROUND = 20;
const KEEP = 8;

/**
 * The files the user recently edited or opened, newest first, with the line they were at: their
 * text around that line goes with a completion as context (only files completion may read, which
 * the caller decides).
 */
export class RecentFiles implements vscode.Disposable {
  private entries: Array<{ uri: string; line: number }> = [];
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.workspace.onDidChangeTextDocument((e) => {
        const change = e.contentChanges[0];
        if (change) this.note(e.document, change.range.start.line);
      }),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor) this.note(editor.document, editor.selection.active.line);
      }),
    ];
    const active = vscode.window.activeTextEditor;
    if (active) this.note(active.document, active.selection.active.line);
  }

  private note(document: vscode.TextDocument, line: number): void {
    if (document.uri.scheme !== 'file') return;
    const uri = document.uri.toString();
    this.entries = [{ uri, line }, ...this.entries.filter((e) => e.uri !== uri)].slice(0, KEEP);
  }

  /** Snippets of the recent files other than `current` that `allowed` names (a workspace-relative path). */
  async snippets(
    current: vscode.TextDocument,
    allowed: (document: vscode.TextDocument) => Promise<string | undefined>,
  ): Promise<Snippet[]> {
    const own = current.uri.toString();
    const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d]));
    const out: Snippet[] = [];
    for (const e of this.entries) {
      const doc = e.uri === own ? undefined : open.get(e.uri);
      const path = doc && (await allowed(doc));
      if (!doc || !path) continue;
      const from = Math.max(0, e.line - AROUND);
      const to = Math.min(doc.lineCount - 1, e.line + AROUND);
      out.push({ path, text: doc.getText(new vscode.Range(from, 0, to, doc.lineAt(to).text.length)) });
    }
    return out;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
