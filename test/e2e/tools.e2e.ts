import { readableText } from '../../src/core/tools/readableText';
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { ensureSampleWorkspace, SAMPLE_FILES, sampleFile } from '../fixtures/samples';
import { DEFAULT_TOOL_PRICE_USD, DEMO_KEY, GLM_ROOT, KIMI_ROOT } from '../gateway';
import { searchResults } from '../gateway/webContent';
import { QUOTA_PER_USD } from '../gateway/world';
import { LIMITS } from '../vscode/browser';
import { ui } from './context';
import {
  activeEditorShowing,
  billingNotice,
  buttonIn,
  checkConnection,
  clearNotifications,
  continuePastBillingNotice,
  dismissInputs,
  editorLanguage,
  editorShowing,
  editorText,
  editorTitleAction,
  explorerContextCommand,
  explorerRow,
  masked,
  notification,
  paceBeforeToasts,
  reloadWindow,
  replaceUserSettingsJson,
  runExactCommandFromPalette,
  runFromPalette,
  setApiKey,
  showExplorerWith,
  statusHover,
  waitForStatus,
} from './workbench';

const QUICK_INPUT = '.quick-input-widget';

/** Where in the double's log this file's session began (see the reload in `before`). */
let sessionStart = 0;

/** The tool calls the double charged since the session began: what the session's meter must count. */
function billedCalls(): number {
  return ui()
    .double.log.slice(sessionStart)
    .filter((e) => (e.tool?.chargedQuota ?? 0) > 0).length;
}

function sessionLine(calls: number): string {
  return `This session: ${calls} billed tool call${calls === 1 ? '' : 's'}, about US$${(calls * DEFAULT_TOOL_PRICE_USD).toFixed(2)}.`;
}

