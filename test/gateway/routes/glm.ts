import { extractPdfPages, PAGE_BREAK, readPdf } from '../../fixtures/samples';
import { TOOL_LIMIT_BYTES } from '../defaults';
import { boundaryOf, parseMultipart, type FormPart } from '../multipart';
import { decodePng, isPdf, isPng, OcrInputError, pdfPageImages, recognise, type OcrPage } from '../ocr';
import { randomAlphanumeric } from '../requestId';
import type { GatewayContext, Route } from '../route';
import { toolState } from '../toolState';
import { isRecord } from '../values';
import { keywordsOf, markdownToText, pageFor, readableUrl, searchResults } from '../webContent';
import { estimateTokens } from './echo';
import { canPay, chargeCall, recordTool, unixSeconds } from './tools';

/**
 * The first provider's tools (GLM / Zhipu open platform, wire-formats §8) under the gateway's
 * provider root: sync file parsing, layout parsing (OCR), web search and the web reader.
 *
 * Errors keep GLM's own body `{"error":{"code":"<string>","message":"…"}}` (§8.6): 1213 a field is
 * missing, 1214 a field is invalid, 1210 the body is not usable JSON, 1211 unknown model, 1113 no
 * balance (HTTP 429). Auth, rate-limit and Distribute errors come from the gateway's middleware in
 * new-api's shape, as on every other route.
 *
 * Model and Distribute: new-api's Distribute demands a JSON `model`, and none of these bodies has
 * a usable one (the parser is multipart; web_search and reader have none; layout_parsing's `model`
 * names the upstream OCR model, not a gateway model). The parser is checked and billed under its
 * tool entry `glm-file-parser` (spec: tool entries appear under permission and billing names), so a
 * key whose group lacks it gets new-api's 503/403 as for any model. The other three skip Distribute
 * and are billed at the default per-call price; layout_parsing checks its `model` itself.
 */
export const GLM_ROOT = '/providers/glm/api/paas/v4';

/** Layout parsing limits (§8.3): images up to 10 MB, PDFs up to 50 MB and 100 pages. MB read as MiB. */
export const OCR_IMAGE_LIMIT_BYTES = 10 * 1024 * 1024;
export const OCR_PDF_LIMIT_BYTES = 50 * 1024 * 1024;
export const OCR_MAX_PAGES = 100;
/** A base64 PDF at the limit, plus room for the JSON around it. */
const LAYOUT_BODY_LIMIT = Math.ceil((OCR_PDF_LIMIT_BYTES * 4) / 3) + 1024 * 1024;

/** The file_type values GLM documents for the parser (§8.1); matched case-insensitively. */
const FILE_TYPES = new Set([
  'WPS',
  'PDF',
  'DOCX',
  'DOC',
  'XLS',
  'XLSX',
  'PPT',
  'PPTX',
  'PNG',
  'JPG',
  'JPEG',
  'CSV',
  'TXT',
  'MD',
  'HTML',
  'BMP',
  'GIF',
  'WEBP',
  'HEIC',
  'EPS',
  'ICNS',
  'IM',
  'PCX',
  'PPM',
  'TIFF',
  'XBM',
  'HEIF',
  'JP2',
]);
const TEXT_TYPES = new Set(['TXT', 'MD', 'CSV', 'HTML']);
const SEARCH_ENGINES = new Set([
  'search_std',
  'search_pro',
  'search_pro_sogou',
  'search_pro_quark',
  'search_pro_jina',
  'search_pro_bing',
]);
const RECENCY = new Set(['oneDay', 'oneWeek', 'oneMonth', 'oneYear', 'noLimit']);

function missing(ctx: GatewayContext, field: string): void {
  ctx.relayError(400, '1213', `未正常接收到${field}参数。`);
}

function invalid(ctx: GatewayContext, field: string, detail?: string): void {
  ctx.relayError(400, '1214', `${field} 参数非法。请检查文档。${detail ? `（${detail}）` : ''}`);
}

function badJson(ctx: GatewayContext): void {
  ctx.relayError(400, '1210', 'API 调用参数有误，请检查文档。（请求体须为 JSON 对象）');
}

function jsonBody(ctx: GatewayContext): Record<string, unknown> | undefined {
  const parsed = ctx.http.json();
  return parsed.ok && isRecord(parsed.value) ? parsed.value : undefined;
}

