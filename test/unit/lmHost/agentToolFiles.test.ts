/**
 * The document tools of VS Code's chat (parse PDF, OCR) on files a cloned repository could plant:
 * each refusal happens before any request, so the gateway double logs nothing. One successful parse
 * and OCR show that the double does log the calls the tools make.
 */
// First: answers `vscode` for every host module imported after it.
import { CancellationTokenSource, fake, ui } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { HttpClient } from '../../../src/core/http';
import { agentTools, TOOL_NAMES } from '../../../src/host/lm/agentTools';
import { ensureSampleWorkspace } from '../../fixtures/samples';
import { DEMO_KEY, GatewayDouble } from '../../gateway';
import { clientFor } from '../../support/client';
import { withSwapAfterCheck } from '../../support/swapAfterCheck';
import { hostServices } from './hostServices';

describe("VS Code's own chat: document tools read only the workspace's own files", function () {
  this.timeout(60_000);
  let gw: GatewayDouble;
  let http: HttpClient;
  let root: string;
  let ws: string;
  let tools: Map<string, vscode.LanguageModelTool<unknown>>;

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    http = clientFor(gw.url, DEMO_KEY).http;
    root = mkdtempSync(path.join(os.tmpdir(), 'agent-files-'));
    ws = path.join(root, 'repo');
    const outside = path.join(root, 'home');
    mkdirSync(ws);
    mkdirSync(outside);
    await ensureSampleWorkspace(ws);
    // Real documents outside the workspace: only the link rule stands between them and an upload.
    copyFileSync(path.join(ws, 'quarterly-report.pdf'), path.join(outside, 'tax-return.pdf'));
    copyFileSync(path.join(ws, 'scan.png'), path.join(outside, 'passport.png'));
    symlinkSync(path.join(outside, 'tax-return.pdf'), path.join(ws, 'report-link.pdf'));
    symlinkSync(path.join(outside, 'passport.png'), path.join(ws, 'scan-link.png'));
    symlinkSync(outside, path.join(ws, 'shared'));
    // Named as the tools take them, holding something else.
    writeFileSync(path.join(ws, 'config.pdf'), 'API_KEY=sk-secret\n');
    writeFileSync(path.join(ws, 'notes.png'), 'not an image at all\n');
    copyFileSync(path.join(ws, 'scan.png'), path.join(ws, 'photo.pdf'));
  });
  after(async () => {
    await http.close();
    await gw.stop();
    rmSync(root, { recursive: true, force: true });
  });
  beforeEach(() => {
    gw.clearLog();
    ui.settings = {};
    fake.workspace.workspaceFolders = [{ uri: fake.Uri.file(ws) }];
    tools = agentTools(hostServices(http).services, () => {
      throw new Error('no media studio is needed for the document tools');
    });
  });
  afterEach(() => {
    fake.workspace.workspaceFolders = undefined;
  });

  async function invoke(name: string, input: object): Promise<string> {
    const tool = tools.get(name) as vscode.LanguageModelTool<object>;
    const result = await tool.invoke(
      { input, toolInvocationToken: undefined },
      new CancellationTokenSource().token as never,
    );
    return (result?.content ?? []).map((p) => (p as { value?: string }).value ?? '').join('');
  }

  async function refused(name: string, input: object, pattern: RegExp): Promise<void> {
    await assert.rejects(invoke(name, input), (e: unknown) => e instanceof Error && pattern.test(e.message));
    assert.deepEqual(
      gw.log.map((e) => `${e.method} ${e.path}`),
      [],
      `${name} ${JSON.stringify(input)} sent nothing`,
    );
  }

  it('parses and reads a workspace file (the double logs each call)', async () => {
    assert.match(
      await invoke(TOOL_NAMES.parsePdf, { path: 'quarterly-report.pdf' }),
      /^Text of quarterly-report\.pdf:/,
    );
    assert.match(await invoke(TOOL_NAMES.ocr, { path: 'scan.png' }), /read by OCR/);
    assert.equal(gw.log.filter((e) => e.method === 'POST').length, 2);
  });

  it('refuses a link to a file outside the workspace', async () => {
    await refused(
      TOOL_NAMES.parsePdf,
      { path: 'report-link.pdf' },
      /symbolic link .*outside the open workspace folders/,
    );
    await refused(TOOL_NAMES.ocr, { path: 'scan-link.png' }, /symbolic link .*outside the open workspace folders/);
    await refused(TOOL_NAMES.parsePdf, { path: path.join(ws, 'report-link.pdf') }, /symbolic link/);
  });

  it('refuses a file in a linked folder that leads outside', async () => {
    await refused(
      TOOL_NAMES.parsePdf,
      { path: 'shared/tax-return.pdf' },
      /symbolic link .*outside the open workspace folders/,
    );
    await refused(TOOL_NAMES.ocr, { path: 'shared/passport.png' }, /symbolic link/);
  });

  it('refuses `..` and absolute paths outside the workspace', async () => {
    await refused(TOOL_NAMES.parsePdf, { path: '../home/tax-return.pdf' }, /outside the open workspace folders/);
    await refused(
      TOOL_NAMES.ocr,
      { path: path.join(root, 'home', 'passport.png') },
      /outside the open workspace folders/,
    );
  });

  it('refuses a file whose bytes are not the format the tool takes', async () => {
    await refused(
      TOOL_NAMES.parsePdf,
      { path: 'config.pdf' },
      /config\.pdf was not sent: the PDF parser takes PDF files, and by its bytes this file is not a format it knows/,
    );
    await refused(TOOL_NAMES.parsePdf, { path: 'photo.pdf' }, /photo\.pdf was not sent: .*this file is PNG/);
    await refused(TOOL_NAMES.ocr, { path: 'notes.png' }, /notes\.png was not sent: OCR takes PDF, PNG, JPEG files/);
  });

  it('says a file that does not exist does not, and sends nothing', async () => {
    await refused(TOOL_NAMES.parsePdf, { path: 'missing.pdf' }, /missing\.pdf does not exist/);
  });

  it('sends nothing when the file is swapped for a link to a file outside after its path was checked', async () => {
    const file = path.join(ws, 'swap-report.pdf');
    copyFileSync(path.join(ws, 'quarterly-report.pdf'), file);
    await withSwapAfterCheck(
      file,
      () => {
        renameSync(file, path.join(ws, 'swap-report-old.pdf'));
        symlinkSync(path.join(root, 'home', 'tax-return.pdf'), file);
      },
      () =>
        refused(
          TOOL_NAMES.parsePdf,
          { path: 'swap-report.pdf' },
          /swap-report\.pdf changed while it was being checked/,
        ),
    );
  });

  it('sends nothing when a folder on the way is swapped for a link that leads outside after the check', async () => {
    mkdirSync(path.join(ws, 'inbox'));
    mkdirSync(path.join(root, 'elsewhere'));
    copyFileSync(path.join(ws, 'scan.png'), path.join(ws, 'inbox', 'page.png'));
    copyFileSync(path.join(root, 'home', 'passport.png'), path.join(root, 'elsewhere', 'page.png'));
    await withSwapAfterCheck(
      path.join(ws, 'inbox', 'page.png'),
      () => {
        renameSync(path.join(ws, 'inbox'), path.join(ws, 'inbox-old'));
        symlinkSync(path.join(root, 'elsewhere'), path.join(ws, 'inbox'));
      },
      () => refused(TOOL_NAMES.ocr, { path: 'inbox/page.png' }, /page\.png changed while it was being checked/),
    );
  });
});
