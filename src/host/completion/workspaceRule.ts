import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { excludeRule, type ExcludeRule } from '../../core/completion/exclude';
import { placeOf } from '../../core/workspacePaths';
import type { CompletionSwitch } from './switch';

/**
 * Which documents completion may read: files of an open workspace folder (their real path inside
 * it, core/workspacePaths.ts), not matched by `files.exclude`, `modelGateway.completions.exclude`
 * or the secrets list (core/completion/exclude.ts). Answers the document's workspace-relative path,
 * or undefined. Cached per document until a setting or the folders change.
 */
export class WorkspaceRule implements vscode.Disposable {
  private readonly places = new Map<string, Promise<string | undefined>>();
  private readonly rules = new Map<string, ExcludeRule>();
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly completions: CompletionSwitch) {
    const clear = () => {
      this.places.clear();
      this.rules.clear();
    };
    this.subscriptions = [
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('files.exclude') || e.affectsConfiguration('modelGateway.completions')) clear();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(clear),
      vscode.workspace.onDidCloseTextDocument((d) => this.places.delete(d.uri.toString())),
    ];
  }

  pathOf(document: vscode.TextDocument): Promise<string | undefined> {
    const key = document.uri.toString();
    let place = this.places.get(key);
    if (!place) {
      place = this.find(document.uri).catch(() => undefined);
      this.places.set(key, place);
    }
    return place;
  }

  private async find(uri: vscode.Uri): Promise<string | undefined> {
    if (uri.scheme !== 'file') return undefined;
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (!folder || folder.uri.scheme !== 'file') return undefined;
    const given = uri.fsPath;
    const [real, realFolder] = await Promise.all([fs.realpath(given), fs.realpath(folder.uri.fsPath)]);
    if (placeOf({ given, real, folders: [folder.uri.fsPath], realFolders: [realFolder] }) !== 'inside')
      return undefined;
    const relative = path.relative(folder.uri.fsPath, given).split(path.sep).join('/');
    return this.ruleFor(folder)(relative) ? undefined : relative;
  }

  private ruleFor(folder: vscode.WorkspaceFolder): ExcludeRule {
    const key = folder.uri.toString();
    let rule = this.rules.get(key);
    if (!rule) {
      const filesExclude = vscode.workspace
        .getConfiguration('files', folder.uri)
        .get<Record<string, unknown>>('exclude');
      rule = excludeRule({ filesExclude: filesExclude ?? {}, patterns: this.completions.settings().exclude });
      this.rules.set(key, rule);
    }
    return rule;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
