import { PAGE_BREAK, readPdf } from '../../fixtures/samples';
import { TOOL_LIMIT_BYTES } from '../defaults';
import { KIMI_SEARCH_BLOCKED } from '../errorBodies';
import { boundaryOf, parseMultipart, type FormPart } from '../multipart';
import { isPdf, isPng } from '../ocr';
import type { GatewayContext, Route } from '../route';
import { toolState, type StoredFile } from '../toolState';
import { isRecord } from '../values';
import { pageFor, readableUrl } from '../webContent';
import { canPay, chargeCall, recordTool, unixSeconds } from './tools';

/**
 * The second provider's entries (Moonshot Kimi, wire-formats §9) under the gateway's provider root:
 * file upload for `file-extract` with list / retrieve / delete / content, the search entries the
 * spec reports as blocked (403), and fetch.
 *
 * Errors keep Kimi's body `{"error":{"type":"…","message":"…"}}` (§9.5). Auth, rate-limit and
 * Distribute errors come from the gateway middleware in new-api's shape, as on every route.
 *
 * Model and Distribute: only the upload is checked and billed under a tool entry
 * (`kimi-file-extract`; its multipart body has no JSON model). Listing, reading and deleting are
 * free and need only the key, since a file belongs to the key that uploaded it (spec: API key,
 * Authentication 5); another key gets 404 as if the file did not exist. search / search_pro answer
 * 403 before anything else is looked at, unbilled. fetch skips Distribute and costs the default price.
 */
export const KIMI_ROOT = '/providers/kimi/v1';

/** Kimi's per-user file count limit (§9.1). */
export const KIMI_MAX_FILES = 1000;

const bad = (ctx: GatewayContext, message: string): void => ctx.relayError(400, 'invalid_request_error', message);

const notFound = (ctx: GatewayContext, id: string): void =>
  ctx.relayError(404, 'resource_not_found_error', `Not found the file ${id} or Permission denied`);

const ID_ALPHABET = 'abcdefghijklmnopqrstuv0123456789';

/** Shaped like Kimi's ids (`clg681objj8g9m7n4je0`): 20 lower-case characters starting with c. */
function fileId(): string {
  let id = 'c';
  for (let i = 0; i < 19; i++) id += ID_ALPHABET[Math.floor(Math.random() * ID_ALPHABET.length)];
  return id;
}

function isImage(data: Buffer): boolean {
  const head = data.subarray(0, 12);
  return (
    isPng(data) ||
    head.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff])) ||
    head.toString('latin1', 0, 6) === 'GIF87a' ||
    head.toString('latin1', 0, 6) === 'GIF89a' ||
    (head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP')
  );
}

const TEXT_TYPES: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  html: 'text/html',
  htm: 'text/html',
  json: 'application/json',
};

/** What extraction gives for an upload: PDFs through the fixtures' extractor, UTF-8 text as is. */
function extract(file: FormPart): Pick<StoredFile, 'status' | 'statusDetails' | 'content' | 'fileType'> {
  const data = file.data;
  if (isPdf(data)) {
    try {
      // A scan has pages but no text: the upload is fine and the content is empty (spec: Errors 6).
      const { summary, texts } = readPdf(data);
      if (summary.pages === 0)
        return {
          status: 'error',
          statusDetails: 'the PDF is damaged or has no pages',
          content: '',
          fileType: 'application/pdf',
        };
      return { status: 'ok', statusDetails: '', content: texts.join(PAGE_BREAK), fileType: 'application/pdf' };
    } catch (err) {
      return {
        status: 'error',
        statusDetails: `the PDF cannot be read: ${(err as Error).message}`,
        content: '',
        fileType: 'application/pdf',
      };
    }
  }
  if (!data.includes(0)) {
    try {
      const content = new TextDecoder('utf-8', { fatal: true }).decode(data);
      const ext = /\.([a-z0-9]+)$/i.exec(file.filename ?? '')?.[1]?.toLowerCase() ?? '';
      return { status: 'ok', statusDetails: '', content, fileType: TEXT_TYPES[ext] ?? 'text/plain' };
    } catch {
      // not UTF-8: falls through to unsupported
    }
  }
  return {
    status: 'error',
    statusDetails: 'the gateway double extracts text from PDF and UTF-8 text files only',
    content: '',
    fileType: file.contentType ?? 'application/octet-stream',
  };
}

function fileObject(f: StoredFile) {
  return {
    id: f.id,
    object: 'file',
    bytes: f.bytes,
    created_at: f.createdAt,
    filename: f.filename,
    purpose: f.purpose,
    status: f.status,
    status_details: f.statusDetails,
  };
}

