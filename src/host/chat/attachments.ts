import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkImage, describeImage, type ImageStore } from '../../core/chat/images';
import { formatBytes, formatNumber } from '../../shared/format';
import { GatewayError } from '../../core/errors';
import { readWhole } from '../../core/tools/openedFile';
import type { ImageRef } from '../../shared/protocol';
import { withWorkspaceFile } from '../trust/workspaceFiles';

export interface PendingAttachment {
  id: string;
  label: string;
  /** The text sent with the next message, already cut to the limit ('' for an image). */
  text: string;
  chars: number;
  truncated: boolean;
  /** An image: stored already, sent with the next message in the protocol's image form. */
  image?: ImageRef;
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
    label = vscode.l10n.t('{0} (lines {1}–{2})', name, editor.selection.start.line + 1, editor.selection.end.line + 1);
  } else {
    body = doc.getText();
    label = name;
  }
  const truncated = body.length > max;
  const kept = truncated ? body.slice(0, max) : body;
  const fence = kept.includes('```') ? '~~~~' : '```';
  const cut = truncated
    ? ` (cut to the first ${max.toLocaleString()} of ${body.length.toLocaleString()} characters)`
    : '';
  const text = `${label}${cut}:\n${fence}${doc.languageId}\n${kept}\n${fence}`;
  return { id: randomUUID(), label, text, chars: kept.length, truncated };
}

/**
 * Checks image bytes (accepted format read from the bytes, size within `maxBytes`), stores them
 * once by their hash and returns the pending attachment.
 */
export async function imageAttachment(
  store: ImageStore,
  bytes: Uint8Array,
  name: string,
  maxBytes: number,
): Promise<PendingAttachment> {
  const info = checkImage(bytes, name, maxBytes);
  const id = await store.put(bytes, info.mediaType);
  const image: ImageRef = {
    id,
    name,
    mediaType: info.mediaType,
    bytes: bytes.length,
    ...(info.width ? { width: info.width } : {}),
    ...(info.height ? { height: info.height } : {}),
  };
  return { id: randomUUID(), label: name, text: '', chars: 0, truncated: false, image };
}

/**
 * Reads an image file, refusing one over the limit by its size before reading it. A file on disk
 * goes through the workspace-file policy (trust/workspaceFiles.ts): the caller named it (a dialog,
 * a script, a drop the chat view's own policy let through), so it may lie outside the workspace,
 * but a link in a workspace folder that leads out is refused; it is opened once and its size and
 * bytes are read through that checked handle. Other schemes (a remote file system) are read
 * through VS Code's file system.
 */
export async function readImageFile(given: vscode.Uri, maxBytes: number): Promise<{ bytes: Uint8Array; name: string }> {
  const name = path.basename(given.path) || given.toString();
  if (given.scheme === 'file')
    return withWorkspaceFile(given.fsPath, { outsideAllowed: true }, async (file) => {
      refuseOverLimit(name, file.size, maxBytes);
      return { bytes: await readWhole(file), name };
    });
  let size: number;
  try {
    const stat = await vscode.workspace.fs.stat(given);
    if (stat.type & vscode.FileType.Directory)
      throw new GatewayError('badRequest', vscode.l10n.t('{0} is a folder, not an image.', name));
    size = stat.size;
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError(
      'badRequest',
      vscode.l10n.t('{0} could not be read: {1}', name, err instanceof Error ? err.message : String(err)),
      { cause: err },
    );
  }
  refuseOverLimit(name, size, maxBytes);
  return { bytes: await vscode.workspace.fs.readFile(given), name };
}

function refuseOverLimit(name: string, size: number, maxBytes: number): void {
  if (size > maxBytes) {
    throw new GatewayError(
      'tooLarge',
      vscode.l10n.t(
        '{0} is {1} ({2} bytes), over the {3} limit for chat images. Make it smaller, or raise "modelGateway.chat.imageMaxBytes" if your models accept more (the Messages protocol refuses images over 5 MiB).',
        name,
        formatBytes(size),
        formatNumber(size),
        formatBytes(maxBytes),
      ),
    );
  }
}

/** "photo.png (PNG 48×48, 2.1 KB)" for messages about an attached image. */
export function imageLabel(image: ImageRef): string {
  return `${image.name} (${describeImage(image)})`;
}
