import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { sizeChanged, type OpenedFile } from './openedFile';

export interface FilePart {
  name: string;
  /** The file, opened and checked once (openedFile.ts); it is streamed from this handle, never read whole. */
  file: OpenedFile;
  filename?: string;
  contentType?: string;
}

export interface MultipartBody {
  contentType: string;
  /** The exact size of the whole form, known before anything is sent. */
  length: number;
  fileBytes: number;
  /**
   * The form's bytes, the file read from its open handle as they are asked for. Every chunk is a
   * buffer of its own, which the consumer may keep (nothing is reused). Each call reads anew.
   */
  chunks(): AsyncIterable<Uint8Array>;
}

/**
 * Bytes per read of the file. Each chunk costs a round of undici's write and 'drain' wait, some
 * 0.3 ms on a 2-core machine whatever its size: a 20 MiB upload to a local server took about twice
 * as long in 64 KiB chunks (a Node file stream's default) as in 256 KiB ones, and 1 MiB ones were
 * faster again.
 */
const READ_CHUNK = 1024 * 1024;

/**
 * A multipart/form-data body whose size is computed up front (so a request over a limit is refused
 * before upload) and whose file part, when there is one, is streamed from its open handle.
 *
 * Why not `fs.openAsBlob` with undici's `FormData`: a Blob from `openAsBlob` opens the file again
 * by its path when it is read, so what is sent would no longer be the file whose handle was checked
 * (openedFile.ts), and undici's FormData and its body encoder are parts of undici's fetch that the
 * bundle leaves out today (src/core/undiciParts.ts, docs/undici.md).
 *
 * Every chunk is a fresh buffer. The writer before this one read into three buffers it reused, which
 * was safe only as long as undici asks for the next chunk after the socket has written the last one:
 * undici's drain timing, which no API promises. What that costs, measured with `npm run bench` (row 7:
 * a 20 MiB PDF from a child process; three runs each, alternating with `curl -F`, on a 2-core machine
 * shared with other work at load averages of 9 to 28):
 * - peak RSS growth 19.9 MiB in every run, against 2.9 MiB for the reused buffers: V8 frees a buffer
 *   only when it collects it, which it puts off until some 64 MiB of such memory have piled up, so an
 *   upload grows the process by about its size (at most 20 MiB here, the providers' limit);
 * - CPU 1.0–1.5 ms per MiB against 0.6 (fresh memory is paged in, then collected): unthrottled on
 *   loopback the upload took 130–157 ms against 51–61 ms;
 * - at a line rate the transfer hides that: against curl through the same 100 Mbit/s and 1 Gbit/s
 *   fronts 1.05× and 1.03×, 1.07× and 1.34×, 1.05× and 1.11×; the reused buffers 0.99× and 1.02×,
 *   1.02× and 1.87×, 0.79× and 1.13×: within this machine's noise.
 */
export function multipartFromFile(fields: Record<string, string>, file?: FilePart): MultipartBody {
  const boundary = `----ModelGatewayForm${randomBytes(12).toString('hex')}`;
  const fileBytes = file ? file.file.size : 0;
  const filename = file ? (file.filename ?? path.basename(file.file.path)).replace(/["\r\n]/g, '_') : '';
  const head = Buffer.from(
    Object.entries(fields)
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') +
      (file
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${filename}"\r\n` +
          `Content-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`
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
      if (file) yield* fileChunks(file.file);
      yield tail;
    },
  };
}

/**
 * Exactly the file's size when it was opened (the Content-Length is already promised): a file that
 * shrank or grew meanwhile is an error, not a short or a cut body. Each chunk is read into a buffer
 * of its own (`FileHandle.read` at a position: the handle stays its owner's to close); the next one
 * is read while the one handed out is being sent, so the disk and the socket work at the same time.
 */
async function* fileChunks(file: OpenedFile): AsyncGenerator<Uint8Array> {
  const readAt = async (position: number): Promise<Buffer> => {
    const length = Math.min(READ_CHUNK, file.size - position);
    const buffer = Buffer.allocUnsafe(length);
    const { bytesRead } = await file.handle.read(buffer, 0, length, position);
    if (bytesRead < length) throw sizeChanged(file);
    return buffer;
  };
  const readAhead = (position: number): Promise<Buffer> | undefined => {
    if (position >= file.size) return undefined;
    const next = readAt(position);
    // Its failure is told when it is awaited; until then it must not count as unhandled.
    next.catch(() => undefined);
    return next;
  };
  let position = 0;
  let ahead = readAhead(0);
  try {
    while (ahead) {
      const chunk = await ahead;
      position += chunk.length;
      ahead = readAhead(position);
      yield chunk;
    }
  } finally {
    // A read still under way (the upload was stopped) ends before its owner may close the handle.
    await ahead?.catch(() => undefined);
  }
  if (Number((await file.handle.stat()).size) !== file.size) throw sizeChanged(file);
}
