import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { DEFAULT_SETTINGS } from './settings';
import { isInside, pathForm } from './workspacePaths';

/** Where a value of `modelGateway.outputFolder` came from: only the user's own settings may leave the workspace. */
export type SettingSource = 'user' | 'workspace';

export type OutputFolderRule =
  /** An absolute folder, usable with or without an open workspace. */
  | { ok: true; folder: string }
  /** A relative folder and no workspace folder to put it in: the caller asks the user where to save. */
  | { ok: true; folder: undefined }
  | { ok: false; reason: string };

/**
 * Resolves the output folder setting. A relative path must stay inside the workspace folder
 * (`..` may not climb out of it); an absolute path is accepted only when the user wrote it in
 * their user settings, never from a cloned folder's settings. `pathApi` is injectable so the
 * Windows rules (drive letters, UNC paths) can be tested on any machine.
 */
export function resolveOutputFolder(
  setting: string,
  source: SettingSource,
  workspace: string | undefined,
  pathApi: path.PlatformPath = path,
): OutputFolderRule {
  const text = setting.trim() || DEFAULT_SETTINGS.outputFolder;
  const name = `"modelGateway.outputFolder" (${JSON.stringify(text)})`;
  if (/^~(?=$|[\\/])/.test(text)) {
    return {
      ok: false,
      reason: l10n.t(
        '{0} starts with "~", which is not expanded here. Give the full absolute path in your user settings, or a folder relative to the workspace.',
        name,
      ),
    };
  }
  // A device path (`\\?\`, `\\.\`) reaches devices and skips Windows' name checks: never a place to write, from any settings.
  if (pathForm(text, pathApi) === 'device')
    return {
      ok: false,
      reason: l10n.t(
        '{0} is a Windows device path. Give a plain folder path, e.g. "{1}".',
        name,
        'C:\\\\Media\\\\generated',
      ),
    };
  if (pathApi.isAbsolute(text) || /^[a-z]:/i.test(text)) {
    if (source !== 'user') {
      return {
        ok: false,
        reason: l10n.t(
          '{0} is an absolute path from the workspace settings. Only your user settings may send generated files outside the workspace; a workspace may set a folder inside itself, e.g. "generated".',
          name,
        ),
      };
    }
    if (!pathApi.isAbsolute(text))
      return {
        ok: false,
        reason: l10n.t(
          '{0} names a drive without a full path. Give the full absolute path, e.g. "{1}".',
          name,
          'C:\\\\Media\\\\generated',
        ),
      };
    return { ok: true, folder: pathApi.normalize(text) };
  }
  if (!workspace) return { ok: true, folder: undefined };
  const folder = pathApi.resolve(workspace, text);
  if (!isInside(folder, workspace, pathApi)) {
    return {
      ok: false,
      reason: l10n.t(
        '{0} leads outside the workspace folder. A relative output folder must stay inside the workspace; to save elsewhere, set an absolute path in your user settings.',
        name,
      ),
    };
  }
  return { ok: true, folder };
}
