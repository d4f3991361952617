/**
 * The provider tool routes of the gateway double (GLM under /providers/glm, Kimi under
 * /providers/kimi), driven with plain fetch / FormData / Blob as a client would use them.
 */
import assert from 'node:assert/strict';
import { PAGE_BREAK, renderText, sampleFile, scannedPdf, textPdf, pngBytes } from '../fixtures/samples';
import {
  DEFAULT_TOOL_PRICE_USD,
  DEMO_KEY,
  GatewayDouble,
  GLM_NO_BALANCE_KEY,
  GLM_ROOT,
  KIMI_ROOT,
  parseMultipart,
  recognise,
  TOOL_LIMIT_BYTES,
  VIP_KEY,
  WHITELIST_KEY,
  type RequestLogEntry,
} from '../gateway';
import { encodePng } from '../gateway/png';
import { QUOTA_PER_USD } from '../gateway/world';

type Json = Record<string, unknown>;

const TEXT_PDF = sampleFile('quarterly-report.pdf');
const SCANNED_PDF = sampleFile('scanned-letter.pdf');
const SCAN_PNG = sampleFile('scan.png');
const NOTES_MD = sampleFile('notes.md');

/** The sample report as its writer draws it: pages of lines, PAGE_BREAK lines between pages. */
const textPdfBytes = () =>
  textPdf(TEXT_PDF.text.split(PAGE_BREAK).flatMap((page, i) => [...(i > 0 ? [PAGE_BREAK] : []), ...page.split('\n')]));
const scannedPdfBytes = () => scannedPdf(SCANNED_PDF.text);
const scanPngBytes = () => pngBytes(renderText(SCAN_PNG.text));

const GLM_BALANCE_BODY = { error: { code: '1113', message: '余额不足或无可用资源包,请充值。' } };
const PRICE_QUOTA = Math.round(DEFAULT_TOOL_PRICE_USD * QUOTA_PER_USD);

