import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isGatewayError } from '../../src/core/errors';
import { multipartFromFile } from '../../src/core/tools/multipart';
import { ocrFile, parsePdf, readPage, UPLOAD_LIMIT_BYTES, webSearch } from '../../src/core/tools/glm';
import { fileContent, kimiFetch, kimiSearch, uploadForExtract } from '../../src/core/tools/kimi';
import { citation, resultsMarkdown } from '../../src/core/tools/searchResult';
import { DEMO_KEY, GatewayDouble, GLM_NO_BALANCE_KEY, VIP_KEY } from '../gateway';
import { SAMPLE_FILES, ensureSampleWorkspace } from '../fixtures/samples';
import { clientFor } from '../support/client';
import { withOpened } from '../support/openedFiles';

const sample = (kind: string) => {
  const found = SAMPLE_FILES.find((s) => s.name === kind);
  assert.ok(found, kind);
  return found;
};

describe('document and web tools against the double', function () {
  let gw: GatewayDouble;
  let dir: string;

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    dir = mkdtempSync(path.join(os.tmpdir(), 'tools-'));
    await ensureSampleWorkspace(dir);
  });
  after(async () => {
    await gw.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => gw.clearLog());

  it('parses a text PDF and returns exactly its text, streaming the file as multipart', async () => {
    const pdf = sample('quarterly-report.pdf');
    const result = await withOpened(path.join(dir, pdf.name), (f) => parsePdf(clientFor(gw.url, DEMO_KEY).http, f));
    assert.equal(result.empty, false);
    assert.ok(result.content.includes(pdf.marker), result.content.slice(0, 200));
    const entry = gw.log.find((e) => e.path.endsWith('/files/parser/sync'));
    assert.match(entry?.headers['content-type'] ?? '', /^multipart\/form-data; boundary=/);
    assert.equal(entry?.headers.authorization, `Bearer ${DEMO_KEY}`);
  });

  it('reports an empty parse of a scan so that OCR can be offered', async () => {
    const result = await withOpened(path.join(dir, 'scanned-letter.pdf'), (f) =>
      parsePdf(clientFor(gw.url, DEMO_KEY).http, f),
    );
    assert.deepEqual({ empty: result.empty, content: result.content }, { empty: true, content: '' });
  });

  it('reads a scan with OCR, from a PNG and from a scanned PDF', async () => {
    const http = clientFor(gw.url, DEMO_KEY).http;
    for (const name of ['scan.png', 'scanned-letter.pdf']) {
      const s = sample(name);
      const result = await withOpened(path.join(dir, name), (f) => ocrFile(http, f));
      assert.ok(result.markdown.includes(s.marker), `${name}: ${result.markdown.slice(0, 200)}`);
    }
  });

  it('refuses a file over 20 MiB, counting the form, before sending anything', async () => {
    const big = path.join(dir, 'big.pdf');
    writeFileSync(big, '');
    truncateSync(big, UPLOAD_LIMIT_BYTES - 100);
    const form = await withOpened(big, async (file) =>
      multipartFromFile({ tool_type: 'prime-sync', file_type: 'PDF' }, { name: 'file', file }),
    );
    assert.ok(form.length > UPLOAD_LIMIT_BYTES, 'the form pushes it over');
    await assert.rejects(
      withOpened(big, (f) => parsePdf(clientFor(gw.url, DEMO_KEY).http, f)),
      (e: unknown) =>
        isGatewayError(e, 'tooLarge') &&
        /would be 20 MiB \(20,97\d,\d{3} bytes/.test(e.message) &&
        /limit is 20 MiB \(20,971,520 bytes\)/.test(e.message),
    );
    await assert.rejects(
      withOpened(big, (f) => uploadForExtract(clientFor(gw.url, DEMO_KEY).http, undefined, f)),
      (e: unknown) => isGatewayError(e, 'tooLarge'),
    );
    assert.equal(gw.log.length, 0, 'nothing was sent');
    rmSync(big);
  });

  it('computes the multipart length exactly', async () => {
    const file = path.join(dir, 'notes.md');
    const [length, promised] = await withOpened(file, async (opened) => {
      const form = multipartFromFile({ purpose: 'file-extract' }, { name: 'file', file: opened });
      let n = 0;
      for await (const c of form.chunks()) n += c.length;
      return [n, form.length];
    });
    assert.equal(length, promised);
  });

  it('uploads for extraction and reads the content back; files belong to their key', async () => {
    const pdf = sample('quarterly-report.pdf');
    const http = clientFor(gw.url, DEMO_KEY).http;
    const file = await withOpened(path.join(dir, pdf.name), (f) => uploadForExtract(http, undefined, f));
    assert.equal(file.filename, pdf.name);
    assert.ok((await fileContent(http, undefined, file.id)).includes(pdf.marker));
    await assert.rejects(
      fileContent(clientFor(gw.url, VIP_KEY).http, undefined, file.id),
      (e: unknown) => isGatewayError(e) && e.status === 404,
    );
  });

  it('refuses images for extraction with a pointer to chat image input, sending nothing', async () => {
    await assert.rejects(
      withOpened(path.join(dir, 'scan.png'), (f) => uploadForExtract(clientFor(gw.url, DEMO_KEY).http, undefined, f)),
      (e: unknown) => isGatewayError(e, 'badRequest') && /Ask about this image/.test(e.message),
    );
    assert.equal(gw.log.length, 0);
  });

  it('searches with the first provider and shapes results and citations', async () => {
    const results = await webSearch(clientFor(gw.url, DEMO_KEY).http, 'vs code extensions', {
      engine: 'search_std',
      count: 3,
      intent: false,
    });
    assert.equal(results.length, 3);
    assert.ok(results.every((r) => r.title && r.url.startsWith('https://')));
    const body = JSON.parse(gw.log[0]?.bodyText ?? '{}');
    assert.deepEqual(body, {
      search_query: 'vs code extensions',
      search_engine: 'search_std',
      search_intent: false,
      count: 3,
    });
    assert.match(citation(results[0]!), /^\[[^\]]+\]\(https:\/\/[^)]+\)/);
    assert.match(resultsMarkdown('vs code extensions', 'the first provider', results), /^# Search: vs code extensions/);
    await assert.rejects(
      webSearch(clientFor(gw.url, DEMO_KEY).http, 'x'.repeat(71), { engine: 'search_std', count: 3, intent: false }),
      /at most 70 characters/,
    );
  });

  it("reports the second provider's blocked search as upstreamBlocked", async () => {
    await assert.rejects(
      kimiSearch(clientFor(gw.url, DEMO_KEY).http, 'news', 5, false),
      (e: unknown) => isGatewayError(e, 'upstreamBlocked') && /blocked/.test(e.message),
    );
  });

  it('reads a page with the reader and with fetch', async () => {
    const http = clientFor(gw.url, DEMO_KEY).http;
    const page = await readPage(http, 'https://example.com/article');
    assert.ok(page.markdown.length > 20);
    const fetched = await kimiFetch(http, 'https://example.com/article');
    assert.ok(fetched.markdown.length > 20);
    await assert.rejects(readPage(http, 'not a url'), /not a web address/);
  });

  it('maps the first provider balance error (1113, HTTP 429) to upstreamBalance', async () => {
    await assert.rejects(
      withOpened(path.join(dir, 'quarterly-report.pdf'), (f) =>
        parsePdf(clientFor(gw.url, GLM_NO_BALANCE_KEY).http, f),
      ),
      (e: unknown) => isGatewayError(e, 'upstreamBalance') && e.status === 429 && e.code === '1113',
    );
  });

  it('aborts an upload at once when cancelled', async () => {
    gw.inject({ match: { path: /files\/parser\/sync/ }, action: { type: 'stall' } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(
      withOpened(path.join(dir, 'quarterly-report.pdf'), (f) =>
        parsePdf(clientFor(gw.url, DEMO_KEY).http, f, controller.signal),
      ),
      (e: unknown) => isGatewayError(e, 'cancelled'),
    );
    gw.clearFaults();
  });
});