/** Polls a condition on this side (the double's log), as a selector wait does on the page's side. */
async function eventually(condition: () => boolean, what: string, timeoutMs: number = LIMITS.stepMs): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('Document and web tools in the workbench', () => {
  before(async () => {
    const { page, workspace } = ui();
    await ensureSampleWorkspace(workspace);
    // A saved result from an earlier run of this scenario in the same workspace would be kept.
    for (const saved of ['quarterly-report.md', 'quarterly-report_2.md'])
      await fsp.rm(path.join(workspace, saved), { force: true });
    // A new window is a new session: the billing notice is due before its first billed call,
    // whatever billed calls scenarios in other files made.
    await reloadWindow(page);
    sessionStart = ui().double.log.length;
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
    await showExplorerWith(
      page,
      SAMPLE_FILES.map((s) => s.name),
    );
  });

  afterEach(() => ui().double.clearFaults());

  it('parses a PDF from the Explorer: billing notice, progress, Markdown beside, saved next to the PDF', async () => {
    const { page, double, workspace } = ui();
    const sample = sampleFile('quarterly-report.pdf');
    // Slow enough to see the progress notification, as with a real parse. The toast must be seen
    // while the request is held, so the hold is generous for a busy machine; the double has no
    // "hold until released" fault that would make this a barrier instead of a time.
    double.inject({ match: { path: `${GLM_ROOT}/files/parser/sync` }, times: 1, action: { type: 'delay', ms: 8000 } });

    await explorerContextCommand(page, sample.name, 'Parse PDF');
    const notice = billingNotice(page);
    await notice.waitFor();
    assert.match(await notice.innerText(), /File parsing is billed per call: US\$0\.10/);
    await buttonIn(notice, "Continue and Don't Ask Again").waitFor();
    await buttonIn(notice, 'Continue').click();
    await notice.waitFor({ state: 'detached' });

    const progress = await notification(page, `Parsing ${sample.name}`);
    await buttonIn(progress.locator, 'Cancel').waitFor();

    const editor = activeEditorShowing(page, sample.marker);
    await editor.waitFor();
    // Markdown wraps long lines in a narrow editor; single words of the first page are enough.
    const shown = await editorText(editor);
    for (const word of ['Harbor', 'Summary', 'Incidents'])
      assert.ok(shown.includes(word), `"${word}" in: ${shown.slice(0, 200)}`);
    await editorLanguage(page).filter({ hasText: 'Markdown' }).waitFor();
    assert.equal(
      await page.locator('.part.editor .editor-group-container.empty').count(),
      0,
      'the result opened in the group the user works in: no empty group beside it',
    );

    const result = await notification(
      page,
      `Parsed ${sample.name}: ${readableText(sample.text).length.toLocaleString('en-US')} characters.`,
    );
    assert.equal(result.severity, 'info');
    await buttonIn(result.locator, 'Add to Chat').waitFor();
    await paceBeforeToasts(page);
    await buttonIn(result.locator, 'Save Next to File').click();
    await notification(page, 'Saved quarterly-report.md.');
    await explorerRow(page, 'quarterly-report.md').waitFor();
    assert.equal(
      await fsp.readFile(path.join(workspace, 'quarterly-report.md'), 'utf8'),
      readableText(sample.text),
      'saved as shown: pages apart, no control characters',
    );
    assert.ok(existsSync(path.join(workspace, sample.name)), 'the PDF itself is untouched');
  });

  it('parses the PDF open in the active editor from its title button, and never overwrites a saved result', async () => {
    const { page, workspace } = ui();
    const sample = sampleFile('quarterly-report.pdf');
    const first = path.join(workspace, 'quarterly-report.md');
    // Run alone, this scenario starts without the first one's saved file: a file of the user's stands in.
    if (!existsSync(first)) await fsp.writeFile(first, '# My own notes\n');
    const kept = await fsp.readFile(first, 'utf8');

    await explorerRow(page, sample.name).click();
    await page.locator(`.part.editor .tab.active[aria-label^="${sample.name}"]`).waitFor();
    await editorTitleAction(page, 'Parse PDF').click();
    const result = page.locator('.notifications-toasts .notification-toast', { hasText: `Parsed ${sample.name}:` });
    await continuePastBillingNotice(page, result);
    // The PDF's own tab shows its marker too (as raw PDF text); the result is the new, focused editor.
    await activeEditorShowing(page, `Sample marker: ${sample.marker}`).waitFor();
    await editorLanguage(page).filter({ hasText: 'Markdown' }).waitFor();
    // The second parse of the same PDF (the first scenario parsed it too, when run with it) reuses the
    // result's one read-only tab: results do not pile up, and none is an unsaved Untitled document.
    const resultTabs = page.locator(`.part.editor .tab[aria-label^="Parsed ${sample.name}.md"]`);
    await resultTabs.first().waitFor();
    assert.equal(await resultTabs.count(), 1, 'one result tab for the PDF');
    assert.equal(await page.locator('.part.editor .tab[aria-label^="Untitled"]').count(), 0, 'no Untitled documents');
    const toast = await notification(page, `Parsed ${sample.name}:`);
    await paceBeforeToasts(page);
    await buttonIn(toast.locator, 'Save Next to File').click();
    await notification(page, 'Saved quarterly-report_2.md.');
    await explorerRow(page, 'quarterly-report_2.md').waitFor();
    assert.equal(await fsp.readFile(path.join(workspace, 'quarterly-report_2.md'), 'utf8'), readableText(sample.text));
    assert.equal(await fsp.readFile(first, 'utf8'), kept, 'the earlier file is kept as it was');
  });

  it("says a scanned PDF has no text and offers OCR, which opens the scan's text", async () => {
    const { page } = ui();
    const sample = sampleFile('scanned-letter.pdf');
    await explorerContextCommand(page, sample.name, 'Parse PDF');
    const warningText = `No text was found in ${sample.name}`;
    await continuePastBillingNotice(
      page,
      page.locator('.notifications-toasts .notification-toast', { hasText: warningText }),
    );

    const warning = await notification(page, warningText);
    assert.equal(warning.severity, 'warning');
    assert.match(warning.text, /scanned documents need OCR/);
    await paceBeforeToasts(page);
    await buttonIn(warning.locator, 'Run OCR').click();

    const editor = activeEditorShowing(page, sample.marker);
    await editor.waitFor();
    assert.ok((await editorText(editor)).includes('NORTHWIND'));
    await editorLanguage(page).filter({ hasText: 'Markdown' }).waitFor();
    await notification(page, `OCR of ${sample.name}:`);
  });

  it('searches the web from the palette and inserts a result as a citation with the quote button', async () => {
    const { page } = ui();
    const query = 'harbor logistics';
    const first = searchResults(query, { count: 10 })[0];
    assert.ok(first);

    await runExactCommandFromPalette(page, 'File: New Untitled Text File');
    await editorLanguage(page).filter({ hasText: 'Plain Text' }).waitFor();
    await page.keyboard.type('Source: ');

    await runFromPalette(page, 'Model Gateway: Search the Web');
    await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: 'Model Gateway: Search the Web' }).waitFor();
    await page.keyboard.type(query);
    await page.keyboard.press('Enter');

    const picks = page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: `Results for "${query}"` });
    await continuePastBillingNotice(page, picks);
    await picks.waitFor();
    const rows = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`);
    const top = rows.and(page.locator('[data-index="0"]'));
    await top.waitFor();
    assert.equal(
      await top.getAttribute('aria-setsize'),
      '11',
      'ten results and "Open all results as a Markdown document"',
    );
    assert.equal((await top.locator('.label-name').first().innerText()).trim(), first.title);

    // Pointing at the row shows its buttons, and after a moment its hover card, which opens at the
    // pointer. Pointing at the middle of the row (a locator's hover) can thus be overtaken by the
    // card on a slow machine, so point at the row's left end: the card stays clear of the buttons
    // at its right end.
    const box = await top.boundingBox();
    if (!box) throw new Error('the first result is not on screen');
    await page.mouse.move(box.x + 16, box.y + box.height / 2);
    await top.getByRole('button', { name: 'Insert a Markdown citation at the cursor' }).click();
    await page.locator(QUICK_INPUT).waitFor({ state: 'hidden' });

    const cite = `[${first.title}](${first.link})`;
    const editor = activeEditorShowing(page, first.link);
    await editor.waitFor();
    const text = await editorText(editor);
    assert.ok(text.includes(`Source: ${cite} (${first.media}, ${first.publish_date})`), `no citation in: ${text}`);
  });

  it("offers the first provider's search when the second provider's is blocked, and shows its results", async () => {
    const { page, double, codeServer } = ui();
    const settingsFile = path.join(codeServer.scratchDir, 'ud', 'User', 'settings.json');
    const original = JSON.parse(await fsp.readFile(settingsFile, 'utf8')) as Record<string, unknown>;
    const query = 'rotterdam hub dwell time';
    const first = searchResults(query, { count: 10 })[0];
    assert.ok(first);
    const writeSettings = async (settings: Record<string, unknown>) => {
      const json = JSON.stringify(settings);
      await replaceUserSettingsJson(page, json, async () => (await fsp.readFile(settingsFile, 'utf8')).trim() === json);
    };
    await writeSettings({ ...original, 'modelGateway.tools.searchProvider': 'kimi' });
    let failure: unknown;
    try {
      const since = double.log.length;
      await runFromPalette(page, 'Model Gateway: Search the Web');
      await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: 'Model Gateway: Search the Web' }).waitFor();
      await page.keyboard.type(query);
      await page.keyboard.press('Enter');

      const blockedText = "Kimi's search is blocked upstream";
      await continuePastBillingNotice(
        page,
        page.locator('.notifications-toasts .notification-toast', { hasText: blockedText }),
      );
      const blocked = await notification(page, blockedText);
      assert.equal(blocked.severity, 'warning');
      assert.match(blocked.text, /HTTP 403/);
      await paceBeforeToasts(page);
      await buttonIn(blocked.locator, 'Search with GLM').click();

      await eventually(
        () => double.log.slice(since).some((e) => e.path === `${GLM_ROOT}/web_search` && e.status === 200),
        "the first provider's search was called",
      );
      assert.deepEqual(
        double.log
          .slice(since)
          .filter((e) => e.tool)
          .map((e) => `${e.path} ${e.status} ${e.tool?.chargedQuota}`),
        [`${KIMI_ROOT}/tools/search 403 0`, `${GLM_ROOT}/web_search 200 ${DEFAULT_TOOL_PRICE_USD * QUOTA_PER_USD}`],
      );
      // The user paid for this search: its results must be shown as when searching the first provider directly.
      const picks = page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: `Results for "${query}"` });
      await picks.waitFor().catch(() => {
        throw new Error(
          `after "Search with GLM" the search ran and was billed, but no results were shown (no quick pick "Results for \"${query}\"")`,
        );
      });
      await page
        .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row[data-index="0"] .label-name`, {
          hasText: first.title,
        })
        .waitFor();
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      // Put the settings back; a failure here must not hide the scenario's own.
      try {
        await dismissInputs(page);
        await writeSettings(original);
      } catch (error) {
        if (failure === undefined) throw error;
        console.error('restoring the user settings failed too:', error);
      }
    }
  });

  it('counts the billed calls of the session and their cost in the status bar tooltip', async () => {
    const { page } = ui();
    const url = 'https://docs.example.net/guides/port-operations';
    await runFromPalette(page, 'Model Gateway: Read a Web Page');
    await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: 'Model Gateway: Read a Web Page' }).waitFor();
    await page.keyboard.type(url);
    await page.keyboard.press('Enter');
    // Line 1 of the page as read: "# Port Operations".
    const opened = activeEditorShowing(page, '# Port Operations');
    await continuePastBillingNotice(page, opened);
    await opened.waitFor();
    await editorLanguage(page).filter({ hasText: 'Markdown' }).waitFor();

    const calls = billedCalls();
    assert.ok(calls >= 1);
    const hover = await statusHover(page, sessionLine(calls));
    assert.match(await hover.innerText(), new RegExp(`Key ${masked(DEMO_KEY)} accepted`));
  });

  it('cancels a slow call from its progress notification: nothing opens and nothing is charged', async () => {
    const { page, double } = ui();
    const url = 'https://news.example.com/news/slow-page';
    const before = billedCalls();
    double.inject({ match: { path: `${GLM_ROOT}/reader` }, times: 1, action: { type: 'stall' } });
    await runFromPalette(page, 'Model Gateway: Read a Web Page');
    await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: 'Model Gateway: Read a Web Page' }).waitFor();
    await page.keyboard.type(url);
    await page.keyboard.press('Enter');

    const progressToast = page.locator('.notifications-toasts .notification-toast', { hasText: `Reading ${url}` });
    await continuePastBillingNotice(page, progressToast);
    const progress = await notification(page, `Reading ${url}`);
    await eventually(
      () => double.log.some((e) => e.path === `${GLM_ROOT}/reader` && e.status === 0),
      'the reader request reached the double and hangs there',
    );
    await buttonIn(progress.locator, 'Cancel').click();
    await progress.locator.waitFor({ state: 'detached' });

    // Barrier: a later command's report is on screen; whatever the cancel led to (an error toast,
    // an opened page) was raised before it.
    await paceBeforeToasts(page);
    await checkConnection(page, 'Key accepted');
    assert.equal(billedCalls(), before, 'nothing was charged');
    const hover = await statusHover(page, before > 0 ? sessionLine(before) : 'Click to check the connection');
    if (before === 0) assert.doesNotMatch(await hover.innerText(), /This session/);
    assert.equal(await editorShowing(page, 'slow-page').count(), 0, 'no page was opened');
    assert.equal(
      await page.locator('.notifications-toasts .notification-toast .codicon-error').count(),
      0,
      'a cancel is not an error',
    );
  });
});
