import * as l10n from '@vscode/l10n';
import { constants, promises as fs, type BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { GatewayError } from '../errors';

/**
 * A file opened once for a document tool or a chat image: everything that is read of it (the
 * format check of its first bytes, its size, the upload) is read through this one handle, never
 * by its path again. A path checked and then opened later can lead elsewhere by then (a link
 * swapped in between, by a build script or a tool the model ran); an open handle cannot.
 */
export interface OpenedFile {
  /** The real path it was opened at (its name goes into messages). */
  readonly path: string;
  readonly handle: FileHandle;
  /** Its size when it was opened: the size a form promises in its Content-Length. */
  readonly size: number;
  close(): Promise<void>;
}

/** A file's identity on its disk: the same pair for the same file under any name. */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
}

export interface OpenRules {
  /** The identity the path had when it was approved (a stat of its real path then). */
  approved?: FileIdentity;
  /** Refuse a file with more than one name on disk (a hard link): where a model named the file. */
  singleName?: boolean;
  /**
   * The path the open handle really has, where the system can tell (Linux: the descriptor's link
   * in /proc); `undefined` where it cannot, and the path is resolved again instead. Injectable so
   * that both ways are tested on any machine.
   */
  handlePath?: (handle: FileHandle) => Promise<string | undefined>;
  /** The path rules (injectable so that Windows' rules, case-blind, are tested on any machine). */
  pathApi?: path.PlatformPath;
}

/** Test seam: runs after a path was approved and before it is opened (where a swap would strike). */
export const openSeam: { beforeOpen?: (real: string) => Promise<void> } = {};

/**
 * Linux names an open descriptor's file in /proc/self/fd; elsewhere Node has no way to ask a handle
 * for its path (macOS' F_GETPATH and Windows' GetFinalPathNameByHandle are not exposed).
 */
export async function procHandlePath(handle: FileHandle): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  try {
    return await fs.readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return undefined;
  }
}

function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/** Whether two absolute paths name the same place by the platform's rules (Windows: any case). */
export function samePath(a: string, b: string, pathApi: path.PlatformPath = path): boolean {
  return pathApi.relative(pathApi.resolve(a), pathApi.resolve(b)) === '';
}

function changed(real: string): GatewayError {
  return new GatewayError(
    'badRequest',
    l10n.t(
      '{0} changed while it was being checked (it was replaced, or a link on its way now leads elsewhere); it was not read. Try again.',
      path.basename(real),
    ),
  );
}

/**
 * Opens `real` (a real path, links already resolved and judged) and checks the open handle: a
 * plain file, the same file as the one approved (device and inode), still at that real path (the
 * handle's own path where the system tells it, else the path resolved again and its identity), and
 * one name on disk where asked. Without `O_NOFOLLOW` (Windows) a swapped link is caught by the
 * identity and path checks. The handle is closed again when a check fails.
 */
export async function openChecked(real: string, rules: OpenRules = {}): Promise<OpenedFile> {
  await openSeam.beforeOpen?.(real);
  let handle: FileHandle;
  try {
    // Not through a link in the last place; and without waiting, should a FIFO have been put there
    // (opening one for reading would wait for a writer; it is refused below as no plain file).
    handle = await fs.open(real, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // The file itself became a link after it was judged.
    if (code === 'ELOOP' || code === 'EMLINK') throw changed(real);
    throw new GatewayError(
      'badRequest',
      l10n.t('{0} could not be read: {1}', path.basename(real), err instanceof Error ? err.message : String(err)),
      { cause: err },
    );
  }
  try {
    const stat = await handle.stat({ bigint: true });
    await checkHandle(handle, real, stat, rules);
    const size = Number(stat.size);
    return { path: real, handle, size, close: () => handle.close() };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

async function checkHandle(handle: FileHandle, real: string, stat: BigIntStats, rules: OpenRules): Promise<void> {
  const pathApi = rules.pathApi ?? path;
  if (stat.isDirectory())
    throw new GatewayError('badRequest', l10n.t('{0} is a folder, not a file.', path.basename(real)));
  // A FIFO or a device would block or never end; only plain files are read.
  if (!stat.isFile()) throw new GatewayError('badRequest', l10n.t('{0} is not a plain file.', path.basename(real)));
  if (rules.approved && !sameIdentity(stat, rules.approved)) throw changed(real);
  const where = await (rules.handlePath ?? procHandlePath)(handle);
  if (where !== undefined) {
    if (!samePath(where, real, pathApi)) throw changed(real);
  } else {
    // The name still leads to the opened file, through no link (a link swapped in on the way
    // changes the real path): both are read after the open, so what was opened is what is named.
    const again = await fs.realpath(real).catch(() => undefined);
    const named = again === undefined ? undefined : await fs.stat(again, { bigint: true }).catch(() => undefined);
    if (!again || !named || !samePath(again, real, pathApi) || !sameIdentity(named, stat)) throw changed(real);
  }
  // A hard link has no link to resolve: a second name of a file from anywhere on the same disk (a
  // key, a document) looks like a file of the workspace. Judged on the handle, the file sent.
  if (rules.singleName && stat.nlink > 1n)
    throw new GatewayError(
      'badRequest',
      l10n.t(
        '{0} has more than one name on disk (a hard link), so it may be a file from outside the open workspace folders; it was not read.',
        path.basename(real),
      ),
    );
}

/** Opens a file the user named (a reference image): no workspace rule, but read through one handle all the same. */
export async function openFile(file: string): Promise<OpenedFile> {
  const real = await fs.realpath(file).catch((err: unknown) => {
    throw new GatewayError(
      'badRequest',
      l10n.t('{0} could not be read: {1}', path.basename(file), err instanceof Error ? err.message : String(err)),
      { cause: err },
    );
  });
  return openChecked(real);
}

/** The first `length` bytes (fewer if the file is shorter). */
export async function readHead(file: OpenedFile, length: number): Promise<Uint8Array> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.handle.read(buffer, 0, length, 0);
  return buffer.subarray(0, bytesRead);
}

/** The error for a file whose size changed after it was opened (its size is already promised). */
export function sizeChanged(file: OpenedFile): GatewayError {
  return new GatewayError(
    'badRequest',
    l10n.t(
      '{0} changed while it was being sent (its size is not what it was when the upload started). Try again.',
      path.basename(file.path),
    ),
  );
}

/** The whole file, exactly its size when it was opened: a file that changed size meanwhile is an error. */
export async function readWhole(file: OpenedFile): Promise<Buffer> {
  const buffer = Buffer.alloc(file.size);
  let at = 0;
  while (at < file.size) {
    const { bytesRead } = await file.handle.read(buffer, at, file.size - at, at);
    if (bytesRead === 0) throw sizeChanged(file);
    at += bytesRead;
  }
  if (Number((await file.handle.stat({ bigint: true })).size) !== file.size) throw sizeChanged(file);
  return buffer;
}
