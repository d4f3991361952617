import { readableText } from '../../src/core/tools/readableText';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ensureSampleWorkspace, sampleFile } from '../fixtures/samples';
import {
  DEFAULT_TOOL_PRICE_USD,
  DEMO_KEY,
  GatewayDouble,
  GLM_NO_BALANCE_KEY,
  GLM_ROOT,
  KIMI_ROOT,
  TOOL_LIMIT_BYTES,
  VIP_KEY,
  type RequestLogEntry,
} from '../gateway';
import { QUOTA_PER_USD } from '../gateway/world';
import { closeEditorsDiscarding, documentByUri, run, setSetting, settleWhileClosingQuickInput } from './support';

/** What the tool commands return (README, Commands; src/host/commands/tools.ts). */
interface Failure {
  error: string;
  kind?: string;
}
interface ParseResult {
  content: string;
  document?: string;
  empty: boolean;
}
interface OcrResult {
  markdown: string;
  document?: string;
  pages?: number;
}
interface ExtractResult {
  id: string;
  content: string;
  document: string;
}
interface SearchHit {
  title: string;
  url: string;
  site?: string;
  date?: string;
  snippet: string;
}
interface SearchResult {
  results: SearchHit[];
  document?: string;
  inserted?: string;
}
interface PageResult {
  markdown: string;
  title?: string;
  document: string;
}
interface ExtractedFile {
  id: string;
  filename: string;
}

const PRICE_QUOTA = DEFAULT_TOOL_PRICE_USD * QUOTA_PER_USD;

function isFailure(value: unknown): value is Failure {
  return typeof value === 'object' && value !== null && typeof (value as Failure).error === 'string';
}

/** The command's result when it succeeded; a returned `{error}` fails the test with its message. */
function ok<T>(value: T | Failure | undefined, what: string): T {
  assert.ok(value !== undefined, `${what} returned nothing`);
  assert.ok(!isFailure(value), `${what} failed: ${isFailure(value) ? value.error : ''}`);
  return value as T;
}

function failed(value: unknown, what: string): Failure {
  assert.ok(isFailure(value), `${what} was expected to fail but returned ${JSON.stringify(value)?.slice(0, 300)}`);
  return value;
}