function taskId(): string {
  return `task_${Date.now()}${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
}

// ---------------------------------------------------------------------------------------------
// POST /files/parser/sync

/**
 * How a bad file is answered. GLM has two vocabularies: HTTP 400 for "parameter error / file
 * content error" (§8.6) and, in a 200 body, `status` ∈ processing | succeeded | failed (§8.1). The
 * double uses the first for what is wrong with the request itself and visible before any parsing:
 * bytes that are not what `file_type` declares (a PNG sent as PDF), an empty file, an undocumented
 * file_type. It uses `status:"failed"` when the request was proper and the parse itself failed: a
 * damaged PDF without readable pages, a documented type the double cannot parse (DOCX, images…).
 * Neither is billed. A scan is not a failure: it parses, and has no text (spec: Errors 6).
 */
function parseSync(ctx: GatewayContext): void {
  const record = recordTool(ctx, 'glm', 'files/parser/sync');
  if (!canPay(ctx, 'glm')) return;
  const boundary = boundaryOf(ctx.http.header('content-type'));
  if (!boundary) return invalid(ctx, 'file', '请求须为 multipart/form-data');
  let parts: FormPart[];
  try {
    parts = parseMultipart(ctx.http.body, boundary);
  } catch (err) {
    return invalid(ctx, 'file', `multipart 表单无法解析：${(err as Error).message}`);
  }
  const text = (name: string) =>
    parts
      .find((p) => p.name === name && p.filename === undefined)
      ?.data.toString('utf8')
      .trim();

  const toolType = text('tool_type');
  if (!toolType) return missing(ctx, 'tool_type');
  if (toolType !== 'prime-sync') {
    const async = ['lite', 'expert', 'prime'].includes(toolType);
    return invalid(ctx, 'tool_type', async ? '只开放同步解析 prime-sync，异步解析未开放' : '同步解析只支持 prime-sync');
  }
  const file = parts.find((p) => p.name === 'file');
  if (!file) return missing(ctx, 'file');
  if (file.data.length === 0) return invalid(ctx, 'file', '文件为空');
  const rawType = text('file_type');
  if (!rawType) return missing(ctx, 'file_type');
  const fileType = rawType.toUpperCase();
  if (!FILE_TYPES.has(fileType)) return invalid(ctx, 'file_type', `不支持的文件类型 ${rawType}`);

  const id = taskId();
  const failed = (why: string): void => {
    ctx.http.sendJson(200, {
      status: 'failed',
      message: `文件解析失败：${why}`,
      task_id: id,
      content: null,
      parsing_result_url: null,
    });
  };
  let content: string;
  if (fileType === 'PDF') {
    if (!isPdf(file.data)) return invalid(ctx, 'file', '文件内容不是 PDF，与 file_type 不符');
    try {
      const { summary, texts } = readPdf(file.data);
      if (summary.pages === 0) return failed('PDF 已损坏或没有可读的页面');
      // A scan has pages but no text layer: parsing succeeds with nothing extracted (no OCR here).
      content = summary.hasText ? texts.join(PAGE_BREAK) : '';
    } catch (err) {
      return failed(`PDF 无法读取（${(err as Error).message}）`);
    }
  } else if (TEXT_TYPES.has(fileType)) {
    if (isPdf(file.data) || isPng(file.data) || file.data.includes(0))
      return invalid(ctx, 'file', `文件内容不是文本，与 file_type ${fileType} 不符`);
    try {
      content = new TextDecoder('utf-8', { fatal: true }).decode(file.data);
    } catch {
      return failed('文本不是 UTF-8 编码');
    }
    if (fileType === 'HTML') content = htmlText(content);
  } else {
    return failed(`the gateway double parses PDF, TXT, MD, CSV and HTML only, not ${fileType}`);
  }
  chargeCall(ctx, record);
  ctx.http.sendJson(200, {
    status: 'succeeded',
    message: '结果获取成功',
    task_id: id,
    content,
    parsing_result_url: null,
  });
}

function htmlText(html: string): string {
  return html
    .replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/(p|div|h\d|li|tr)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

// ---------------------------------------------------------------------------------------------
// POST /layout_parsing

/** `file` as a URL: only the double's own origins can be reached; the double has no internet. */
async function download(ctx: GatewayContext, raw: string): Promise<Buffer | string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return '文件地址无效';
  }
  const origin = `${url.protocol}//${url.hostname === 'localhost' ? '127.0.0.1' : url.hostname}${url.port ? `:${url.port}` : ''}`;
  if (!toolState(ctx.world).selfOrigins().includes(origin)) {
    return '文件下载失败：the gateway double cannot reach the internet; send the file as base64 or host it on the double';
  }
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) return `文件下载失败（HTTP ${res.status}）`;
    return Buffer.from(await res.arrayBuffer());
  } catch (err) {
    return `文件下载失败（${(err as Error).message}）`;
  }
}