describe('gateway double: provider tool routes', function () {
  let gw: GatewayDouble;

  beforeEach(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });

  afterEach(async () => {
    await gw.stop();
  });

  const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
  const quotaUnits = (key: string) => Math.round((gw.quota(key).userUsd ?? NaN) * QUOTA_PER_USD);

  function form(fields: Record<string, string>, file?: { data: Uint8Array; name: string; type?: string }): FormData {
    const fd = new FormData();
    for (const [name, value] of Object.entries(fields)) fd.append(name, value);
    if (file)
      fd.append(
        'file',
        new Blob([new Uint8Array(file.data)], { type: file.type ?? 'application/octet-stream' }),
        file.name,
      );
    return fd;
  }

  function postForm(path: string, fd: FormData, key = DEMO_KEY): Promise<Response> {
    return fetch(gw.url + path, { method: 'POST', headers: auth(key), body: fd });
  }

  function postJson(path: string, body: unknown, key = DEMO_KEY): Promise<Response> {
    return fetch(gw.url + path, {
      method: 'POST',
      headers: { ...auth(key), 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  function call(method: string, path: string, key = DEMO_KEY): Promise<Response> {
    return fetch(gw.url + path, { method, headers: auth(key) });
  }

  const parse = (data: Uint8Array, fields: Record<string, string> = {}, name = 'doc.pdf', key = DEMO_KEY) =>
    postForm(
      `${GLM_ROOT}/files/parser/sync`,
      form({ tool_type: 'prime-sync', file_type: 'PDF', ...fields }, { data, name }),
      key,
    );

  const upload = (data: Uint8Array, name: string, purpose = 'file-extract', key = DEMO_KEY) =>
    postForm(`${KIMI_ROOT}/files`, form({ purpose }, { data, name }), key);

  const lastEntry = (path: string): RequestLogEntry => {
    const entry = gw.log.filter((e) => e.path === path).at(-1);
    assert.ok(entry, `a log entry for ${path}`);
    return entry;
  };

  /** A form of exactly `total` bytes on the wire: the file is padded to make up the difference. */
  async function formOfSize(
    total: number,
    fields: Record<string, string>,
    head: Uint8Array,
    name: string,
  ): Promise<FormData> {
    const overhead = (await new Response(form(fields, { data: new Uint8Array(0), name })).arrayBuffer()).byteLength;
    const data = new Uint8Array(total - overhead);
    data.set(head);
    const fd = form(fields, { data, name });
    assert.equal((await new Response(fd).arrayBuffer()).byteLength, total, 'the form has the intended size');
    return fd;
  }

  describe('GLM sync file parser', () => {
    it('returns exactly the text of a text PDF, succeeded, and charges one call', async () => {
      const pdf = textPdfBytes();
      const before = quotaUnits(DEMO_KEY);
      const res = await parse(pdf);
      assert.equal(res.status, 200);
      const body = (await res.json()) as Json;
      assert.deepEqual(Object.keys(body), ['status', 'message', 'task_id', 'content', 'parsing_result_url']);
      assert.equal(body.status, 'succeeded');
      assert.equal(body.message, '结果获取成功');
      assert.match(String(body.task_id), /^task_\d+$/);
      assert.equal(body.content, TEXT_PDF.text);
      assert.ok(String(body.content).includes(TEXT_PDF.marker));
      assert.equal(body.parsing_result_url, null);
      assert.equal(before - quotaUnits(DEMO_KEY), PRICE_QUOTA);

      const entry = lastEntry(`${GLM_ROOT}/files/parser/sync`);
      assert.equal(entry.status, 200);
      assert.equal(entry.method, 'POST');
      assert.ok(entry.requestId);
      assert.ok(entry.bodyBytes > pdf.length, 'the whole form is counted');
      assert.equal(entry.bodyText, undefined, 'multipart bodies are not logged as text');
      assert.deepEqual(entry.tool, { provider: 'glm', tool: 'files/parser/sync', chargedQuota: PRICE_QUOTA });
    });

    it('accepts file_type in lower case', async () => {
      const res = await parse(textPdfBytes(), { file_type: 'pdf' });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as Json).content, TEXT_PDF.text);
    });

    it('answers a scanned PDF with succeeded and empty content (no OCR on this path)', async () => {
      const res = await parse(scannedPdfBytes());
      assert.equal(res.status, 200);
      const body = (await res.json()) as Json;
      assert.equal(body.status, 'succeeded');
      assert.equal(body.content, '');
    });

    it('parses TXT and MD as the text itself', async () => {
      const res = await parse(Buffer.from(NOTES_MD.text), { file_type: 'md' }, 'notes.md');
      assert.equal(((await res.json()) as Json).content, NOTES_MD.text);
    });

    it('refuses a tool_type other than prime-sync with 400 / 1214, unbilled', async () => {
      const before = quotaUnits(DEMO_KEY);
      for (const toolType of ['prime', 'lite', 'fast']) {
        const res = await parse(textPdfBytes(), { tool_type: toolType });
        assert.equal(res.status, 400);
        const body = (await res.json()) as { error: { code: string; message: string } };
        assert.deepEqual(Object.keys(body.error), ['code', 'message']);
        assert.equal(body.error.code, '1214');
        assert.match(body.error.message, /tool_type/);
      }
      const missing = await postForm(
        `${GLM_ROOT}/files/parser/sync`,
        form({ file_type: 'PDF' }, { data: textPdfBytes(), name: 'a.pdf' }),
      );
      assert.equal(missing.status, 400);
      assert.equal(((await missing.json()) as { error: { code: string } }).error.code, '1213');
      assert.equal(quotaUnits(DEMO_KEY), before);
    });

    it('answers bytes that are not the declared PDF with 400 / 1214, a damaged PDF or an unparsed type with status failed', async () => {
      const before = quotaUnits(DEMO_KEY);
      const notPdf = await parse(scanPngBytes());
      assert.equal(notPdf.status, 400);
      assert.equal(((await notPdf.json()) as { error: { code: string } }).error.code, '1214');

      const damaged = await parse(Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Cat'));
      assert.equal(damaged.status, 200);
      const failed = (await damaged.json()) as Json;
      assert.equal(failed.status, 'failed');
      assert.equal(failed.content, null);
      assert.match(String(failed.message), /^文件解析失败/);

      const docx = await parse(Buffer.from('PK\x03\x04 word/document.xml'), { file_type: 'DOCX' }, 'a.docx');
      assert.equal(((await docx.json()) as Json).status, 'failed');

      const unknownType = await parse(textPdfBytes(), { file_type: 'EXE' });
      assert.equal(unknownType.status, 400);
      assert.equal(quotaUnits(DEMO_KEY), before, 'nothing billed');
    });

    it('refuses 20 MiB + 1 byte counting the whole form with 413, and parses a form of exactly 20 MiB', async () => {
      const fields = { tool_type: 'prime-sync', file_type: 'PDF' };
      const pdf = textPdfBytes();
      const before = quotaUnits(DEMO_KEY);

      const over = await postForm(
        `${GLM_ROOT}/files/parser/sync`,
        await formOfSize(TOOL_LIMIT_BYTES + 1, fields, pdf, 'big.pdf'),
      );
      assert.equal(over.status, 413);
      assert.equal(over.headers.get('connection'), 'close');
      const error = (await over.json()) as { error: { code: string; message: string } };
      assert.equal(error.error.code, '1214');
      assert.match(error.error.message, /20 MiB/);
      const refused = lastEntry(`${GLM_ROOT}/files/parser/sync`);
      assert.equal(refused.status, 413);
      assert.equal(refused.bodyBytes, 0, 'refused on Content-Length before reading');
      assert.equal(quotaUnits(DEMO_KEY), before);

      const at = await postForm(
        `${GLM_ROOT}/files/parser/sync`,
        await formOfSize(TOOL_LIMIT_BYTES, fields, pdf, 'big.pdf'),
      );
      assert.equal(at.status, 200);
      assert.equal(((await at.json()) as Json).content, TEXT_PDF.text);
      assert.equal(lastEntry(`${GLM_ROOT}/files/parser/sync`).bodyBytes, TOOL_LIMIT_BYTES);
    });

    it('checks the key before the size: a bad key gets 401 even for an oversized body', async () => {
      const res = await fetch(`${gw.url}${GLM_ROOT}/files/parser/sync`, {
        method: 'POST',
        headers: { Authorization: 'Bearer sk-nope', 'Content-Type': 'multipart/form-data; boundary=x' },
        body: new Uint8Array(TOOL_LIMIT_BYTES + 10),
      });
      assert.equal(res.status, 401);
    });

    it('is checked under its tool entry: a key whose whitelist lacks glm-file-parser gets 403, a group without it 503', async () => {
      const res = await parse(textPdfBytes(), {}, 'a.pdf', WHITELIST_KEY);
      assert.equal(res.status, 403);
      const body = (await res.json()) as { error: { message: string; type: string } };
      assert.equal(body.error.type, 'new_api_error');
      assert.match(body.error.message, /glm-file-parser/);

      const key = 'sk-NoToolsGroupKey0000000000000000000000000000000000';
      gw.addKey({ key, group: 'chat-only' });
      const noGrant = await parse(textPdfBytes(), {}, 'a.pdf', key);
      assert.equal(noGrant.status, 503);
      assert.equal(((await noGrant.json()) as { error: { code: string } }).error.code, 'model_not_found');
    });
  });

  describe('GLM layout parsing (OCR)', () => {
    const ocr = (file: string, extra: Json = {}, key = DEMO_KEY) =>
      postJson(`${GLM_ROOT}/layout_parsing`, { model: 'glm-ocr', file, ...extra }, key);

    it('reads the scan PNG back to its exact text, with layout details, page info and usage', async () => {
      const before = quotaUnits(DEMO_KEY);
      const res = await ocr(scanPngBytes().toString('base64'));
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        md_results: string;
        model: string;
        layout_details: Array<
          Array<{ index: number; label: string; bbox_2d: number[]; content: string; width: number; height: number }>
        >;
        data_info: { num_pages: number; pages: Array<{ width: number; height: number }> };
        usage: {
          prompt_tokens: number;
          completion_tokens: number;
          total_tokens: number;
          prompt_tokens_details: { cached_tokens: number };
        };
      };
      assert.equal(body.md_results, SCAN_PNG.text);
      assert.ok(body.md_results.includes(SCAN_PNG.marker));
      assert.equal(body.model, 'GLM-OCR');
      assert.equal(body.data_info.num_pages, 1);
      assert.equal(body.layout_details.length, 1);
      const blocks = body.layout_details[0] ?? [];
      assert.ok(blocks.length >= 2, 'paragraphs become separate elements');
      assert.deepEqual(
        blocks.map((b) => b.content),
        SCAN_PNG.text.split('\n\n'),
      );
      for (const [i, b] of blocks.entries()) {
        assert.equal(b.index, i + 1);
        assert.equal(b.label, 'text');
        assert.equal(b.bbox_2d.length, 4);
        assert.ok(b.bbox_2d.every((v) => v >= 0 && v <= 1));
        assert.deepEqual([b.width, b.height], [body.data_info.pages[0]?.width, body.data_info.pages[0]?.height]);
      }
      assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
      assert.equal(before - quotaUnits(DEMO_KEY), PRICE_QUOTA);
    });

    it('reads the scanned PDF (image XObject) back to its text, with or without a data: prefix', async () => {
      const b64 = scannedPdfBytes().toString('base64');
      for (const file of [b64, `data:application/pdf;base64,${b64}`]) {
        const res = await ocr(file);
        assert.equal(res.status, 200);
        const body = (await res.json()) as { md_results: string; data_info: { num_pages: number } };
        assert.equal(body.md_results, SCANNED_PDF.text);
        assert.ok(body.md_results.includes(SCANNED_PDF.marker));
        assert.equal(body.data_info.num_pages, 1);
      }
    });

    it('reads an RGB PNG and a different scale too', async () => {
      const text = 'RGB scan MG-RGB-0001\nsecond line (2x)';
      const gray = renderText(text, { scale: 2 });
      const rgb = new Uint8Array(gray.width * gray.height * 3);
      gray.pixels.forEach((v, i) => rgb.set([v, Math.min(255, v + 3), v], i * 3));
      const res = await ocr(`data:image/png;base64,${encodePng(gray.width, gray.height, rgb).toString('base64')}`);
      assert.equal(((await res.json()) as Json).md_results, text);
    });

    it('honours start_page_id / end_page_id on a multi-page scan', async () => {
      const pdf = scannedPdf(`first page MG-P1${PAGE_BREAK}second page MG-P2${PAGE_BREAK}third page MG-P3`);
      const res = await ocr(pdf.toString('base64'), { start_page_id: 2, end_page_id: 3 });
      const body = (await res.json()) as {
        md_results: string;
        layout_details: unknown[];
        data_info: { num_pages: number; pages: unknown[] };
      };
      assert.equal(body.md_results, 'second page MG-P2\n\nthird page MG-P3');
      assert.equal(body.data_info.num_pages, 3);
      assert.equal(body.data_info.pages.length, 2);
      assert.equal(body.layout_details.length, 2);
    });

    it('refuses an internet URL with 400 / 1214 but reads a file hosted on the double itself', async () => {
      const before = quotaUnits(DEMO_KEY);
      const outside = await ocr('https://cdn.example.com/scan.png');
      assert.equal(outside.status, 400);
      assert.equal(((await outside.json()) as { error: { code: string } }).error.code, '1214');
      assert.equal(quotaUnits(DEMO_KEY), before);

      const url = gw.hostFile('/uploads/scan.png', scanPngBytes(), 'image/png');
      const inside = await ocr(url);
      assert.equal(inside.status, 200);
      assert.ok(String(((await inside.json()) as Json).md_results).includes(SCAN_PNG.marker));
    });

    it('checks model, base64 and the 10 MB image limit', async () => {
      const wrongModel = await postJson(`${GLM_ROOT}/layout_parsing`, {
        model: 'glm-4v',
        file: scanPngBytes().toString('base64'),
      });
      assert.equal(wrongModel.status, 400);
      assert.equal(((await wrongModel.json()) as { error: { code: string } }).error.code, '1211');

      const garbage = await ocr('this is not base64!');
      assert.equal(((await garbage.json()) as { error: { code: string } }).error.code, '1214');

      const huge = Buffer.alloc(10 * 1024 * 1024 + 1);
      scanPngBytes().copy(huge);
      const tooBig = await ocr(huge.toString('base64'));
      assert.equal(tooBig.status, 400);
      assert.match(((await tooBig.json()) as { error: { message: string } }).error.message, /10MB/);
    });
  });

  describe('GLM web search and reader', () => {
    const search = (body: Json, key = DEMO_KEY) =>
      postJson(`${GLM_ROOT}/web_search`, { search_engine: 'search_std', ...body }, key);

    it('returns count deterministic results derived from the query', async () => {
      const before = quotaUnits(DEMO_KEY);
      const res = await search({ search_query: 'harbor logistics Q3 report', count: 3 });
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        id: string;
        created: number;
        request_id: string;
        search_intent: unknown[];
        search_result: Array<Record<string, string>>;
      };
      assert.equal(body.search_result.length, 3);
      assert.deepEqual(body.search_intent, []);
      for (const [i, item] of body.search_result.entries()) {
        assert.deepEqual(Object.keys(item), ['title', 'content', 'link', 'media', 'icon', 'refer', 'publish_date']);
        assert.match(item.link ?? '', /^https:\/\/[a-z.]*example\.(com|org|net)\//);
        assert.match(item.icon ?? '', /^https:\/\//);
        assert.equal(item.refer, `ref_${i + 1}`);
        assert.match(item.publish_date ?? '', /^\d{4}-\d{2}-\d{2}$/);
        assert.ok((item.title ?? '').includes('harbor logistics Q3 report'));
      }
      assert.equal(before - quotaUnits(DEMO_KEY), PRICE_QUOTA);

      const again = (await (await search({ search_query: 'harbor logistics Q3 report', count: 3 })).json()) as {
        search_result: unknown[];
      };
      assert.deepEqual(again.search_result, body.search_result);
      const other = (await (await search({ search_query: 'something else', count: 3 })).json()) as {
        search_result: unknown[];
      };
      assert.notDeepEqual(other.search_result, body.search_result);

      const defaults = (await (await search({ search_query: 'default count' })).json()) as { search_result: unknown[] };
      assert.equal(defaults.search_result.length, 10);
    });

    it('answers search_intent with the analysed query', async () => {
      const body = (await (
        await search({ search_query: 'what is the Rotterdam hub dwell time', search_intent: true })
      ).json()) as {
        search_intent: Array<{ query: string; intent: string; keywords: string }>;
      };
      assert.equal(body.search_intent.length, 1);
      assert.equal(body.search_intent[0]?.intent, 'SEARCH_ALL');
      assert.equal(body.search_intent[0]?.query, 'what is the Rotterdam hub dwell time');
      assert.match(body.search_intent[0]?.keywords ?? '', /Rotterdam/);
    });

    it('requires search_query of at most 70 characters and search_engine', async () => {
      assert.equal((await search({ search_query: 'x'.repeat(70) })).status, 200);
      const long = await search({ search_query: 'x'.repeat(71) });
      assert.equal(long.status, 400);
      assert.equal(((await long.json()) as { error: { code: string } }).error.code, '1214');
      const noEngine = await postJson(`${GLM_ROOT}/web_search`, { search_query: 'a' });
      assert.equal(noEngine.status, 400);
      assert.deepEqual(await noEngine.json(), { error: { code: '1213', message: '未正常接收到search_engine参数。' } });
      assert.equal((await search({ search_query: 'a', count: 0 })).status, 400);
    });

    it('reads a URL into reader_result with markdown derived from it', async () => {
      const url = 'https://www.example.com/guides/container-dwell-time';
      const res = await postJson(`${GLM_ROOT}/reader`, { url });
      assert.equal(res.status, 200);
      const body = (await res.json()) as {
        reader_result: { content: string; title: string; url: string; description: string };
      };
      assert.equal(body.reader_result.url, url);
      assert.match(body.reader_result.content, /^# Container Dwell Time\n/);
      assert.match(body.reader_result.content, /\n## Details\n/);
      assert.match(body.reader_result.content, /\]\(https:\/\/www\.example\.com\//);
      assert.match(body.reader_result.title, /Container Dwell Time/);
      const again = (await (await postJson(`${GLM_ROOT}/reader`, { url })).json()) as { reader_result: unknown };
      assert.deepEqual(again.reader_result, body.reader_result);

      const invalid = await postJson(`${GLM_ROOT}/reader`, { url: 'not a url' });
      assert.equal(invalid.status, 400);
      assert.equal(((await invalid.json()) as { error: { code: string } }).error.code, '1214');
    });

    it('answers a key without balance with 1113 and HTTP 429 on every GLM tool', async () => {
      const calls = [
        () => parse(textPdfBytes(), {}, 'a.pdf', GLM_NO_BALANCE_KEY),
        () => postJson(`${GLM_ROOT}/layout_parsing`, { model: 'glm-ocr', file: 'AAAA' }, GLM_NO_BALANCE_KEY),
        () => search({ search_query: 'a' }, GLM_NO_BALANCE_KEY),
        () => postJson(`${GLM_ROOT}/reader`, { url: 'https://example.com/' }, GLM_NO_BALANCE_KEY),
      ];
      for (const send of calls) {
        const res = await send();
        assert.equal(res.status, 429);
        assert.deepEqual(await res.json(), GLM_BALANCE_BODY);
      }
    });

    it('charges until the quota cannot pay for another call, then answers 1113 / 429', async () => {
      gw.setQuota(DEMO_KEY, 0.15);
      assert.equal((await search({ search_query: 'first' })).status, 200);
      const second = await search({ search_query: 'second' });
      assert.equal(second.status, 429);
      assert.deepEqual(await second.json(), GLM_BALANCE_BODY);
      assert.ok(Math.abs((gw.quota(DEMO_KEY).userUsd ?? 0) - 0.05) < 1e-9);
    });
  });

  describe('Kimi files', () => {
    it('uploads for file-extract, then lists, retrieves, reads and deletes, billing the upload only', async () => {
      const pdf = textPdfBytes();
      const before = quotaUnits(DEMO_KEY);
      const res = await upload(pdf, 'quarterly-report.pdf');
      assert.equal(res.status, 200);
      const file = (await res.json()) as Json;
      assert.deepEqual(Object.keys(file), [
        'id',
        'object',
        'bytes',
        'created_at',
        'filename',
        'purpose',
        'status',
        'status_details',
      ]);
      assert.match(String(file.id), /^c[a-z0-9]{19}$/);
      assert.equal(file.object, 'file');
      assert.equal(file.bytes, pdf.length);
      assert.equal(file.filename, 'quarterly-report.pdf');
      assert.equal(file.purpose, 'file-extract');
      assert.equal(file.status, 'ok');
      assert.equal(file.status_details, '');
      assert.equal(typeof file.created_at, 'number');
      const afterUpload = quotaUnits(DEMO_KEY);
      assert.equal(before - afterUpload, PRICE_QUOTA);

      const id = String(file.id);
      const list = (await (await call('GET', `${KIMI_ROOT}/files`)).json()) as { object: string; data: Json[] };
      assert.equal(list.object, 'list');
      assert.deepEqual(list.data, [file]);
      assert.deepEqual(await (await call('GET', `${KIMI_ROOT}/files/${id}`)).json(), file);

      const content = await call('GET', `${KIMI_ROOT}/files/${id}/content`);
      assert.equal(content.status, 200);
      assert.match(content.headers.get('content-type') ?? '', /^application\/json/);
      const text = await content.text();
      const parsed = JSON.parse(text) as Json;
      assert.deepEqual(Object.keys(parsed), ['content', 'file_type', 'filename', 'title', 'type']);
      assert.deepEqual(parsed, {
        content: TEXT_PDF.text,
        file_type: 'application/pdf',
        filename: 'quarterly-report.pdf',
        title: '',
        type: 'file',
      });
      assert.ok(text.includes(TEXT_PDF.marker));

      assert.deepEqual(
        gw.kimiFiles(DEMO_KEY).map((f) => [f.id, f.content]),
        [[id, TEXT_PDF.text]],
      );

      const deleted = await call('DELETE', `${KIMI_ROOT}/files/${id}`);
      assert.deepEqual(await deleted.json(), { id, object: 'file', deleted: true });
      assert.equal((await call('GET', `${KIMI_ROOT}/files/${id}`)).status, 404);
      assert.deepEqual(gw.kimiFiles(DEMO_KEY), []);
      assert.equal(quotaUnits(DEMO_KEY), afterUpload, 'list, retrieve, content and delete are free');

      const kimiEntries = gw.log.filter((e) => e.path.startsWith(KIMI_ROOT));
      assert.deepEqual(
        kimiEntries.map((e) => [e.method, e.status, e.tool?.chargedQuota]),
        [
          ['POST', 200, PRICE_QUOTA],
          ['GET', 200, 0],
          ['GET', 200, 0],
          ['GET', 200, 0],
          ['DELETE', 200, 0],
          ['GET', 404, 0],
        ],
      );
      assert.ok(kimiEntries.every((e) => e.origin === 'gateway' && e.requestId && e.tool?.provider === 'kimi'));
      assert.equal(kimiEntries[0]?.tool?.fileId, id);
    });

    it('keeps files to the key that uploaded them: another key gets 404', async () => {
      const file = (await (await upload(Buffer.from(NOTES_MD.text), 'notes.md')).json()) as { id: string };
      for (const [method, path] of [
        ['GET', `${KIMI_ROOT}/files/${file.id}`],
        ['GET', `${KIMI_ROOT}/files/${file.id}/content`],
        ['DELETE', `${KIMI_ROOT}/files/${file.id}`],
      ] as const) {
        const res = await call(method, path, VIP_KEY);
        assert.equal(res.status, 404, `${method} ${path}`);
        const body = (await res.json()) as { error: { type: string; message: string } };
        assert.equal(body.error.type, 'resource_not_found_error');
      }
      assert.deepEqual(
        ((await (await call('GET', `${KIMI_ROOT}/files`, VIP_KEY)).json()) as { data: unknown[] }).data,
        [],
      );
      assert.equal(gw.kimiFiles(VIP_KEY).length, 0);
      // still there for its owner, as markdown text
      const content = JSON.parse(await (await call('GET', `${KIMI_ROOT}/files/${file.id}/content`)).text()) as Json;
      assert.equal(content.content, NOTES_MD.text);
      assert.equal(content.file_type, 'text/markdown');
    });

    it("accepts only purpose 'file-extract'", async () => {
      for (const purpose of ['assistants', 'image', '']) {
        const res = await upload(Buffer.from('hello'), 'a.txt', purpose);
        assert.equal(res.status, 400);
        assert.deepEqual(await res.json(), {
          error: { type: 'invalid_request_error', message: "Invalid purpose: only 'file-extract' accepted" },
        });
      }
      assert.deepEqual(gw.kimiFiles(DEMO_KEY), []);
    });

    it('refuses empty files and images', async () => {
      const before = quotaUnits(DEMO_KEY);
      const empty = await upload(new Uint8Array(0), 'empty.pdf');
      assert.equal(empty.status, 400);
      assert.match(((await empty.json()) as { error: { message: string } }).error.message, /File size is zero/);

      const images: Array<[string, Uint8Array]> = [
        ['scan.png', scanPngBytes()],
        ['photo.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46])],
        ['anim.gif', Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1')],
        ['pic.webp', Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1')],
      ];
      for (const [name, data] of images) {
        const res = await upload(data, name);
        assert.equal(res.status, 400, name);
        const body = (await res.json()) as { error: { type: string; message: string } };
        assert.equal(body.error.type, 'invalid_request_error');
        assert.match(body.error.message, /images are not file-extract documents/);
      }
      assert.deepEqual(gw.kimiFiles(DEMO_KEY), []);
      assert.equal(quotaUnits(DEMO_KEY), before);
    });

    it('stores a scan with empty content: upload success is not extraction', async () => {
      const file = (await (await upload(scannedPdfBytes(), 'scanned-letter.pdf')).json()) as {
        id: string;
        status: string;
      };
      assert.equal(file.status, 'ok');
      const content = JSON.parse(await (await call('GET', `${KIMI_ROOT}/files/${file.id}/content`)).text()) as Json;
      assert.equal(content.content, '');
    });

    it('refuses 20 MiB + 1 byte counting the form with 413 and stores a form of exactly 20 MiB', async () => {
      const fields = { purpose: 'file-extract' };
      const head = Buffer.from('plain text head\n');
      const over = await postForm(
        `${KIMI_ROOT}/files`,
        await formOfSize(TOOL_LIMIT_BYTES + 1, fields, head, 'big.txt'),
      );
      assert.equal(over.status, 413);
      const body = (await over.json()) as { error: { type: string; message: string } };
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /20 MiB/);
      assert.deepEqual(gw.kimiFiles(DEMO_KEY), []);

      const at = await postForm(`${KIMI_ROOT}/files`, await formOfSize(TOOL_LIMIT_BYTES, fields, head, 'big.txt'));
      assert.equal(at.status, 200);
      assert.equal(gw.kimiFiles(DEMO_KEY).length, 1);
    });

    it('counts a body without Content-Length as it arrives and stops keeping it past 20 MiB', async () => {
      const chunk = new Uint8Array(256 * 1024).fill(0x61);
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= TOOL_LIMIT_BYTES + 4 * chunk.length) return controller.close();
          sent += chunk.length;
          controller.enqueue(chunk);
        },
      });
      const init = {
        method: 'POST',
        headers: { ...auth(DEMO_KEY), 'Content-Type': 'multipart/form-data; boundary=streamed' },
        body: stream,
        duplex: 'half',
      };
      const res = await fetch(`${gw.url}${KIMI_ROOT}/files`, init as RequestInit);
      assert.equal(res.status, 413);
      await res.arrayBuffer();
      const entry = lastEntry(`${KIMI_ROOT}/files`);
      assert.equal(entry.headers['content-length'], undefined);
      assert.ok(
        entry.bodyBytes > TOOL_LIMIT_BYTES && entry.bodyBytes <= TOOL_LIMIT_BYTES + chunk.length,
        `read ${entry.bodyBytes}`,
      );
    });

    it("answers a key without balance in Kimi's shape, yet lets it list its files", async () => {
      const res = await upload(Buffer.from('x'), 'a.txt', 'file-extract', GLM_NO_BALANCE_KEY);
      assert.equal(res.status, 429);
      assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'exceeded_current_quota_error');
      assert.equal((await call('GET', `${KIMI_ROOT}/files`, GLM_NO_BALANCE_KEY)).status, 200);
    });
  });

  describe('Kimi tools', () => {
    it('answers search and search_pro with 403 (upstream account blocked), unbilled', async () => {
      const before = quotaUnits(DEMO_KEY);
      for (const tool of ['search', 'search_pro']) {
        const res = await postJson(`${KIMI_ROOT}/tools/${tool}`, { text_query: 'harbor logistics', limit: 5 });
        assert.equal(res.status, 403);
        const body = (await res.json()) as { error: { type: string; message: string } };
        assert.equal(body.error.type, 'permission_denied_error');
        assert.match(body.error.message, /blocked/);
      }
      assert.equal(quotaUnits(DEMO_KEY), before);
      assert.equal(
        (await postJson(`${KIMI_ROOT}/tools/search`, {}, 'sk-unknown')).status,
        401,
        'the key is still checked first',
      );
    });

    it('fetches a page as plain markdown derived from the URL, billed per call', async () => {
      const before = quotaUnits(DEMO_KEY);
      const url = 'https://docs.example.net/manual/conveyor-maintenance';
      const res = await postJson(`${KIMI_ROOT}/tools/fetch`, { url });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/markdown/);
      const markdown = await res.text();
      assert.match(markdown, /^# Conveyor Maintenance\n/);
      assert.ok(markdown.includes(url));
      assert.equal(await (await postJson(`${KIMI_ROOT}/tools/fetch`, { url })).text(), markdown);
      assert.notEqual(
        await (await postJson(`${KIMI_ROOT}/tools/fetch`, { url: 'https://example.org/other' })).text(),
        markdown,
      );
      assert.equal(before - quotaUnits(DEMO_KEY), 3 * PRICE_QUOTA);

      const invalid = await postJson(`${KIMI_ROOT}/tools/fetch`, { url: 'ftp://example.com/x' });
      assert.equal(invalid.status, 400);
      assert.equal(((await invalid.json()) as { error: { type: string } }).error.type, 'invalid_request_error');
    });
  });

  describe('building blocks', () => {
    it('parses multipart bodies the same however they are split', async () => {
      const fd = form(
        { purpose: 'file-extract', note: 'naïve "quoted"' },
        { data: Buffer.from('line 1\r\n--not-a-boundary\r\nline 3'), name: 'résumé "v2".txt', type: 'text/plain' },
      );
      const req = new Request('http://x/', { method: 'POST', body: fd });
      const boundary = /boundary=(.+)$/.exec(req.headers.get('content-type') ?? '')?.[1] ?? '';
      const body = Buffer.from(await req.arrayBuffer());
      const whole = parseMultipart(body, boundary);
      assert.deepEqual(
        whole.map((p) => [p.name, p.filename, p.data.toString('utf8')]),
        [
          ['purpose', undefined, 'file-extract'],
          ['note', undefined, 'naïve "quoted"'],
          ['file', 'résumé "v2".txt', 'line 1\r\n--not-a-boundary\r\nline 3'],
        ],
      );
      for (const size of [1, 2, 3, 7, 13, 64, 100])
        assert.deepEqual(parseMultipart(body, boundary, size), whole, `chunks of ${size}`);
      // A preamble (RFC 2046 §5.1.1) is skipped, even one that starts like the opening delimiter.
      const withPreamble = Buffer.concat([Buffer.from(`--${boundary.slice(0, 5)} is not it\r\n`), body]);
      for (const size of [1, 4, 64, withPreamble.length])
        assert.deepEqual(parseMultipart(withPreamble, boundary, size), whole, `preamble, chunks of ${size}`);
      assert.throws(() => parseMultipart(body.subarray(0, body.length - 10), boundary), /closing boundary/);
    });

    it('recognises renderText output at several scales and reads nothing from a photo', () => {
      const text = 'Scale test {1} [2] (3)\n  indented ~ _ |\n\nqypgj, done.';
      for (const scale of [1, 2, 4]) assert.equal(recognise(renderText(text, { scale })).text, text, `scale ${scale}`);
      const photo = {
        width: 64,
        height: 64,
        pixels: Uint8Array.from({ length: 64 * 64 }, (_, i) => ((i * 37) % 251) % 256),
      };
      assert.equal(recognise(photo).text, '');
    });
  });
});
