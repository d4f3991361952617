import * as l10n from '@vscode/l10n';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { GatewayError } from '../errors';
import type { HttpClient } from '../http';
import { checkPublicUrl, refuseOverLimit, type PageResult } from './glm';
import { multipartFromFile, type MultipartBody } from './multipart';
import { readHead, type OpenedFile } from './openedFile';
import type { SearchResult } from './searchResult';

const str = z.optional(z.nullable(z.string()));
const fileObject = z.looseObject({
  id: z.string(),
  filename: str,
  bytes: z.optional(z.number()),
  status: str,
  status_details: str,
  created_at: z.optional(z.number()),
});

export interface KimiFile {
  id: string;
  filename: string;
  bytes?: number;
  createdAt: number;
}

const IMAGE_SIGNATURES: Array<[string, number[]]> = [
  ['PNG', [0x89, 0x50, 0x4e, 0x47]],
  ['JPEG', [0xff, 0xd8, 0xff]],
  ['GIF', [0x47, 0x49, 0x46, 0x38]],
  ['WebP', [0x52, 0x49, 0x46, 0x46]],
  ['BMP', [0x42, 0x4d]],
];

/** The code of the refusal of an image for extraction. */
export const IMAGE_REFUSED = 'image_not_extractable';

/** Images are not file-extract documents: say where image understanding lives instead. */
async function refuseImages(file: OpenedFile): Promise<void> {
  const head = await readHead(file, 12);
  const image = IMAGE_SIGNATURES.find(([, sig]) => sig.every((b, i) => head[i] === b));
  if (image || /\.(png|jpe?g|gif|webp|bmp)$/i.test(file.path)) {
    // The code lets the extract command offer "Ask About This Image" whatever the display language.
    throw new GatewayError(
      'badRequest',
      image
        ? l10n.t(
            '{0} is an image ({1}). Images are not file-extract documents: attach the image to a chat message with a model that takes image input ("Ask about this image") instead.',
            path.basename(file.path),
            image[0],
          )
        : l10n.t(
            '{0} is an image (by its extension). Images are not file-extract documents: attach the image to a chat message with a model that takes image input ("Ask about this image") instead.',
            path.basename(file.path),
          ),
      { code: IMAGE_REFUSED },
    );
  }
}

/** Second provider's upload with `purpose=file-extract`, the only purpose it accepts. */
/** The upload form, after the checks that need no request (image, size, empty): nothing billed yet. */
export async function extractForm(file: OpenedFile): Promise<MultipartBody> {
  await refuseImages(file);
  const form = multipartFromFile({ purpose: 'file-extract' }, { name: 'file', file });
  refuseOverLimit(form.length, form.fileBytes, path.basename(file.path));
  if (form.fileBytes === 0)
    throw new GatewayError(
      'badRequest',
      l10n.t('{0} is empty; there is nothing to extract.', path.basename(file.path)),
    );
  return form;
}

export async function uploadForExtract(
  http: HttpClient,
  key: string | undefined,
  file: OpenedFile,
  signal?: AbortSignal,
  prepared?: MultipartBody,
): Promise<KimiFile> {
  const form = prepared ?? (await extractForm(file));
  const answer = await http.sendJson(
    {
      method: 'POST',
      url: http.endpoints.kimi('files'),
      body: form.chunks(),
      headers: { 'content-type': form.contentType, 'content-length': String(form.length) },
      signal,
      route: 'kimi',
      key,
      timeout: 'long',
    },
    fileObject,
    l10n.t("Kimi's file record"),
  );
  if (answer.status === 'error')
    throw new GatewayError(
      'badRequest',
      l10n.t(
        'Kimi could not extract {0}: {1}.',
        path.basename(file.path),
        answer.status_details || l10n.t('no reason given'),
      ),
    );
  return {
    id: answer.id,
    filename: answer.filename ?? path.basename(file.path),
    ...(answer.bytes !== undefined ? { bytes: answer.bytes } : {}),
    createdAt: (answer.created_at ?? Math.floor(Date.now() / 1000)) * 1000,
  };
}

/**
 * The extracted text. The docs say text/plain, but in practice the body is a JSON string with a
 * `content` field: read that, and fall back to the raw text. Not billed.
 */
export async function fileContent(
  http: HttpClient,
  key: string | undefined,
  id: string,
  signal?: AbortSignal,
): Promise<string> {
  const response = await http.send({
    method: 'GET',
    url: http.endpoints.kimi(`files/${encodeURIComponent(id)}/content`),
    signal,
    route: 'kimi',
    key,
  });
  const text = await response.text();
  try {
    const json: unknown = JSON.parse(text);
    if (json && typeof json === 'object' && typeof (json as { content?: unknown }).content === 'string')
      return (json as { content: string }).content;
  } catch {
    // Plain text, as the documentation describes.
  }
  return text;
}

const searchAnswer = z.looseObject({
  search_results: z.optional(
    z.nullable(z.array(z.looseObject({ site_name: str, title: str, url: str, snippet: str, date: str }))),
  ),
});

/** Second provider's search; it currently answers 403 (upstream account blocked), which callers handle. */
export async function kimiSearch(
  http: HttpClient,
  query: string,
  limit: number,
  pro: boolean,
  signal?: AbortSignal,
): Promise<SearchResult[]> {
  const answer = await http.sendJson(
    {
      method: 'POST',
      url: http.endpoints.kimi(pro ? 'tools/search_pro' : 'tools/search'),
      json: { text_query: query.trim(), limit: Math.min(20, Math.max(1, Math.round(limit))) },
      signal,
      route: 'kimi',
    },
    searchAnswer,
    l10n.t("Kimi's search results"),
  );
  return (answer.search_results ?? []).map((r) => ({
    title: r.title || r.url || 'Untitled',
    url: r.url ?? '',
    ...(r.site_name ? { site: r.site_name } : {}),
    ...(r.date ? { date: r.date } : {}),
    snippet: r.snippet ?? '',
  }));
}

/** Second provider's page fetch: a plain Markdown body. */
export async function kimiFetch(http: HttpClient, url: string, signal?: AbortSignal): Promise<PageResult> {
  const target = checkPublicUrl(url);
  const response = await http.send({
    method: 'POST',
    url: http.endpoints.kimi('tools/fetch'),
    json: { url: target },
    headers: { accept: 'text/markdown' },
    signal,
    route: 'kimi',
    timeout: 'long',
  });
  return { url: target, markdown: await response.text() };
}