/** Base64 with or without a `data:<type>;base64,` prefix; undefined when it is not base64. */
function fromBase64(raw: string): Buffer | undefined {
  const payload = raw.replace(/^data:[^,]*;base64,/i, '').replace(/\s+/g, '');
  if (payload === '' || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(payload) || payload.length % 4 === 1) return undefined;
  return Buffer.from(payload, payload.includes('-') || payload.includes('_') ? 'base64url' : 'base64');
}

interface OcrResultPage {
  width: number;
  height: number;
  text: string;
  /** Boxes as fractions of the page, x1 y1 x2 y2. */
  blocks: Array<{ text: string; bbox: [number, number, number, number] }>;
}

const round4 = (n: number): number => Math.round(n * 10_000) / 10_000;

function fromOcr(page: OcrPage): OcrResultPage {
  return {
    width: page.width,
    height: page.height,
    text: page.text,
    blocks: page.blocks.map((b) => ({
      text: b.text,
      bbox: [
        round4(b.box.x1 / page.width),
        round4(b.box.y1 / page.height),
        round4(Math.min(1, b.box.x2 / page.width)),
        round4(Math.min(1, b.box.y2 / page.height)),
      ],
    })),
  };
}

/** A page with a text layer reads as its text; boxes follow the fixtures' layout (A4, 11/14 pt, 56 pt margins). */
function fromTextLayer(text: string): OcrResultPage {
  const lines = text.split('\n');
  const blocks: OcrResultPage['blocks'] = [];
  let start = -1;
  const close = (end: number): void => {
    if (start < 0) return;
    const chunk = lines.slice(start, end);
    const width = Math.max(...chunk.map((l) => l.length)) * 6;
    blocks.push({
      text: chunk.join('\n'),
      bbox: [
        round4(56 / 595),
        round4((56 + start * 14) / 842),
        round4(Math.min(1, (56 + width) / 595)),
        round4(Math.min(1, (56 + end * 14) / 842)),
      ],
    });
    start = -1;
  };
  lines.forEach((line, i) => {
    if (line.trim() === '') close(i);
    else if (start < 0) start = i;
  });
  close(lines.length);
  // A4 at 150 dpi, the size a renderer would rasterise the page to.
  return { width: 1240, height: 1754, text: text.replace(/\s+$/, ''), blocks };
}

/** Per-page text of a PDF's text layer; a layer the extractor cannot read counts as none (OCR then reads the images). */
function textLayer(pdf: Buffer): string[] {
  try {
    return extractPdfPages(pdf);
  } catch {
    return [];
  }
}

function pageRange(body: Record<string, unknown>, pages: number): [number, number] | string {
  const read = (name: string, fallback: number): number | string => {
    const v = body[name];
    if (v === undefined || v === null) return fallback;
    return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= pages ? v : name;
  };
  const start = read('start_page_id', 1);
  const end = read('end_page_id', pages);
  if (typeof start === 'string') return start;
  if (typeof end === 'string') return end;
  return start <= end ? [start, end] : 'end_page_id';
}

