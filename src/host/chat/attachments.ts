import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';

export interface PendingAttachment {
  id: string;
  label: string;
  /** The text sent with the next message, already cut to the limit. */
  text: string;
  chars: number;
  truncated: boolean;
}

/** The active editor's file or selection as chat context, cut to `max` characters. */
export function contextFromEditor(what: 'file' | 'selection', max: number): PendingAttachment | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  const doc = editor.document;
  const name = path.basename(doc.uri.path) || doc.uri.toString();
  let body: string;
  let label: string;
  if (what === 'selection') {
    if (editor.selection.isEmpty) return undefined;
    body = doc.getText(editor.selection);
    label = `${name} (lines ${editor.selection.start.line + 1}–${editor.selection.end.line + 1})`;
  } else {
    body = doc.getText();
    label = name;
  }
  const truncated = body.length > max;
  const kept = truncated ? body.slice(0, max) : body;
  const fence = kept.includes('```') ? '~~~~' : '```';
  const text = `${label}${truncated ? ` (cut to the first ${max.toLocaleString()} of ${body.length.toLocaleString()} characters)` : ''}:\n${fence}${doc.languageId}\n${kept}\n${fence}`;
  return { id: randomUUID(), label, text, chars: kept.length, truncated };
}
