import { randomBytes } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';

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
  stream(): Readable;
}

/**
 * A multipart/form-data body whose size is computed up front (so a request over a limit is refused
 * before upload) and whose file part is streamed from disk.
 */
export async function multipartFromFile(fields: Record<string, string>, file: FilePart): Promise<MultipartBody> {
  const boundary = `----ModelGatewayForm${randomBytes(12).toString('hex')}`;
  const fileBytes = (await fs.stat(file.path)).size;
  const filename = (file.filename ?? path.basename(file.path)).replace(/["\r\n]/g, '_');
  const head = Buffer.from(
    Object.entries(fields)
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${filename}"\r\nContent-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + fileBytes + tail.length,
    fileBytes,
    stream: () =>
      Readable.from(
        (async function* () {
          yield head;
          for await (const chunk of createReadStream(file.path, { highWaterMark: 256 * 1024 })) yield chunk as Buffer;
          yield tail;
        })(),
      ),
  };
}