async function layoutParsing(ctx: GatewayContext): Promise<void> {
  const record = recordTool(ctx, 'glm', 'layout_parsing');
  if (!canPay(ctx, 'glm')) return;
  const body = jsonBody(ctx);
  if (!body) return badJson(ctx);
  if (body.model === undefined || body.model === '') return missing(ctx, 'model');
  if (typeof body.model !== 'string' || body.model.toLowerCase() !== 'glm-ocr')
    return ctx.relayError(400, '1211', '模型不存在，请检查模型代码。');
  if (body.file === undefined || body.file === '') return missing(ctx, 'file');
  if (typeof body.file !== 'string') return invalid(ctx, 'file', 'file 须为文件 URL 或 base64 字符串');

  let bytes: Buffer;
  if (/^https?:\/\//i.test(body.file)) {
    const got = await download(ctx, body.file);
    if (typeof got === 'string') return invalid(ctx, 'file', got);
    bytes = got;
  } else {
    const decoded = fromBase64(body.file);
    if (!decoded) return invalid(ctx, 'file', 'file 须为文件 URL 或 base64 字符串');
    bytes = decoded;
  }

  let pages: OcrResultPage[];
  let numPages: number;
  try {
    if (isPng(bytes)) {
      if (bytes.length > OCR_IMAGE_LIMIT_BYTES) return invalid(ctx, 'file', '图片大小不能超过 10MB');
      pages = [fromOcr(recognise(decodePng(bytes)))];
      numPages = 1;
    } else if (isPdf(bytes)) {
      if (bytes.length > OCR_PDF_LIMIT_BYTES) return invalid(ctx, 'file', 'PDF 大小不能超过 50MB');
      const texts = textLayer(bytes);
      const images = pdfPageImages(bytes);
      numPages = Math.max(texts.length, images.length);
      if (numPages === 0) return invalid(ctx, 'file', 'PDF 已损坏或没有页面');
      if (numPages > OCR_MAX_PAGES) return invalid(ctx, 'file', `PDF 页数不能超过 ${OCR_MAX_PAGES} 页`);
      const range = pageRange(body, numPages);
      if (typeof range === 'string') return invalid(ctx, range, `页码须在 1 到 ${numPages} 之间且起始页不大于结束页`);
      pages = [];
      for (let i = range[0] - 1; i < range[1]; i++) {
        const layer = texts[i] ?? '';
        if (layer.trim() !== '') {
          pages.push(fromTextLayer(layer));
          continue;
        }
        const read = (images[i] ?? []).map((image) => fromOcr(recognise(image)));
        const first = read[0];
        pages.push({
          width: first?.width ?? 1240,
          height: first?.height ?? 1754,
          text: read
            .map((p) => p.text)
            .filter((t) => t !== '')
            .join('\n'),
          blocks: read.flatMap((p) => p.blocks),
        });
      }
    } else if (bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))) {
      return invalid(ctx, 'file', 'the gateway double reads PNG and PDF; JPG needs the real OCR service');
    } else {
      return invalid(ctx, 'file', '文件格式不支持，仅支持 PDF、JPG、PNG');
    }
  } catch (err) {
    if (err instanceof OcrInputError) return invalid(ctx, 'file', `文件无法解码：${err.message}`);
    throw err;
  }

  const md = pages
    .map((p) => p.text)
    .filter((t) => t !== '')
    .join('\n\n');
  const id = taskId();
  const promptTokens = pages.reduce((sum, p) => sum + Math.ceil((p.width * p.height) / (28 * 28)), 0);
  const completionTokens = md ? estimateTokens(md) : 0;
  chargeCall(ctx, record);
  ctx.http.sendJson(200, {
    id,
    created: unixSeconds(),
    model: 'GLM-OCR',
    md_results: md,
    layout_details: pages.map((p) =>
      p.blocks.map((b, i) => ({
        index: i + 1,
        label: 'text',
        bbox_2d: b.bbox,
        content: b.text,
        height: p.height,
        width: p.width,
      })),
    ),
    layout_visualization: [],
    data_info: { num_pages: numPages, pages: pages.map((p) => ({ width: p.width, height: p.height })) },
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      prompt_tokens_details: { cached_tokens: 0 },
      total_tokens: promptTokens + completionTokens,
    },
    request_id: typeof body.request_id === 'string' ? body.request_id : id,
  });
}

// ---------------------------------------------------------------------------------------------
// POST /web_search