describe('Document and web tools in a real extension host', function () {
  let gw: GatewayDouble;
  let dir: string;
  let confirmBefore: boolean | undefined;
  /** Index into gw.log where the running test's requests begin; the whole run's log stays for the key check. */
  let since = 0;
  const requests = (): RequestLogEntry[] => gw.log.slice(since);
  const toolCalls = (): RequestLogEntry[] => requests().filter((e) => e.path.startsWith('/providers/'));
  const file = (name: string) => vscode.Uri.file(path.join(dir, name));
  const marker = (name: string) => sampleFile(name).marker;

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mg-tools-'));
    await ensureSampleWorkspace(dir);
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    // As a user who chose "Continue and Don't Ask Again": no modal notice stands in the way.
    confirmBefore = vscode.workspace
      .getConfiguration('modelGateway.tools')
      .inspect<boolean>('confirmBilledCalls')?.globalValue;
    await setSetting('tools.confirmBilledCalls', false);
    await run('setApiKey', DEMO_KEY);
  });
  after(async () => {
    await closeEditorsDiscarding();
    await setSetting('tools.confirmBilledCalls', confirmBefore);
    await run('clearApiKey', { all: true });
    await gw.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    gw.clearFaults();
    since = gw.log.length;
  });

  it('parses a text PDF given as a URI into its exact text, shown as a Markdown document', async () => {
    const sample = sampleFile('quarterly-report.pdf');
    const result = ok(await run<ParseResult | Failure>('parsePdf', file(sample.name)), 'parsePdf');
    assert.equal(result.content, sample.text, 'the PDF text, exactly');
    assert.ok(result.content.includes(sample.marker));
    assert.equal(result.empty, false);
    assert.ok(result.document, 'a document uri is returned');
    const doc = documentByUri(result.document);
    assert.ok(doc, `the document ${result.document} is open`);
    assert.equal(doc.getText(), readableText(result.content));
    assert.equal(doc.languageId, 'markdown');
    const calls = toolCalls();
    assert.deepEqual(
      calls.map((e) => `${e.method} ${e.path} ${e.status}`),
      [`POST ${GLM_ROOT}/files/parser/sync 200`],
    );
    assert.match(calls[0]?.headers['content-type'] ?? '', /^multipart\/form-data; boundary=/);
  });

  it('parses a scanned PDF into nothing and says so: {content: "", empty: true}', async () => {
    const result = await run<ParseResult | Failure>('parsePdf', file('scanned-letter.pdf'));
    assert.deepEqual(result, { content: '', empty: true });
    assert.equal(toolCalls().length, 1);
  });

  it('reads the scanned image and the scanned PDF with OCR (layout parsing)', async () => {
    for (const name of ['scan.png', 'scanned-letter.pdf']) {
      const result = ok(await run<OcrResult | Failure>('ocrFile', file(name)), `ocrFile ${name}`);
      assert.ok(
        result.markdown.includes(marker(name)),
        `the OCR of ${name} holds ${marker(name)}: ${result.markdown.slice(0, 200)}`,
      );
      assert.equal(result.pages, 1);
      assert.ok(result.document);
      assert.equal(documentByUri(result.document)?.getText(), readableText(result.markdown));
    }
    const calls = toolCalls();
    assert.deepEqual(
      calls.map((e) => `${e.method} ${e.path} ${e.status}`),
      [`POST ${GLM_ROOT}/layout_parsing 200`, `POST ${GLM_ROOT}/layout_parsing 200`],
    );
    assert.match(calls[0]?.bodyText ?? '', /"model":"glm-ocr"/);
  });

  it('extracts with the second provider: the file belongs to this key, other keys get 404, reading is free', async () => {
    const sample = sampleFile('quarterly-report.pdf');
    const result = ok(await run<ExtractResult | Failure>('extractFile', file(sample.name)), 'extractFile');
    assert.match(result.id, /^c[a-v0-9]{19}$/);
    assert.ok(result.content.includes(sample.marker));
    assert.equal(documentByUri(result.document)?.getText(), readableText(result.content));

    const stored = gw.kimiFiles(DEMO_KEY);
    const mine = stored.find((f) => f.id === result.id);
    assert.ok(mine, `the double keeps ${result.id} under the demo key (has ${stored.map((f) => f.id).join(', ')})`);
    assert.equal(mine.filename, sample.name);
    assert.equal(mine.purpose, 'file-extract');
    assert.ok(!gw.kimiFiles(VIP_KEY).some((f) => f.id === result.id));
    const other = await fetch(`${gw.url}${KIMI_ROOT}/files/${result.id}/content`, {
      headers: { authorization: `Bearer ${VIP_KEY}` },
    });
    assert.equal(other.status, 404, 'another key cannot read the file');
    await other.body?.cancel();

    const calls = toolCalls().filter((e) => e.headers.authorization === `Bearer ${DEMO_KEY}`);
    assert.deepEqual(
      calls.map((e) => `${e.method} ${e.path} ${e.status} ${e.tool?.chargedQuota}`),
      [`POST ${KIMI_ROOT}/files 200 ${PRICE_QUOTA}`, `GET ${KIMI_ROOT}/files/${result.id}/content 200 0`],
    );
  });

  it("remembers the extracted files per key: the list is this key's, another key has none", async () => {
    const extracted = ok(await run<ExtractResult | Failure>('extractFile', file('notes.md')), 'extractFile notes.md');
    assert.ok(extracted.content.includes(marker('notes.md')));
    // Without a pick the command shows its quick pick and returns the list once it is closed.
    const listed = await settleWhileClosingQuickInput(run<ExtractedFile[] | Failure>('showExtractedFiles'));
    assert.ok(Array.isArray(listed), JSON.stringify(listed));
    assert.equal(listed[0]?.id, extracted.id, 'the newest file comes first');
    assert.ok(listed.some((f) => f.filename === 'notes.md'));
    try {
      await run('setApiKey', VIP_KEY);
      assert.deepEqual(await run('showExtractedFiles'), [], "another key's list is empty");
    } finally {
      await run('setApiKey', DEMO_KEY);
    }
  });

  it('refuses an image for extraction with a pointer to chat image input, and uploads nothing', async () => {
    const result = failed(await run('extractFile', file('scan.png')), 'extractFile scan.png');
    assert.match(result.error, /is an image/);
    assert.match(result.error, /image input/);
    assert.equal(result.kind, 'badRequest');
    assert.deepEqual(toolCalls(), [], 'nothing reached the second provider');
    assert.ok(!gw.kimiFiles(DEMO_KEY).some((f) => f.filename === 'scan.png'));
  });

  it('refuses a file over 20 MiB before sending anything, with its actual size, counting the form', async () => {
    const big = path.join(dir, 'big.pdf');
    const edge = path.join(dir, 'edge.pdf');
    // Sparse files: the size is on disk in an instant and nothing is written.
    await fs.writeFile(big, '');
    await fs.truncate(big, 21 * 1024 * 1024);
    await fs.writeFile(edge, '');
    await fs.truncate(edge, TOOL_LIMIT_BYTES);

    const parsed = failed(await run('parsePdf', vscode.Uri.file(big)), 'parsePdf big.pdf');
    assert.equal(parsed.kind, 'tooLarge');
    assert.match(parsed.error, /big\.pdf/);
    assert.match(parsed.error, /21 MiB/, 'the actual size is in the message');
    assert.match(parsed.error, /20 MiB/);

    // Exactly 20 MiB of file: the form around it makes the request too large.
    const extracted = failed(await run('extractFile', vscode.Uri.file(edge)), 'extractFile edge.pdf');
    assert.equal(extracted.kind, 'tooLarge');
    assert.match(extracted.error, /edge\.pdf/);
    assert.match(extracted.error, /20 MiB of file plus the form/);
    // (A model-list refresh in the background would be a GET; the file goes only in a POST.)
    assert.deepEqual(
      requests()
        .filter((e) => e.method !== 'GET' || e.path.startsWith('/providers/'))
        .map((e) => `${e.method} ${e.path}`),
      [],
      'no request with the file reached the double',
    );
  });

  describe('result tabs', () => {
    // A result shows as its text, or (web search results) as Markdown's preview of it, a webview tab named after the file.
    const resultTabs = (uri: string) => {
      const preview = `Preview ${path.posix.basename(vscode.Uri.parse(uri).path)}`;
      return vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .filter(
          (tab) =>
            (tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === uri) ||
            (tab.input instanceof vscode.TabInputWebview && tab.label === preview),
        ).length;
    };
    // Untitled documents with text (a result shown as an unsaved buffer); the empty one VS Code may
    // open itself once every editor is closed is not a result.
    const untitled = () => vscode.workspace.textDocuments.filter((d) => d.isUntitled && d.getText().length > 0).length;
    const openTabs = () =>
      vscode.window.tabGroups.all
        .map(
          (g) =>
            `${g.viewColumn}: ${g.tabs.map((t) => `${t.label}${t.input instanceof vscode.TabInputText ? ` <${t.input.uri.toString()}>` : ''}`).join(', ')}`,
        )
        .join(' | ');

    it('shows each source in one read-only tab: the same source reuses it, another source gets its own, nothing untitled', async () => {
      // From a clean editor area: what earlier tests left open (in whichever group) is not this test's.
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      const untitledBefore = untitled();
      const pdf = file(sampleFile('quarterly-report.pdf').name);
      const first = ok(await run<ParseResult | Failure>('parsePdf', pdf), 'parsePdf');
      const again = ok(await run<ParseResult | Failure>('parsePdf', pdf), 'parsePdf again');
      assert.ok(first.document && again.document);
      assert.equal(vscode.Uri.parse(first.document).scheme, 'model-gateway-result');
      assert.equal(again.document, first.document, 'the same PDF parsed again shows in the same document');
      assert.equal(resultTabs(first.document), 1, `one tab for the PDF; open tabs: ${openTabs()}`);
      const doc = documentByUri(first.document);
      assert.equal(doc?.getText(), readableText(again.content));
      assert.equal(doc?.languageId, 'markdown');
      assert.equal(doc?.isDirty, false, 'nothing to save on close');

      const ocr = ok(await run<OcrResult | Failure>('ocrFile', pdf), 'ocrFile');
      assert.ok(ocr.document);
      assert.notEqual(ocr.document, first.document, 'another tool on the same file has its own tab');
      const otherScan = ok(await run<OcrResult | Failure>('ocrFile', file('scan.png')), 'ocrFile scan.png');
      assert.ok(otherScan.document);
      assert.notEqual(otherScan.document, ocr.document, 'another file has its own tab');
      assert.equal(documentByUri(otherScan.document)?.getText(), readableText(otherScan.markdown));

      const url = 'https://docs.example.net/guides/port-operations';
      const page = ok(await run<PageResult | Failure>('readWebPage', { url }), 'readWebPage');
      const pageAgain = ok(await run<PageResult | Failure>('readWebPage', { url }), 'readWebPage again');
      assert.equal(pageAgain.document, page.document);
      assert.equal(resultTabs(page.document), 1);

      const search = ok(
        await run<SearchResult | Failure>('searchWeb', { query: 'harbor cranes', action: 'document' }),
        'searchWeb',
      );
      const searchAgain = ok(
        await run<SearchResult | Failure>('searchWeb', { query: 'harbor cranes', action: 'document' }),
        'searchWeb again',
      );
      const otherSearch = ok(
        await run<SearchResult | Failure>('searchWeb', { query: 'harbor tides', action: 'document' }),
        'searchWeb other',
      );
      assert.ok(search.document && otherSearch.document);
      assert.equal(searchAgain.document, search.document);
      assert.notEqual(otherSearch.document, search.document);
      assert.ok(documentByUri(otherSearch.document)?.getText().startsWith('# Search: harbor tides'));
      for (const shown of [first.document, ocr.document, otherScan.document, page.document])
        assert.equal(resultTabs(shown), 1, `${shown}; open tabs: ${openTabs()}`);
      // Search results show in Markdown's preview, which VS Code keeps as one tab that follows the latest document.
      const previews = vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .filter((tab) => tab.input instanceof vscode.TabInputWebview && tab.label.startsWith('Preview Search harbor'));
      assert.equal(previews.length, 1, `one preview for the searches; open tabs: ${openTabs()}`);
      for (const shown of [search.document, otherSearch.document])
        assert.equal(
          vscode.window.tabGroups.all
            .flatMap((g) => g.tabs)
            .filter((tab) => tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === shown).length,
          0,
          'a search result is not also open as text',
        );
      assert.equal(
        untitled(),
        untitledBefore,
        `no untitled document was opened: ${vscode.workspace.textDocuments
          .filter((d) => d.isUntitled)
          .map((d) => `${d.uri.toString()} (${d.languageId}, ${d.getText().slice(0, 40)})`)
          .join('; ')}`,
      );
    });

    it('saves a result next to its source as <name>.md, never over an existing file', async () => {
      const sample = sampleFile('quarterly-report.pdf');
      const result = ok(await run<ParseResult | Failure>('parsePdf', file(sample.name)), 'parsePdf');
      assert.ok(result.document);
      const mine = path.join(dir, 'quarterly-report.md');
      // A file of the user's where the result would go: it must be kept as it is.
      await fs.writeFile(mine, '# My own notes\n');
      const before = new Set(await fs.readdir(dir));
      const saved = ok(
        await run<{ saved: string } | Failure>('saveResult', vscode.Uri.parse(result.document)),
        'saveResult',
      );
      const savedPath = vscode.Uri.parse(saved.saved).fsPath;
      assert.equal(path.dirname(savedPath), dir, 'saved beside the PDF');
      assert.match(path.basename(savedPath), /^quarterly-report_\d+\.md$/);
      assert.ok(!before.has(path.basename(savedPath)), 'a new file');
      assert.equal(await fs.readFile(savedPath, 'utf8'), readableText(sample.text), 'saved as shown');
      assert.equal(await fs.readFile(mine, 'utf8'), '# My own notes\n', 'the existing file is kept');
      // From the palette: the active editor is the result.
      await vscode.window.showTextDocument(vscode.Uri.parse(result.document));
      const second = ok(await run<{ saved: string } | Failure>('saveResult'), 'saveResult from the active editor');
      assert.notEqual(second.saved, saved.saved);
      assert.equal(await fs.readFile(savedPath, 'utf8'), readableText(sample.text), 'the first save is kept');
      assert.equal(await fs.readFile(vscode.Uri.parse(second.saved).fsPath, 'utf8'), readableText(sample.text));
    });

    it('refuses Save and Add to Chat with a clear error when no result is open', async () => {
      await closeEditorsDiscarding();
      assert.match(failed(await run('saveResult'), 'saveResult').error, /No tool result is open/);
      assert.match(
        failed(await run('addResultToChat', vscode.Uri.file(path.join(dir, 'notes.md'))), 'addResultToChat').error,
        /No tool result is open/,
      );
    });

    it('adds a result to the chat as context: the next message carries it', async () => {
      const sample = sampleFile('quarterly-report.pdf');
      const result = ok(await run<ParseResult | Failure>('parsePdf', file(sample.name)), 'parsePdf');
      assert.ok(result.document);
      const added = ok(
        await run<{ label: string; chars: number } | Failure>('addResultToChat'),
        'addResultToChat from the active editor',
      );
      assert.equal(added.label, `Parsed ${sample.name}`);
      assert.equal(added.chars, readableText(sample.text).length);
      await run('refreshModels');
      since = gw.log.length;
      await run('ask', { prompt: 'What is in the report?', withAttachments: true });
      const chatCalls = requests().filter((e) => /^\/v1\/(chat\/completions|responses|messages)\b/.test(e.path));
      assert.equal(
        chatCalls.length,
        1,
        `one chat request was sent: ${requests()
          .map((e) => e.path)
          .join(', ')}`,
      );
      assert.ok(
        chatCalls[0]?.bodyText?.includes(sample.marker),
        `the message carries the parsed text: ${chatCalls[0]?.bodyText?.slice(0, 600)}`,
      );
    });
  });

  it('searches the web and opens the results as a Markdown document', async () => {
    const query = 'harbor logistics quarterly report';
    const result = ok(await run<SearchResult | Failure>('searchWeb', { query, action: 'document' }), 'searchWeb');
    assert.equal(result.results.length, 10, 'modelGateway.tools.searchCount defaults to 10');
    for (const r of result.results) {
      assert.ok(r.title.startsWith(query), r.title);
      assert.match(r.url, /^https:\/\/[\w.-]+\.example\.(com|org|net)\//);
    }
    assert.ok(result.document);
    const text = documentByUri(result.document)?.getText() ?? '';
    assert.ok(text.startsWith(`# Search: ${query}`), text.slice(0, 80));
    for (const r of result.results) assert.ok(text.includes(`(${r.url})`), `the document links ${r.url}`);
    const calls = toolCalls();
    assert.deepEqual(
      calls.map((e) => `${e.method} ${e.path} ${e.status}`),
      [`POST ${GLM_ROOT}/web_search 200`],
    );
    const body = JSON.parse(calls[0]?.bodyText ?? '{}');
    assert.equal(body.search_query, query);
    assert.equal(body.search_engine, 'search_std');
    assert.equal(body.count, 10);
  });

  it("says the second provider's search is blocked upstream (403) and charges nothing", async () => {
    const result = failed(await run('searchWeb', { query: 'anything at all', provider: 'kimi' }), 'searchWeb kimi');
    assert.equal(result.kind, 'upstreamBlocked');
    assert.match(result.error, /blocked upstream/);
    assert.match(result.error, /403/);
    assert.deepEqual(
      toolCalls().map((e) => `${e.method} ${e.path} ${e.status} ${e.tool?.chargedQuota}`),
      [`POST ${KIMI_ROOT}/tools/search 403 0`],
    );
  });

  it('inserts the first result as a Markdown citation at the cursor', async () => {
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: 'Source: ' });
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    const end = doc.positionAt(doc.getText().length);
    editor.selection = new vscode.Selection(end, end);
    const result = ok(
      await run<SearchResult | Failure>('searchWeb', { query: 'rotterdam port dwell time', action: 'insert' }),
      'searchWeb insert',
    );
    const first = result.results[0];
    assert.ok(first && result.inserted);
    const meta = [first.site, first.date].filter(Boolean).join(', ');
    assert.equal(result.inserted, `[${first.title}](${first.url})${meta ? ` (${meta})` : ''}`);
    assert.equal(doc.getText(), `Source: ${result.inserted}`);
    // The scratch document goes unsaved: a dirty untitled buffer left behind would outlive the tests
    // after this one (VS Code keeps it through closeAllEditors) and be counted as theirs.
    await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('reads a web page with the first provider (reader) as Markdown', async () => {
    const url = 'https://docs.example.net/guides/port-operations';
    const result = ok(await run<PageResult | Failure>('readWebPage', { url }), 'readWebPage');
    assert.match(result.markdown, /^# Port Operations\n/);
    assert.ok(result.markdown.includes(`_Source: ${url}_`));
    assert.equal(result.title, 'Port Operations | docs.example.net');
    assert.equal(documentByUri(result.document)?.getText(), readableText(result.markdown));
    const calls = toolCalls();
    assert.deepEqual(
      calls.map((e) => `${e.method} ${e.path} ${e.status}`),
      [`POST ${GLM_ROOT}/reader 200`],
    );
    assert.deepEqual(JSON.parse(calls[0]?.bodyText ?? '{}'), { url, return_format: 'markdown' });
  });

  it('reads a web page with the second provider (tools/fetch) when asked', async () => {
    const url = 'https://www.example.org/topics/fuel-surcharge';
    const result = ok(await run<PageResult | Failure>('readWebPage', { url, provider: 'kimi' }), 'readWebPage kimi');
    assert.match(result.markdown, /^# Fuel Surcharge\n/);
    assert.ok(result.markdown.includes(`_Source: ${url}_`));
    assert.deepEqual(
      toolCalls().map((e) => `${e.method} ${e.path} ${e.status}`),
      [`POST ${KIMI_ROOT}/tools/fetch 200`],
    );
  });

  it("maps the first provider's balance error (1113 as HTTP 429) to upstreamBalance, without retrying", async () => {
    await run('setApiKey', GLM_NO_BALANCE_KEY);
    try {
      const result = failed(await run('parsePdf', file('quarterly-report.pdf')), 'parsePdf without balance');
      assert.equal(result.kind, 'upstreamBalance');
      assert.match(result.error, /1113/);
      assert.match(result.error, /HTTP 429/);
      assert.match(result.error, /not your key's quota/);
      assert.deepEqual(
        toolCalls().map((e) => `${e.path} ${e.status} ${e.tool?.chargedQuota}`),
        [`${GLM_ROOT}/files/parser/sync 429 0`],
        'one request, not retried, not charged',
      );
    } finally {
      await run('setApiKey', DEMO_KEY);
    }
  });

  it('maps 413, a failed parse and an unsupported file type to clear messages', async () => {
    gw.inject({
      match: { path: `${GLM_ROOT}/files/parser/sync` },
      times: 1,
      action: {
        type: 'status',
        status: 413,
        body: JSON.stringify({ error: { code: '1214', message: 'file too large' } }),
      },
    });
    const tooLarge = failed(await run('parsePdf', file('quarterly-report.pdf')), 'parsePdf with a 413');
    assert.equal(tooLarge.kind, 'tooLarge');
    assert.match(tooLarge.error, /20 MiB per request/);

    const broken = path.join(dir, 'broken.pdf');
    await fs.writeFile(broken, '%PDF-1.7\n%%EOF\n');
    const parseFailed = failed(await run('parsePdf', vscode.Uri.file(broken)), 'parsePdf broken.pdf');
    assert.equal(parseFailed.kind, 'badRequest');
    assert.match(parseFailed.error, /could not parse broken\.pdf/);

    const text = path.join(dir, 'plain.txt');
    await fs.writeFile(text, 'not an image\n');
    const unsupported = failed(await run('ocrFile', vscode.Uri.file(text)), 'ocrFile plain.txt');
    assert.equal(unsupported.kind, 'badRequest');
    assert.match(unsupported.error, /OCR takes PDF, PNG or JPEG files, not "\.txt"/);
    assert.deepEqual(
      toolCalls().map((e) => `${e.path} ${e.status} ${e.tool?.chargedQuota ?? '-'}`),
      [`${GLM_ROOT}/files/parser/sync 413 -`, `${GLM_ROOT}/files/parser/sync 200 0`],
      'the unsupported type was refused before sending; failures are not charged',
    );
  });

  it('is charged US$0.10 per billed call, and reading extracted content is free', async () => {
    const before = gw.quota(DEMO_KEY).userUsd ?? NaN;
    ok(await run('parsePdf', file('quarterly-report.pdf')), 'parsePdf');
    ok(await run('ocrFile', file('scan.png')), 'ocrFile');
    ok(await run('searchWeb', { query: 'fuel prices europe' }), 'searchWeb');
    ok(await run('readWebPage', { url: 'https://news.example.com/news/conveyor-outage' }), 'readWebPage');
    ok(await run('extractFile', file('quarterly-report.pdf')), 'extractFile');
    const billed = 5;
    const after = gw.quota(DEMO_KEY).userUsd ?? NaN;
    assert.equal(
      Math.round((before - after) * QUOTA_PER_USD),
      billed * PRICE_QUOTA,
      `charged ${before - after} USD for ${billed} calls`,
    );
    const charges = toolCalls().map((e) => `${e.tool?.tool} ${e.tool?.chargedQuota}`);
    assert.deepEqual(charges, [
      `files/parser/sync ${PRICE_QUOTA}`,
      `layout_parsing ${PRICE_QUOTA}`,
      `web_search ${PRICE_QUOTA}`,
      `reader ${PRICE_QUOTA}`,
      `files ${PRICE_QUOTA}`,
      'files/:id/content 0',
    ]);
  });

  it('sent the key only as "Authorization: Bearer <key>" and only to the gateway', () => {
    // The whole run's log: every tool call above counts.
    const gateway = gw.log.filter((e) => e.origin === 'gateway' && e.headers.authorization !== undefined);
    assert.ok(
      gateway.some((e) => e.path.startsWith('/providers/glm/')) &&
        gateway.some((e) => e.path.startsWith('/providers/kimi/')),
    );
    const keys = [DEMO_KEY, VIP_KEY, GLM_NO_BALANCE_KEY];
    for (const e of gw.log) {
      const where = `${e.origin} ${e.method} ${e.path}`;
      if (e.origin === 'catalog') assert.equal(e.headers.authorization, undefined, `${where} carried a key`);
      else
        assert.ok(
          e.headers.authorization === undefined || keys.some((k) => e.headers.authorization === `Bearer ${k}`),
          `${where}: ${e.headers.authorization?.slice(0, 12)}…`,
        );
      const elsewhere = [
        e.path,
        e.bodyText ?? '',
        ...Object.entries(e.headers)
          .filter(([n]) => n !== 'authorization')
          .map(([, v]) => v),
      ];
      assert.ok(
        !elsewhere.some((s) => keys.some((k) => s.includes(k))),
        `${where} carried a key outside Authorization`,
      );
    }
  });
});
