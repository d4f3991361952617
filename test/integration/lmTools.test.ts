import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as fs from 'node:fs/promises';
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
  type RequestLogEntry,
} from '../gateway';
import { run, setSetting } from './support';

/**
 * The gateway's tools as agent tools of VS Code's chat, called the way the chat calls them:
 * `vscode.lm.invokeTool` (stable before 1.100, so this runs on the 1.100 host of the integration suite).
 */

const SAMPLES = 'lm-tool-samples';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function invoke(name: string, input: object): Promise<string> {
  const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}

async function invokeFails(name: string, input: object): Promise<Error> {
  try {
    await invoke(name, input);
  } catch (err) {
    assert.ok(err instanceof Error);
    return err;
  }
  assert.fail(`${name} was expected to fail`);
}

describe("The gateway's tools as agent tools (vscode.lm.invokeTool)", function () {
  this.timeout(60_000);
  let gw: GatewayDouble;
  let samples: string;
  let confirmBefore: boolean | undefined;
  let since = 0;
  const toolCalls = (): RequestLogEntry[] => gw.log.slice(since).filter((e) => e.path.startsWith('/providers/'));
  const workspace = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  const generated: string[] = [];

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    samples = path.join(workspace(), SAMPLES);
    await ensureSampleWorkspace(samples);
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    // As a user who chose "Continue and Don't Ask Again": no confirmation stands in the way.
    confirmBefore = vscode.workspace
      .getConfiguration('modelGateway.tools')
      .inspect<boolean>('confirmBilledCalls')?.globalValue;
    await setSetting('tools.confirmBilledCalls', false);
    await run('setApiKey', DEMO_KEY);
  });
  after(async () => {
    await setSetting('tools.confirmBilledCalls', confirmBefore);
    await run('clearApiKey', { all: true });
    await gw.stop();
    await fs.rm(samples, { recursive: true, force: true });
    for (const file of generated) await fs.rm(file, { force: true });
  });
  beforeEach(() => {
    gw.clearFaults();
    since = gw.log.length;
  });

  it('contributes the five tools with their input schemas', () => {
    const ours = vscode.lm.tools.filter((t) => t.name.startsWith('modelGateway_'));
    assert.deepEqual(ours.map((t) => t.name).sort(), [
      'modelGateway_generateImage',
      'modelGateway_ocr',
      'modelGateway_parsePdf',
      'modelGateway_readWebPage',
      'modelGateway_searchWeb',
    ]);
    for (const tool of ours) {
      assert.ok(tool.description.length > 40, `${tool.name} tells the model what it does`);
      assert.equal((tool.inputSchema as { type?: string } | undefined)?.type, 'object');
    }
  });

  it('searches the web with the first provider and returns numbered results with their URLs, billed once', async () => {
    const quotaBefore = gw.quota(DEMO_KEY).userUsd ?? NaN;
    const text = await invoke('modelGateway_searchWeb', { query: 'container shipping rates', count: 3 });
    assert.match(text, /^Web results for "container shipping rates"/);
    const urls = text.match(/URL: (\S+)/g) ?? [];
    assert.equal(urls.length, 3, text);
    assert.deepEqual(
      toolCalls().map((e) => `${e.method} ${e.path} ${e.status}`),
      [`POST ${GLM_ROOT}/web_search 200`],
    );
    assert.equal(JSON.parse(toolCalls()[0]?.bodyText ?? '{}').count, 3);
    assert.ok(
      Math.abs(quotaBefore - (gw.quota(DEMO_KEY).userUsd ?? NaN) - DEFAULT_TOOL_PRICE_USD) < 1e-9,
      'one call was billed',
    );
  });

  it("falls back to the first provider when the second provider's search answers 403, and says so", async () => {
    const text = await invoke('modelGateway_searchWeb', { query: 'tide tables', provider: 'kimi', count: 2 });
    assert.match(text, /^Kimi's search is blocked upstream \(HTTP 403\); these results are from GLM's search\./);
    assert.match(text, /URL: https?:\/\//);
    assert.deepEqual(
      toolCalls().map((e) => `${e.method} ${e.path} ${e.status}`),
      [`POST ${KIMI_ROOT}/tools/search 403`, `POST ${GLM_ROOT}/web_search 200`],
    );
  });

  it('reads a web page as Markdown with its title and URL, cut to maxChars', async () => {
    const url = 'https://docs.example.net/guides/port-operations';
    const text = await invoke('modelGateway_readWebPage', { url });
    assert.match(
      text,
      /^Title: Port Operations \| docs\.example\.net\nURL: https:\/\/docs\.example\.net\/guides\/port-operations\n\n# Port Operations\n/,
    );
    const short = await invoke('modelGateway_readWebPage', { url, maxChars: 40 });
    assert.match(short, /\[Cut at 40 of [\d,]+ characters; ask again with a larger maxChars for more\.\]$/);
  });

  it('parses a workspace PDF given by its relative path into its exact text', async () => {
    const sample = sampleFile('quarterly-report.pdf');
    const text = await invoke('modelGateway_parsePdf', { path: `${SAMPLES}/${sample.name}` });
    assert.equal(text, `Text of ${SAMPLES}/${sample.name}:\n\n${sample.text}`);
    assert.deepEqual(
      toolCalls().map((e) => `${e.method} ${e.path} ${e.status}`),
      [`POST ${GLM_ROOT}/files/parser/sync 200`],
    );
  });

  it('says a scanned PDF has no text and points to OCR, which reads it', async () => {
    const scan = `${SAMPLES}/scanned-letter.pdf`;
    assert.match(await invoke('modelGateway_parsePdf', { path: scan }), /No text was found .* Use modelGateway_ocr/);
    const text = await invoke('modelGateway_ocr', { path: scan });
    assert.ok(text.includes(sampleFile('scanned-letter.pdf').marker), text.slice(0, 200));
    assert.match(text, /^Text of .*scanned-letter\.pdf \(1 page\), read by OCR:/);
  });

  it('refuses files outside the workspace and non-PDFs before sending anything', async () => {
    const outside = await invokeFails('modelGateway_parsePdf', { path: '../outside.pdf' });
    assert.match(outside.message, /outside the open workspace folders/);
    const absolute = await invokeFails('modelGateway_ocr', { path: path.resolve(workspace(), '..', 'elsewhere.png') });
    assert.match(absolute.message, /outside the open workspace folders/);
    const notPdf = await invokeFails('modelGateway_parsePdf', { path: `${SAMPLES}/scan.png` });
    assert.match(notPdf.message, /not a PDF.*modelGateway_ocr/);
    assert.equal(toolCalls().length, 0);
  });

  it('refuses links that lead outside the workspace (a file, a folder) and files whose bytes are not the format, before sending anything', async () => {
    const outside = await fs.mkdtemp(path.join(path.dirname(workspace()), 'lm-tools-outside-'));
    const links = [
      path.join(samples, 'leaked.pdf'),
      path.join(samples, 'leaked-folder'),
      path.join(samples, 'key.pdf'),
    ];
    try {
      await fs.copyFile(path.join(samples, 'quarterly-report.pdf'), path.join(outside, 'private.pdf'));
      await fs.symlink(path.join(outside, 'private.pdf'), links[0] as string);
      await fs.symlink(outside, links[1] as string);
      await fs.writeFile(links[2] as string, 'API_KEY=not-a-pdf\n');
      since = gw.log.length;
      assert.match(
        (await invokeFails('modelGateway_parsePdf', { path: `${SAMPLES}/leaked.pdf` })).message,
        /symbolic link .*outside the open workspace folders/,
      );
      assert.match(
        (await invokeFails('modelGateway_parsePdf', { path: `${SAMPLES}/leaked-folder/private.pdf` })).message,
        /symbolic link/,
      );
      assert.match(
        (await invokeFails('modelGateway_parsePdf', { path: `${SAMPLES}/key.pdf` })).message,
        /key\.pdf was not sent: the PDF parser takes PDF files/,
      );
      assert.match(
        (await invokeFails('modelGateway_ocr', { path: `${SAMPLES}/missing.png` })).message,
        /does not exist/,
      );
      assert.equal(toolCalls().length, 0);
    } finally {
      for (const link of links) await fs.rm(link, { force: true });
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  it("reports the provider's errors as the commands do (balance 1113)", async () => {
    await run('setApiKey', GLM_NO_BALANCE_KEY);
    try {
      const err = await invokeFails('modelGateway_parsePdf', { path: `${SAMPLES}/quarterly-report.pdf` });
      assert.match(err.message, /1113/);
      assert.match(err.message, /not your key's quota/);
    } finally {
      await run('setApiKey', DEMO_KEY);
    }
  });

  it('generates an image into the workspace and returns its workspace path', async () => {
    await run('refreshModels');
    const text = await invoke('modelGateway_generateImage', {
      prompt: 'A lighthouse at dusk',
      model: 'gpt-image-1',
      size: '1024x1024',
    });
    const match = /^- (generated\/images\/\S+\.png)$/m.exec(text);
    assert.ok(match?.[1], text);
    const file = path.join(workspace(), match[1]);
    generated.push(file);
    assert.ok(existsSync(file), file);
    assert.deepEqual(readFileSync(file).subarray(0, 8), PNG);
    assert.match(text, /^Generated an image with gpt-image-1 \(1024x1024\)/);
  });

  it('sent the key to the gateway only', () => {
    for (const entry of gw.log) {
      const carries = Object.values(entry.headers).some((v) => v.includes(DEMO_KEY));
      if (carries) assert.equal(entry.origin, 'gateway', `${entry.origin} ${entry.method} ${entry.path} got the key`);
    }
  });
});
