import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { GatewayError } from '../../core/errors';
import { openChecked, type FileIdentity, type OpenedFile } from '../../core/tools/openedFile';
import { placeByText, placeOf } from '../../core/workspacePaths';
import { words } from '../../shared/words';

/**
 * The one workspace-file policy: which files the extension reads or uploads on behalf of the
 * sidebar's commands, the chat view and the agent tools of VS Code's chat. Every path is resolved
 * through its symbolic links (the file's and each open folder's) before it is judged, so a link in
 * a cloned repository (`report.pdf -> ~/.ssh/id_rsa`, `docs -> /`) is refused like `..`. A file is
 * then opened once (`openWorkspaceFile`) and its open handle checked against what was approved:
 * everything read of it is read through that handle, so a link swapped in after the check cannot
 * send the read elsewhere.
 */
export interface FileRules {
  /**
   * Whether a path that is outside every open folder by its own text may be read: true where the
   * user named the file themselves (an open dialog, their explorer or editor, a command argument).
   * A link inside a folder that leads out is refused either way.
   */
  outsideAllowed: boolean;
  /** Folders read like workspace folders (the extension's own storage). */
  extraFolders?: readonly string[];
}

export type Located =
  | { ok: true; real: string; identity: FileIdentity }
  | { ok: false; why: 'outside' | 'linkOut' | 'missing' | 'folder' | 'noWorkspace'; message: string };

/** The open folders that are on this machine's disk, as named and with their links resolved. */
async function openFolders(extra: readonly string[]): Promise<{ folders: string[]; realFolders: string[] }> {
  const folders = [
    ...(vscode.workspace.workspaceFolders ?? [])
      .filter((f) => f.uri.scheme === 'file' || f.uri.scheme === 'vscode-remote')
      .map((f) => f.uri.fsPath),
    ...extra,
  ].map((f) => path.resolve(f));
  // A folder that is gone (deleted while open) holds nothing that can be read.
  const realFolders = (await Promise.all(folders.map((f) => fs.realpath(f).catch(() => undefined)))).filter(
    (f): f is string => f !== undefined,
  );
  return { folders, realFolders };
}

/** Where `given` (absolute, or relative to the first open folder) really is, and whether it may be read. */
export async function locateFile(given: string, rules: FileRules): Promise<Located> {
  const { folders, realFolders } = await openFolders(rules.extraFolders ?? []);
  const first = folders[0];
  if (!path.isAbsolute(given) && !first) {
    return {
      ok: false,
      why: 'noWorkspace',
      message: vscode.l10n.t(
        'No workspace folder is open, so "{0}" cannot be found: give a file of an open workspace folder.',
        given,
      ),
    };
  }
  const absolute = path.resolve(first ?? '', given);
  // Judged by its text before any file system call: a path outside (a UNC path among them) is
  // refused without being touched, whether or not it exists (a model must not learn which files
  // exist elsewhere; touching a UNC path sends the user's credentials to its host).
  const byText = placeByText(absolute, [...folders, ...realFolders]);
  if (byText === 'device')
    return {
      ok: false,
      why: 'outside',
      message: vscode.l10n.t('{0} is a device path; such paths are never read.', given),
    };
  if (byText === 'outside' && !rules.outsideAllowed) return refusedOutside(given, folders.length > 0);
  let real: string;
  try {
    real = await fs.realpath(absolute);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return { ok: false, why: 'missing', message: vscode.l10n.t('{0} does not exist.', given) };
    throw new GatewayError(
      'badRequest',
      words('{0} could not be read: {1}', given, err instanceof Error ? err.message : String(err)),
      { cause: err },
    );
  }
  const place = placeOf({ given: absolute, real, folders, realFolders });
  if (place === 'linkOut') {
    return {
      ok: false,
      why: 'linkOut',
      message: vscode.l10n.t(
        '{0} is a symbolic link (or lies in a linked folder) that leads outside the open workspace folders; it was not read.',
        given,
      ),
    };
  }
  if (place === 'outside' && !rules.outsideAllowed) return refusedOutside(given, folders.length > 0);
  const stat = await fs.stat(real, { bigint: true });
  if (stat.isDirectory())
    return { ok: false, why: 'folder', message: vscode.l10n.t('{0} is a folder, not a file.', given) };
  // A hard link has no link to resolve: a second name of a file from anywhere on the same disk
  // (a key, a document) looks like a file of the workspace. Where the user did not name the file,
  // one with more than one name is refused.
  if (!rules.outsideAllowed && stat.nlink > 1n)
    return {
      ok: false,
      why: 'linkOut',
      message: vscode.l10n.t(
        '{0} has more than one name on disk (a hard link), so it may be a file from outside the open workspace folders; it was not read.',
        given,
      ),
    };
  return { ok: true, real, identity: { dev: stat.dev, ino: stat.ino } };
}

function refusedOutside(given: string, anyFolder: boolean): Located {
  return {
    ok: false,
    why: anyFolder ? 'outside' : 'noWorkspace',
    message: anyFolder
      ? vscode.l10n.t(
          '{0} is outside the open workspace folders; only files of the open workspace are read here.',
          given,
        )
      : vscode.l10n.t('No workspace folder is open; only files of the open workspace folders are read here.'),
  };
}

/**
 * A file that may be read under `rules`, opened once: the handle is checked to be the file that was
 * approved, at its real path (core/tools/openedFile.ts), with one name on disk where a model named
 * it. A `badRequest` saying why not otherwise. The caller closes it.
 */
async function openWorkspaceFile(given: string, rules: FileRules): Promise<OpenedFile> {
  const located = await locateFile(given, rules);
  if (!located.ok) throw new GatewayError('badRequest', located.message);
  return openChecked(located.real, { approved: located.identity, singleName: !rules.outsideAllowed });
}

/** Runs `use` on a file opened by `openWorkspaceFile`, and closes it whatever happens. */
export async function withWorkspaceFile<T>(
  given: string,
  rules: FileRules,
  use: (file: OpenedFile) => Promise<T>,
): Promise<T> {
  const file = await openWorkspaceFile(given, rules);
  try {
    return await use(file);
  } finally {
    await file.close();
  }
}