function webSearch(ctx: GatewayContext): void {
  const record = recordTool(ctx, 'glm', 'web_search');
  if (!canPay(ctx, 'glm')) return;
  const body = jsonBody(ctx);
  if (!body) return badJson(ctx);
  const query = body.search_query;
  if (query === undefined || query === null || query === '') return missing(ctx, 'search_query');
  if (typeof query !== 'string' || query.trim() === '') return invalid(ctx, 'search_query');
  if ([...query].length > 70) return invalid(ctx, 'search_query', 'search_query 不能超过 70 个字符');
  const engine = body.search_engine;
  if (engine === undefined || engine === null || engine === '') return missing(ctx, 'search_engine');
  if (typeof engine !== 'string' || !SEARCH_ENGINES.has(engine)) return invalid(ctx, 'search_engine');
  const intent = body.search_intent ?? false;
  if (typeof intent !== 'boolean') return invalid(ctx, 'search_intent');
  const count = body.count ?? 10;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 50)
    return invalid(ctx, 'count', 'count 须为 1 到 50 的整数');
  if (engine === 'search_pro_sogou' && count % 10 !== 0)
    return invalid(ctx, 'count', 'search_pro_sogou 只支持 10、20、30、40、50');
  const domain = body.search_domain_filter;
  if (domain !== undefined && (typeof domain !== 'string' || !readableUrl(`https://${domain}/`)))
    return invalid(ctx, 'search_domain_filter');
  const recency = body.search_recency_filter;
  if (recency !== undefined && (typeof recency !== 'string' || !RECENCY.has(recency)))
    return invalid(ctx, 'search_recency_filter');
  const size = body.content_size;
  if (size !== undefined && size !== 'medium' && size !== 'high') return invalid(ctx, 'content_size');

  const trimmed = query.trim();
  const results = searchResults(trimmed, {
    count,
    ...(typeof domain === 'string' && domain ? { domain } : {}),
    ...(typeof recency === 'string' ? { recency } : {}),
  }).map((r) =>
    size === 'high' ? { ...r, content: `${r.content} A longer summary is returned because content_size is high.` } : r,
  );
  const id = `${Date.now()}${randomAlphanumeric(8).toLowerCase()}`;
  chargeCall(ctx, record);
  ctx.http.sendJson(200, {
    id,
    created: unixSeconds(),
    request_id: typeof body.request_id === 'string' ? body.request_id : id,
    // With search_intent the query is first analysed (SEARCH_ALL: search as asked); without, no analysis.
    search_intent: intent ? [{ query: trimmed, intent: 'SEARCH_ALL', keywords: keywordsOf(trimmed).join(' ') }] : [],
    search_result: results,
  });
}

// ---------------------------------------------------------------------------------------------
// POST /reader

function reader(ctx: GatewayContext): void {
  const record = recordTool(ctx, 'glm', 'reader');
  if (!canPay(ctx, 'glm')) return;
  const body = jsonBody(ctx);
  if (!body) return badJson(ctx);
  if (body.url === undefined || body.url === null || body.url === '') return missing(ctx, 'url');
  const url = readableUrl(body.url);
  if (!url) return invalid(ctx, 'url', 'url 须为公开网页的 http(s) 地址');
  const format = body.return_format ?? 'markdown';
  if (format !== 'markdown' && format !== 'text') return invalid(ctx, 'return_format');

  const page = pageFor(url);
  const markdown = body.retain_images === false ? page.markdown.replace(/^!\[.*\n\n/gm, '') : page.markdown;
  const id = `${Date.now()}${randomAlphanumeric(8).toLowerCase()}`;
  chargeCall(ctx, record);
  ctx.http.sendJson(200, {
    id,
    created: unixSeconds(),
    request_id: typeof body.request_id === 'string' ? body.request_id : id,
    model: 'reader',
    reader_result: {
      content: format === 'text' ? markdownToText(markdown) : markdown,
      description: page.description,
      title: page.title,
      url: body.url,
      external: { stylesheet: {} },
      metadata: {
        keywords: page.title.split(' | ')[0] ?? '',
        viewport: 'width=device-width, initial-scale=1',
        description: page.description,
        'format-detection': 'telephone=no',
      },
      ...(body.with_images_summary === true ? { images: page.images } : {}),
      ...(body.with_links_summary === true ? { links: page.links } : {}),
      publishedTime: page.publishedTime,
    },
  });
}

const tool = (path: string, handle: Route['handle'], extra: Partial<Route> = {}): Route => ({
  method: 'POST',
  path: `${GLM_ROOT}/${path}`,
  rateLimit: true,
  distribute: false,
  errorFormat: 'glm',
  handle,
  ...extra,
});

export const glmRoutes: Route[] = [
  tool('files/parser/sync', parseSync, { distribute: true, model: 'glm-file-parser', maxBodyBytes: TOOL_LIMIT_BYTES }),
  tool('layout_parsing', layoutParsing, { maxBodyBytes: LAYOUT_BODY_LIMIT }),
  tool('web_search', webSearch),
  tool('reader', reader),
];