function upload(ctx: GatewayContext): void {
  const record = recordTool(ctx, 'kimi', 'files');
  if (!canPay(ctx, 'kimi')) return;
  const boundary = boundaryOf(ctx.http.header('content-type'));
  if (!boundary) return bad(ctx, 'Invalid request: the upload must be multipart/form-data with purpose and file');
  let parts: FormPart[];
  try {
    parts = parseMultipart(ctx.http.body, boundary);
  } catch (err) {
    return bad(ctx, `Invalid request: malformed multipart body (${(err as Error).message})`);
  }
  const purpose = parts
    .find((p) => p.name === 'purpose' && p.filename === undefined)
    ?.data.toString('utf8')
    .trim();
  if (purpose !== 'file-extract') return bad(ctx, "Invalid purpose: only 'file-extract' accepted");
  const file = parts.find((p) => p.name === 'file');
  if (!file) return bad(ctx, 'Invalid request: file is required');
  if (file.data.length === 0) return bad(ctx, 'File size is zero, please confirm and re-upload the file');
  if (isImage(file.data)) {
    return bad(
      ctx,
      'Invalid request: images are not file-extract documents; send images to a vision model as image input (image_url) instead',
    );
  }
  const state = toolState(ctx.world);
  if (state.filesOf(ctx.key).length >= KIMI_MAX_FILES) {
    return bad(
      ctx,
      `The number of files you have uploaded exceeded the max file count ${KIMI_MAX_FILES}, please delete previous uploaded files`,
    );
  }
  const stored: StoredFile = {
    id: fileId(),
    owner: ctx.key,
    filename: file.filename || 'upload',
    bytes: file.data.length,
    createdAt: unixSeconds(),
    purpose,
    ...extract(file),
  };
  state.files.set(stored.id, stored);
  record.fileId = stored.id;
  chargeCall(ctx, record);
  ctx.http.sendJson(200, fileObject(stored));
}

function listFiles(ctx: GatewayContext): void {
  recordTool(ctx, 'kimi', 'files');
  ctx.http.sendJson(200, { object: 'list', data: toolState(ctx.world).filesOf(ctx.key).map(fileObject) });
}

/** The caller's own file, or undefined once a 404 is sent. */
function ownFile(ctx: GatewayContext, tool: string): StoredFile | undefined {
  const id = ctx.params.id ?? '';
  const record = recordTool(ctx, 'kimi', tool);
  record.fileId = id;
  const file = toolState(ctx.world).files.get(id);
  if (!file || file.owner !== ctx.key) {
    notFound(ctx, id);
    return undefined;
  }
  return file;
}

function retrieveFile(ctx: GatewayContext): void {
  const file = ownFile(ctx, 'files/:id');
  if (file) ctx.http.sendJson(200, fileObject(file));
}

function deleteFile(ctx: GatewayContext): void {
  const file = ownFile(ctx, 'files/:id');
  if (!file) return;
  toolState(ctx.world).files.delete(file.id);
  ctx.http.sendJson(200, { id: file.id, object: 'file', deleted: true });
}

/**
 * The docs say text/plain, but the body observed in practice is a JSON object as a string (§9.1,
 * §11.12); it is sent as such, labelled application/json.
 */
function fileContent(ctx: GatewayContext): void {
  const file = ownFile(ctx, 'files/:id/content');
  if (!file) return;
  if (file.status !== 'ok') return bad(ctx, `File extraction failed for ${file.id}: ${file.statusDetails}`);
  const body = JSON.stringify({
    content: file.content,
    file_type: file.fileType,
    filename: file.filename,
    title: '',
    type: 'file',
  });
  ctx.http.send(200, body, { 'Content-Type': 'application/json; charset=utf-8' });
}

function searchBlocked(tool: string): Route['handle'] {
  return (ctx) => {
    recordTool(ctx, 'kimi', tool);
    ctx.http.sendJson(KIMI_SEARCH_BLOCKED.status, KIMI_SEARCH_BLOCKED.body);
  };
}

/** Page text as markdown, like kimi-cli's fetch service (§9.4): a plain text body, not JSON. */
function fetchPage(ctx: GatewayContext): void {
  const record = recordTool(ctx, 'kimi', 'tools/fetch');
  if (!canPay(ctx, 'kimi')) return;
  const parsed = ctx.http.json();
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : undefined;
  if (!body) return bad(ctx, 'Invalid request: the body must be a JSON object with url');
  if (body.url === undefined || body.url === '') return bad(ctx, 'Invalid request: url is required');
  const url = readableUrl(body.url);
  if (!url) return bad(ctx, 'Invalid request: url must be an absolute http(s) address of a public page');
  chargeCall(ctx, record);
  ctx.http.send(200, pageFor(url).markdown, { 'Content-Type': 'text/markdown; charset=utf-8' });
}

const route = (method: string, path: string, handle: Route['handle'], extra: Partial<Route> = {}): Route => ({
  method,
  path: `${KIMI_ROOT}/${path}`,
  rateLimit: true,
  distribute: false,
  errorFormat: 'kimi',
  handle,
  ...extra,
});

export const kimiRoutes: Route[] = [
  route('POST', 'files', upload, { distribute: true, model: 'kimi-file-extract', maxBodyBytes: TOOL_LIMIT_BYTES }),
  route('GET', 'files', listFiles),
  route('GET', 'files/:id', retrieveFile),
  route('DELETE', 'files/:id', deleteFile),
  route('GET', 'files/:id/content', fileContent),
  route('POST', 'tools/search', searchBlocked('tools/search')),
  route('POST', 'tools/search_pro', searchBlocked('tools/search_pro')),
  route('POST', 'tools/fetch', fetchPage),
];
