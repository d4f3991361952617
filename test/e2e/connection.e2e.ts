import * as assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_GROUPS, DEFAULT_MODELS, DEMO_KEY, DISABLED_KEY } from '../gateway';
import { modelKind } from '../gateway/world';
import { ui } from './context';
import { REPO_ROOT } from './environment';
import {
  buttonIn,
  checkConnection,
  clearApiKey,
  clearNotifications,
  masked,
  pageTextAndMarkup,
  setApiKey,
  statusBackground,
  statusHover,
  statusItem,
  waitForStatus,
} from './workbench';

/** What the double's default group grants, counted by the double's own idea of each model's kind. */
function expectedCounts(): string {
  const granted = new Set(DEFAULT_GROUPS.default);
  const count = (kind: string) => DEFAULT_MODELS.filter((m) => granted.has(m.id) && modelKind(m) === kind).length;
  return `${count('chat')} chat, ${count('image')} image, ${count('video')} video, ${count('tool')} tool`;
}

const SHOTS = path.join(REPO_ROOT, 'test-results');

/** The rows of the open quick pick: each one's label and its detail line. */
async function quickPickRows(page: import('playwright-core').Page): Promise<{ label: string; detail: string }[]> {
  const rows = page.locator('.quick-input-widget .monaco-list-row');
  await rows.first().waitFor();
  const out: { label: string; detail: string }[] = [];
  for (let i = 0; i < (await rows.count()); i++) {
    const row = rows.nth(i);
    const label = (
      await row
        .locator('.quick-input-list-label .label-name')
        .first()
        .innerText()
        .catch(() => '')
    ).trim();
    const detail = (
      await row
        .locator('.quick-input-list-label-meta, .quick-input-list-detail')
        .first()
        .innerText()
        .catch(() => '')
    ).trim();
    out.push({ label, detail });
  }
  return out;
}

describe('Check Connection', () => {
  it('reports an accepted key and how many models of each kind it may use', async () => {
    const { page, double } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);

    const toast = await checkConnection(page, 'Key accepted');
    assert.equal(toast.severity, 'info');
    // One short sentence: the outcome; the facts are one click away.
    assert.match(
      toast.text,
      new RegExp(`^Key accepted: ${masked(DEMO_KEY).replace(/[•]/g, '.')} may use \\d+ models\\.$`),
      toast.text,
    );
    await buttonIn(toast.locator, 'Show Report').click();
    const rows = await quickPickRows(page);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'connection-report.png') });
    const fact = (label: string) => rows.find((r) => r.label === label)?.detail ?? '';
    assert.equal(fact('API key'), `${masked(DEMO_KEY)}, accepted by the gateway`, JSON.stringify(rows));
    assert.equal(fact('Base address'), double.url);
    assert.equal(fact('Models for this key'), expectedCounts());
    assert.match(fact('Catalog'), /^\d+ models/);
    await page.keyboard.press('Escape');
    assert.equal((await waitForStatus(page, masked(DEMO_KEY), 'check')).text, `Gateway ${masked(DEMO_KEY)}`);
  });

  it("a click on the status bar item opens the report itself, which the item's tooltip does not cover", async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
    // As a user clicks it: the pointer rests on the item, whose tooltip is open.
    await statusHover(page, 'Click to check the connection and see the report');
    await statusItem(page).click();
    const rows = await quickPickRows(page);
    assert.equal(
      rows.find((r) => r.label === 'API key')?.detail,
      `${masked(DEMO_KEY)}, accepted by the gateway`,
      JSON.stringify(rows),
    );
    const report = await page.locator('.quick-input-widget').boundingBox();
    const hover = page.locator('.monaco-hover').first();
    const covering = (await hover.isVisible()) ? await hover.boundingBox() : null;
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'connection-status-click.png') });
    assert.ok(report, 'the report is on screen');
    if (covering)
      assert.ok(
        covering.y >= report.y + report.height || covering.x >= report.x + report.width,
        `the tooltip ${JSON.stringify(covering)} covers the report ${JSON.stringify(report)}`,
      );
    // No notice to catch: the report was the click's answer.
    assert.equal(
      await page.locator('.notifications-toasts .notification-toast', { hasText: 'Show Report' }).count(),
      0,
    );
    await page.keyboard.press('Escape');
  });

  it('says a disabled key was refused and marks the status bar', async () => {
    const { page } = ui();
    await setApiKey(page, DISABLED_KEY);
    await clearNotifications(page);

    const toast = await checkConnection(page, 'Key refused');
    assert.notEqual(toast.severity, 'info', `a refused key was reported as information: ${toast.text}`);
    assert.ok(toast.text.startsWith(`Key refused by the gateway (${masked(DISABLED_KEY)}): `), toast.text);

    const status = await waitForStatus(page, masked(DISABLED_KEY), 'error');
    assert.equal(status.text, `Gateway ${masked(DISABLED_KEY)}`);
    const background = await statusBackground(page);
    assert.notEqual(background, 'rgba(0, 0, 0, 0)', 'the refused key is not highlighted in the status bar');

    const { text, markup } = await pageTextAndMarkup(page);
    assert.ok(!text.includes(DISABLED_KEY) && !markup.includes(DISABLED_KEY), 'the full disabled key is in the page');
  });

  it('with no key the status bar offers Set API Key, and Check Connection says so once', async () => {
    const { page } = ui();
    await clearApiKey(page);
    await waitForStatus(page, 'Gateway: no key', 'key');
    await clearNotifications(page);
    const toast = await checkConnection(page, 'No API key is set');
    assert.equal((toast.text.match(/No API key is set/g) ?? []).length, 1, `the notice repeats itself: ${toast.text}`);
    assert.doesNotMatch(toast.text, /Problem:/);
    await page.screenshot({ path: path.join(SHOTS, 'connection-no-key.png') });
    await clearNotifications(page);
    // A click on the item opens the key's input box, not a connection check.
    await statusItem(page).click();
    await page.locator('.quick-input-widget input[type="password"]').waitFor();
    await page.keyboard.press('Escape');
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
  });
});
