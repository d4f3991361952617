import * as vscode from 'vscode';
import {
  OverrideAnnouncer,
  parseJsonc,
  USER_ONLY_KEYS,
  userOnlyValues,
  type WorkspaceOverride,
} from '../../core/userOnlySettings';
import { SECTION } from '../settings';

/** Settings notices of this session outside a workspace check (a clamped cost setting). */
const sessionNotices = new OverrideAnnouncer();

/** Shows (and keeps) a sentence about a setting once per session. */
export function announceOnce(notice: string): void {
  if (sessionNotices.once(notice)) void vscode.window.showWarningMessage(notice);
}

/**
 * Finds values that a workspace tried to give to user-only settings and tells the user once per
 * session per setting and value (a warning, also logged). The values are never used: the
 * settings are read from the user value alone (host/settings.ts).
 *
 * VS Code drops workspace values of application-scoped settings before `inspect()` sees them, so
 * the settings files themselves are read too: the user should learn that a cloned folder tried
 * to redirect the key, not only be protected from it.
 */
export class WorkspaceOverrides implements vscode.Disposable {
  private readonly announcer = new OverrideAnnouncer();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly log: vscode.LogOutputChannel) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/.vscode/settings.json');
    const recheck = () => void this.check();
    this.disposables.push(
      watcher,
      watcher.onDidCreate(recheck),
      watcher.onDidChange(recheck),
      vscode.workspace.onDidChangeWorkspaceFolders(recheck),
    );
  }

  /** Every notice given in this session, oldest first. */
  get notices(): readonly string[] {
    return this.announcer.notices;
  }

  /**
   * Looks for workspace values of user-only settings and announces the new ones. A settings file
   * that cannot be read is logged and skipped; one that cannot be parsed is VS Code's to report.
   * A workspace value equal to the one in use changes nothing and is not announced.
   */
  async check(): Promise<void> {
    const found = [...this.fromInspect(), ...(await this.fromFiles())];
    const config = vscode.workspace.getConfiguration(SECTION);
    const inUse = (key: string) => {
      const i = config.inspect(key);
      return i?.globalValue ?? i?.defaultValue;
    };
    const differing = found.filter((o) => JSON.stringify(o.value) !== JSON.stringify(inUse(o.key)));
    for (const notice of this.announcer.fresh(SECTION, differing)) {
      this.log.warn(notice);
      void vscode.window.showWarningMessage(notice);
    }
  }

  /** Values VS Code still reports (it would for a setting whose declared scope allowed workspaces). */
  private fromInspect(): WorkspaceOverride[] {
    const found: WorkspaceOverride[] = [];
    const root = vscode.workspace.getConfiguration(SECTION);
    for (const key of USER_ONLY_KEYS) {
      const value = root.inspect(key)?.workspaceValue;
      if (value !== undefined) found.push({ key, value, where: vscode.l10n.t('the workspace settings') });
    }
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const config = vscode.workspace.getConfiguration(SECTION, folder.uri);
      for (const key of USER_ONLY_KEYS) {
        const value = config.inspect(key)?.workspaceFolderValue;
        if (value !== undefined)
          found.push({ key, value, where: vscode.l10n.t('the settings of folder "{0}"', folder.name) });
      }
    }
    return found;
  }

  private async fromFiles(): Promise<WorkspaceOverride[]> {
    const files: Array<{ uri: vscode.Uri; where: string; pick: (doc: unknown) => unknown }> = [];
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      files.push({
        uri: vscode.Uri.joinPath(folder.uri, '.vscode', 'settings.json'),
        where: `${folder.name}/.vscode/settings.json`,
        pick: (doc) => doc,
      });
    }
    const workspaceFile = vscode.workspace.workspaceFile;
    if (workspaceFile && workspaceFile.scheme !== 'untitled') {
      files.push({
        uri: workspaceFile,
        where: vscode.l10n.t('the workspace file'),
        pick: (doc) => (typeof doc === 'object' && doc !== null ? (doc as { settings?: unknown }).settings : undefined),
      });
    }
    const found: WorkspaceOverride[] = [];
    for (const file of files) {
      let text: string | undefined;
      try {
        text = await readText(file.uri);
      } catch (err) {
        this.log.warn(`Could not read ${file.where} to look for user-only settings: ${String(err)}`);
      }
      if (text === undefined) continue;
      found.push(...userOnlyValues(file.pick(parseJsonc(text)), SECTION, file.where));
    }
    return found;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

async function readText(uri: vscode.Uri): Promise<string | undefined> {
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch (err) {
    // A folder without settings is the common case, not a problem.
    if (err instanceof vscode.FileSystemError && err.code === 'FileNotFound') return undefined;
    throw err;
  }
}
