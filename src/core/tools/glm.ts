import * as l10n from '@vscode/l10n';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { GatewayError } from '../errors';
import type { HttpClient } from '../http';
import { formatBytes, formatNumber } from '../../shared/format';
import { requireFormat, type UploadFormat } from './fileFormat';
import { multipartFromFile, type MultipartBody } from './multipart';
import { readWhole, type OpenedFile } from './openedFile';
import type { SearchResult } from './searchResult';

/** Both providers' upload limit, counting the multipart form itself. */
export const UPLOAD_LIMIT_BYTES = 20 * 1024 * 1024;
const OCR_IMAGE_LIMIT = 10 * 1024 * 1024;
const OCR_PDF_LIMIT = 50 * 1024 * 1024;
const SEARCH_QUERY_MAX = 70;

const str = z.optional(z.nullable(z.string()));

const parseAnswer = z.looseObject({ status: z.string(), message: str, content: str, task_id: str });

export interface ParseResult {
  content: string;
  /** The parser succeeded but found no text: the document is most likely a scan and needs OCR. */
  empty: boolean;
  taskId?: string;
}

/** First provider's synchronous parser (`files/parser/sync`); the only parsing mode the gateway opens. */
/** The form for a parse, checked against the limit: nothing is sent, so nothing is billed. */
export async function pdfParseForm(file: OpenedFile): Promise<MultipartBody> {
  const form = multipartFromFile(
    { tool_type: 'prime-sync', file_type: 'PDF' },
    { name: 'file', file, contentType: 'application/pdf' },
  );
  refuseOverLimit(form.length, form.fileBytes, path.basename(file.path));
  await requireFormat(file, ['application/pdf'], l10n.t('the PDF parser'));
  return form;
}

export async function parsePdf(
  http: HttpClient,
  file: OpenedFile,
  signal?: AbortSignal,
  prepared?: MultipartBody,
): Promise<ParseResult> {
  const form = prepared ?? (await pdfParseForm(file));
  const answer = await http.sendJson(
    {
      method: 'POST',
      url: http.endpoints.glm('files/parser/sync'),
      body: form.chunks(),
      headers: { 'content-type': form.contentType, 'content-length': String(form.length) },
      signal,
      route: 'glm',
      timeout: 'long',
    },
    parseAnswer,
    l10n.t("GLM's parse result"),
  );
  if (answer.status === 'failed') {
    throw new GatewayError(
      'badRequest',
      l10n.t('GLM could not parse {0}: {1}.', path.basename(file.path), answer.message ?? l10n.t('no reason given')),
    );
  }
  if (answer.status !== 'succeeded') {
    throw new GatewayError(
      'protocol',
      l10n.t('The synchronous parser answered with status "{0}" instead of a result.', String(answer.status)),
    );
  }
  const content = answer.content ?? '';
  return { content, empty: content.trim() === '', ...(answer.task_id ? { taskId: answer.task_id } : {}) };
}

export function refuseOverLimit(total: number, fileBytes: number, name: string): void {
  if (total > UPLOAD_LIMIT_BYTES) {
    throw new GatewayError(
      'tooLarge',
      l10n.t(
        '{0} is too large to send: the request would be {1} ({2} bytes: {3} of file plus the form), and the limit is 20 MiB ({4} bytes) per request. Nothing was uploaded or charged.',
        name,
        formatBytes(total),
        formatNumber(total),
        formatBytes(fileBytes),
        formatNumber(UPLOAD_LIMIT_BYTES),
      ),
    );
  }
}

const ocrAnswer = z.looseObject({
  md_results: str,
  data_info: z.optional(z.nullable(z.looseObject({ num_pages: z.optional(z.number()) }))),
});

export interface OcrResult {
  markdown: string;
  pages?: number;
}

const OCR_TYPES: Record<string, UploadFormat> = {
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
};
const OCR_FORMATS: readonly UploadFormat[] = ['application/pdf', 'image/png', 'image/jpeg'];

