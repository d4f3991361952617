import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/**
 * The one rule for "is this path inside that folder", used wherever a file may be read or written
 * only within the open workspace (the document tools, the chat view's image reads, the output
 * folder, the media output folder). Paths are compared after `.` and `..` are resolved; `pathApi`
 * is injectable so the Windows rules (drive letters, case) can be tested on any machine. The
 * comparisons are of text only: symbolic links are resolved first, by `existingReal` below or
 * `fs.realpath` (host/trust/workspaceFiles.ts), and only the real path decides that a file is inside.
 */

/** Whether `child` is `parent` or lies below it (both absolute). */
export function isInside(child: string, parent: string, pathApi: path.PlatformPath = path): boolean {
  const rel = pathApi.relative(pathApi.resolve(parent), pathApi.resolve(child));
  // `..foo` is a name inside the folder; only `..` itself or `../…` climbs out.
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${pathApi.sep}`) && !pathApi.isAbsolute(rel));
}

/** Whether `child` lies below `parent`: inside it and not the folder itself. */
export function isBelow(child: string, parent: string, pathApi: path.PlatformPath = path): boolean {
  return isInside(child, parent, pathApi) && pathApi.relative(pathApi.resolve(parent), pathApi.resolve(child)) !== '';
}

/**
 * What a path's text alone says, before any file system call may touch it: a Windows device or
 * long path (`\\?\`, `\\.\`: it reaches devices and skips the usual name checks), a UNC path
 * (`\\host\share`, `//host/share`: on Windows merely opening one sends the user's network
 * credentials to that host, see Microsoft's "NTLM relay" guidance), or a plain path. With POSIX
 * rules neither exists: a backslash is part of a name and `//x` is `/x`.
 */
export type PathForm = 'device' | 'unc' | 'plain';

export function pathForm(given: string, pathApi: path.PlatformPath = path): PathForm {
  if (pathApi.sep !== '\\') return 'plain';
  if (/^[\\/]{2}[?.](?:[\\/]|$)/.test(given)) return 'device';
  if (/^[\\/]{2}[^\\/]/.test(given)) return 'unc';
  return 'plain';
}

/**
 * Where `given` (absolute) lies by its text alone, against the open folders (as named and with
 * their links resolved): `device` is never read; a UNC path counts as `outside` unless it is inside
 * an open folder by its text (a workspace opened from a share). Judged before any file system
 * call, so that a path outside is refused without touching it (and without telling whether it exists).
 */
export function placeByText(
  given: string,
  folders: readonly string[],
  pathApi: path.PlatformPath = path,
): 'device' | 'inside' | 'outside' {
  if (pathForm(given, pathApi) === 'device') return 'device';
  for (const f of folders) if (pathForm(f, pathApi) !== 'device' && isBelow(given, f, pathApi)) return 'inside';
  return 'outside';
}

/** Where a file is, against the open folders. */
export type FilePlace =
  /** Below one of the folders once links are resolved: may be read. */
  | 'inside'
  /** Inside a folder by its path, but a symbolic link (the file or a folder on the way) leads out. */
  | 'linkOut'
  /** Outside every folder by its path already (`..`, an absolute path elsewhere). */
  | 'outside';

export interface FilePaths {
  /** The path as given, made absolute (`..` resolved, links not). */
  given: string;
  /** The same file with every symbolic link resolved. */
  real: string;
  /** The open folders as the editor names them. */
  folders: readonly string[];
  /** The same folders with their links resolved (a folder may itself be reached through a link). */
  realFolders: readonly string[];
}

/**
 * Where a file lies. Only the real path decides that a file is inside: a link in the workspace
 * that points out of it is refused like `..`. `given` tells a link that leads out (`linkOut`) from a
 * path that was outside to begin with (`outside`), which a user may choose on purpose.
 */
export function placeOf(p: FilePaths, pathApi: path.PlatformPath = path): FilePlace {
  if (p.realFolders.some((f) => isBelow(p.real, f, pathApi))) return 'inside';
  const byName = [...p.folders, ...p.realFolders].some((f) => isBelow(p.given, f, pathApi));
  return byName ? 'linkOut' : 'outside';
}

/**
 * The deepest part of `p` that exists (`p` itself when it does) and that part with every symbolic
 * link resolved: where a file or folder about to be made would really land. A folder made later
 * below `existing` cannot lead anywhere the link does not already. Errors other than a missing
 * part (no permission) are thrown.
 */
export async function existingReal(p: string): Promise<{ existing: string; real: string }> {
  let existing = path.resolve(p);
  for (;;) {
    try {
      return { existing, real: await fs.realpath(existing) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
      const parent = path.dirname(existing);
      if (parent === existing) return { existing, real: existing };
      existing = parent;
    }
  }
}

/** `p` with the symbolic links of its existing part resolved, the rest as given (see existingReal). */
export async function realPathOf(p: string): Promise<string> {
  const { existing, real } = await existingReal(p);
  return path.join(real, path.relative(existing, path.resolve(p)));
}
