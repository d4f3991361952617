import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { GatewayError } from '../errors';
import { FORMAT_NAMES, otherFormat, sniffImage, type ImageMediaType } from '../imageBytes';
import { readHead, type OpenedFile } from './openedFile';

/**
 * The format of a file a document tool is about to upload, read from its first bytes (never its
 * name): a file with a `.pdf` name that holds something else (a key, a config file behind a
 * renamed link) is refused before anything is sent or billed.
 */
export type UploadFormat = 'application/pdf' | ImageMediaType;

/** Enough of the start of a file to tell the formats apart (the image sniffer needs 24 bytes for a PNG). */
const HEAD_BYTES = 64;

/** PDF files start with `%PDF-` and the version. */
export function isPdf(head: Uint8Array): boolean {
  return head.length >= 5 && Buffer.from(head.subarray(0, 5)).toString('latin1') === '%PDF-';
}

export function sniffUpload(head: Uint8Array): UploadFormat | undefined {
  return isPdf(head) ? 'application/pdf' : sniffImage(head)?.mediaType;
}

function formatName(format: UploadFormat): string {
  return format === 'application/pdf' ? 'PDF' : FORMAT_NAMES[format];
}

/**
 * The file's format when it is one of `accepted`, else a `badRequest` naming what the bytes are.
 * `tool` names what refuses the file ("The parser", "OCR"). Read through the handle that the
 * upload reads too: the bytes checked are the bytes sent.
 */
export async function requireFormat(
  file: OpenedFile,
  accepted: readonly UploadFormat[],
  tool: string,
): Promise<UploadFormat> {
  const head = await readHead(file, HEAD_BYTES);
  const found = sniffUpload(head);
  if (found && accepted.includes(found)) return found;
  const seen = found
    ? formatName(found)
    : (otherFormat(head) ?? (head.length ? l10n.t('not a format it knows') : l10n.t('empty')));
  throw new GatewayError(
    'badRequest',
    l10n.t(
      '{0} was not sent: {1} takes {2} files, and by its bytes this file is {3}. Nothing was uploaded or charged.',
      path.basename(file.path),
      tool,
      accepted.map(formatName).join(', '),
      seen,
    ),
  );
}