/** First provider's layout parsing (OCR) for images and scanned PDFs. */
/** Checks a file for OCR without sending it; returns its MIME type. */
export async function checkOcrFile(file: OpenedFile): Promise<UploadFormat> {
  const ext = path.extname(file.path).toLowerCase();
  const type = OCR_TYPES[ext];
  if (!type)
    throw new GatewayError(
      'badRequest',
      ext
        ? l10n.t('OCR takes PDF, PNG or JPEG files, not "{0}".', ext)
        : l10n.t('OCR takes PDF, PNG or JPEG files, not a file without an extension.'),
    );
  const size = file.size;
  const limit = type === 'application/pdf' ? OCR_PDF_LIMIT : OCR_IMAGE_LIMIT;
  if (size > limit) {
    throw new GatewayError(
      'tooLarge',
      type === 'application/pdf'
        ? l10n.t(
            '{0} is {1}; OCR takes PDFs up to 50 MB. Nothing was sent.',
            path.basename(file.path),
            formatBytes(size),
          )
        : l10n.t(
            '{0} is {1}; OCR takes images up to 10 MB. Nothing was sent.',
            path.basename(file.path),
            formatBytes(size),
          ),
    );
  }
  // The bytes decide what is sent (and its type in the data URL), not the name.
  return requireFormat(file, OCR_FORMATS, 'OCR');
}

export async function ocrFile(http: HttpClient, file: OpenedFile, signal?: AbortSignal): Promise<OcrResult> {
  const type = await checkOcrFile(file);
  // The notes leave open whether a bare base64 string or a data URL is expected; a data URL
  // also tells the service the file type.
  const data = `data:${type};base64,${(await readWhole(file)).toString('base64')}`;
  const answer = await http.sendJson(
    {
      method: 'POST',
      url: http.endpoints.glm('layout_parsing'),
      json: { model: 'glm-ocr', file: data },
      signal,
      route: 'glm',
      timeout: 'long',
    },
    ocrAnswer,
    l10n.t("GLM's OCR result"),
  );
  return {
    markdown: answer.md_results ?? '',
    ...(answer.data_info?.num_pages !== undefined ? { pages: answer.data_info.num_pages } : {}),
  };
}

const searchAnswer = z.looseObject({
  search_result: z.optional(
    z.nullable(
      z.array(z.looseObject({ title: str, content: str, link: str, media: str, publish_date: str, refer: str })),
    ),
  ),
});

export interface GlmSearchOptions {
  engine: string;
  count: number;
  intent: boolean;
}

export async function webSearch(
  http: HttpClient,
  query: string,
  options: GlmSearchOptions,
  signal?: AbortSignal,
): Promise<SearchResult[]> {
  const q = query.trim();
  if (!q) throw new GatewayError('badRequest', l10n.t('Type something to search for.'));
  if (q.length > SEARCH_QUERY_MAX) {
    throw new GatewayError(
      'badRequest',
      l10n.t(
        "GLM's search takes at most {0} characters; this query has {1}. Shorten it.",
        formatNumber(SEARCH_QUERY_MAX),
        formatNumber(q.length),
      ),
    );
  }
  const answer = await http.sendJson(
    {
      method: 'POST',
      url: http.endpoints.glm('web_search'),
      json: {
        search_query: q,
        search_engine: options.engine,
        search_intent: options.intent,
        count: Math.min(50, Math.max(1, Math.round(options.count))),
      },
      signal,
      route: 'glm',
    },
    searchAnswer,
    l10n.t("GLM's search results"),
  );
  return (answer.search_result ?? []).map((r) => ({
    title: r.title || r.link || 'Untitled',
    url: r.link ?? '',
    ...(r.media ? { site: r.media } : {}),
    ...(r.publish_date ? { date: r.publish_date } : {}),
    snippet: r.content ?? '',
  }));
}

const readerAnswer = z.looseObject({
  reader_result: z.looseObject({ content: str, title: str, description: str, url: str, publishedTime: str }),
});

export interface PageResult {
  url: string;
  title?: string;
  markdown: string;
}

export async function readPage(http: HttpClient, url: string, signal?: AbortSignal): Promise<PageResult> {
  const target = checkPublicUrl(url);
  const answer = await http.sendJson(
    {
      method: 'POST',
      url: http.endpoints.glm('reader'),
      json: { url: target, return_format: 'markdown' },
      signal,
      route: 'glm',
      timeout: 'long',
    },
    readerAnswer,
    l10n.t("GLM's page reader"),
  );
  const r = answer.reader_result;
  return { url: r.url ?? target, ...(r.title ? { title: r.title } : {}), markdown: r.content ?? '' };
}

export function checkPublicUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new GatewayError(
      'badRequest',
      l10n.t('"{0}" is not a web address. Enter a full address such as https://example.com/page.', url),
    );
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new GatewayError('badRequest', l10n.t('Only http and https pages can be read.'));
  return parsed.toString();
}
