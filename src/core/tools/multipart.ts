import * as l10n from '@vscode/l10n';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { GatewayError } from '../errors';

export interface FilePart {
  name: string;
  /** The file on disk; it is streamed, never read whole into memory. */
  path: string;
  filename?: string;
  contentType?: string;
}

export interface MultipartBody {
  contentType: string;
  /** The exact size of the whole form, known before anything is sent. */
  length: number;
  fileBytes: number;
  /**
   * The form's bytes, the file read from disk as they are asked for. Each chunk is valid only until
   * the next one is asked for: the file is read into a few buffers that are used over and over
   * (see READ_BUFFERS). A consumer must write or copy a chunk before it asks for the next; the HTTP
   * client's request writer does (it asks again only once the socket has taken the bytes).
   */
  chunks(): AsyncIterable<Uint8Array>;
}

/**
 * Bytes per file read: larger than any socket's write buffer mark, so every write waits for 'drain'.
 * Each chunk costs a round of that wait and of handing the next one over, some 0.3 ms on a 2-core
 * machine whatever its size: a 20 MiB upload to a local server took about twice as long in 64 KiB
 * chunks as in 256 KiB ones, and 1 MiB ones were faster again (the three buffers below stay 3 MiB).
 */
const READ_CHUNK = 1024 * 1024;
/**
 * Buffers in rotation. A fresh buffer per read is garbage that V8 frees only at its next full GC,
 * which it puts off until some 64 MiB of such memory have piled up (so a 20 MiB upload used to grow
 * the process by more than twice the file). Reusing buffers keeps the upload's memory flat.
 * undici's writer asks for a chunk only after the previous one was accepted by the socket; a chunk is
 * as big as READ_CHUNK, above the socket's high-water mark, so "accepted" means written out (the
 * socket emitted 'drain'). Three buffers leave a margin of two chunks on top of that.
 */
const READ_BUFFERS = 3;

/**
 * A multipart/form-data body whose size is computed up front (so a request over a limit is refused
 * before upload) and whose file part, when there is one, is streamed from disk.
 */
export async function multipartFromFile(fields: Record<string, string>, file?: FilePart): Promise<MultipartBody> {
  const boundary = `----ModelGatewayForm${randomBytes(12).toString('hex')}`;
  const fileBytes = file ? (await fs.stat(file.path)).size : 0;
  const filename = file ? (file.filename ?? path.basename(file.path)).replace(/["\r\n]/g, '_') : '';
  const head = Buffer.from(
    Object.entries(fields)
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') +
      (file
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${filename}"\r\nContent-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`
        : ''),
  );
  // Without a file the last field's own line break ends it.
  const tail = Buffer.from(`${file ? '\r\n' : ''}--${boundary}--\r\n`);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + fileBytes + tail.length,
    fileBytes,
    async *chunks() {
      yield head;
      if (file) yield* readFileChunks(file.path, fileBytes);
      yield tail;
    },
  };
}

/**
 * Exactly `size` bytes of the file (its size when the form was made: the Content-Length is already
 * promised), in chunks of rotating buffers. A file that shrank meanwhile is an error, not a short body.
 * The next chunk is read while the one handed out is being sent (into another buffer), so the disk
 * and the socket work at the same time instead of taking turns.
 */
async function* readFileChunks(file: string, size: number): AsyncGenerator<Uint8Array> {
  if (size === 0) return;
  const handle = await fs.open(file, 'r');
  let ahead: Promise<Uint8Array> | undefined;
  try {
    const buffers: Buffer[] = [];
    for (let i = 0; i < READ_BUFFERS && i * READ_CHUNK < size; i++)
      buffers.push(Buffer.allocUnsafe(Math.min(READ_CHUNK, size)));
    let position = 0;
    let turn = 0;
    const readNext = async (): Promise<Uint8Array> => {
      const buffer = buffers[turn++ % buffers.length] as Buffer;
      const at = position;
      const length = Math.min(buffer.length, size - at);
      position += length;
      const { bytesRead } = await handle.read(buffer, 0, length, at);
      if (bytesRead < length) {
        throw new GatewayError(
          'badRequest',
          l10n.t(
            '{0} changed while it was being sent (it is now shorter than when the upload started). Try again.',
            path.basename(file),
          ),
        );
      }
      return buffer.subarray(0, bytesRead);
    };
    ahead = readNext();
    while (ahead) {
      const chunk = await ahead;
      // The buffer read next is neither this chunk's nor the one before (READ_BUFFERS ≥ 3).
      ahead = position < size ? readNext() : undefined;
      yield chunk;
    }
  } finally {
    // A read still under way (the upload was stopped) finishes before the file is closed.
    await ahead?.catch(() => undefined);
    await handle.close();
  }
}
