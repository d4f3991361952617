import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { DEMO_KEY, imageSize } from '../gateway';
import { ui } from './context';
import { REPO_ROOT } from './environment';
import {
  masked,
  mediaFrame,
  parkMouse,
  reloadWindow,
  replaceUserSettingsJson,
  runCommandFromPalette,
  saveWorkbenchState,
  setApiKey,
  statusHover,
  waitForStatus,
} from './workbench';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('Media Studio', () => {
  before(async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
  });
  after(async () => {
    // The panel is a second webview of the extension; later scenarios expect only the chat's.
    await runCommandFromPalette(ui().page, 'View: Close All Editors');
  });

  it('generates an image in the panel and the file shows up in the workspace explorer', async () => {
    const { page, double, workspace } = ui();
    await runCommandFromPalette(page, 'Model Gateway: Open Media Studio');
    const frame = await mediaFrame(page);
    await frame.locator('#tab-images').click();
    const images = frame.locator('#panel-images');
    await images.locator('select.model-select option[value="gpt-image-1"]').waitFor({ state: 'attached' });
    await images.locator('select.model-select').selectOption('gpt-image-1');
    await images.locator('select[name="route"]').selectOption('images');
    await images.locator('textarea.prompt').fill('A red fox in the snow');
    await images.locator('input.size').fill('1024 × 1024');
    double.clearLog();
    await frame.locator('button[aria-label="Generate the image"]').click();

    const card = images.locator('.gallery .card', { hasText: 'A red fox in the snow' }).first();
    await card.waitFor();
    await images.locator('.job-done').waitFor();
    const thumb = card.locator('img.thumb');
    await thumb.waitFor();
    // The thumbnail really loaded through the webview's resource URI (CSP and resource roots allow it).
    // It may still be loading on a busy machine: wait until it is done, then judge (a refused or
    // broken image is done with no pixels).
    const state = async () =>
      thumb.evaluate((img: unknown) => {
        const i = img as { complete: boolean; naturalWidth: number };
        return i.complete ? (i.naturalWidth > 0 ? 'shown' : 'broken') : 'loading';
      });
    const end = Date.now() + 30_000;
    let seen = await state();
    while (seen === 'loading' && Date.now() < end) {
      await page.waitForTimeout(100);
      seen = await state();
    }
    assert.equal(seen, 'shown', 'the thumbnail is shown');

    const relative = (await card.locator('.path').innerText()).trim();
    assert.match(relative, /^generated\/images\/\d{8}-\d{6}-a-red-fox-in-the-snow-1\.png$/);
    const file = path.join(workspace, relative);
    assert.ok(existsSync(file), file);
    assert.deepEqual(readFileSync(file).subarray(0, 8), PNG);
    const sent = double.log.find((e) => e.method === 'POST' && e.path === '/v1/images/generations');
    assert.equal(
      JSON.parse(sent?.bodyText ?? '{}').size,
      '1024x1024',
      'shown as 1024 × 1024, sent in the Images API form',
    );
    // The card reports the saved file's own size, read from its header.
    const real = imageSize(readFileSync(file));
    assert.ok(real, 'the saved file is an image');
    assert.equal(await card.locator('.dimensions').innerText(), `${real.width} × ${real.height}`);

    await parkMouse(page);
    mkdirSync(path.join(REPO_ROOT, 'test-results'), { recursive: true });
    await page.screenshot({ path: path.join(REPO_ROOT, 'test-results', 'media-studio.png') });

    // "Reveal" shows the new file in the Explorer, inside the workspace's generated/images folder.
    // It is in the card's "⋯" menu, with the other actions on the file (opened from the keyboard, as a user may).
    await card.locator('button.more-toggle').focus();
    await page.keyboard.press('Enter');
    await card.locator('.more-menu[role="menu"]').waitFor();
    await card.locator('button[data-act="reveal"]').click();
    const name = path.basename(relative);
    await page
      .locator(`.part.sidebar .explorer-folders-view .monaco-list-row[role="treeitem"][aria-label="${name}"]`)
      .waitFor();
  });

  it('shows the billing before a video is submitted, and the task in the list once accepted', async () => {
    const { page, double } = ui();
    await runCommandFromPalette(page, 'Model Gateway: Generate Video');
    const frame = await mediaFrame(page);
    const video = frame.locator('#panel-video');
    await video.waitFor();
    await video.locator('select.video-model-select option[value="wan2.5-t2v-preview"]').waitFor({ state: 'attached' });
    assert.equal(
      await video.locator('input.size').inputValue(),
      '832 × 480',
      'the verified default size, in the studio notation',
    );
    assert.equal(await video.locator('input[name="videoDuration"]').inputValue(), '5');
    await video.locator('textarea.prompt').fill('A fox runs through snow');
    await video.locator('.billing', { hasText: 'wan2.5-t2v-preview, 5 s, 832 × 480 (480P)' }).waitFor();

    await video.locator('input.size').fill('832 by 480');
    await video.locator('.problem', { hasText: 'Write the size as width × height in pixels' }).waitFor();
    assert.equal(await frame.locator('button[aria-label="Submit the video task (billed)"]').isDisabled(), true);
    await video.locator('input.size').fill('832 × 480');

    double.clearLog();
    await frame.locator('button[aria-label="Submit the video task (billed)"]').click();
    const row = video.locator('.tasks .task', { hasText: 'A fox runs through snow' }).first();
    await row.waitFor();
    await row.locator('.badge', { hasText: /^(Queued|Generating( \d+ %)?)$/ }).waitFor();
    assert.match((await row.getAttribute('data-task-id')) ?? '', /^task_/);
    const submitted = double.log.find((e) => e.method === 'POST' && e.path === '/v1/video/generations');
    assert.equal(JSON.parse(submitted?.bodyText ?? '{}').size, '832*480', 'sent in the video endpoint form');
    await parkMouse(page);
    await page.screenshot({ path: path.join(REPO_ROOT, 'test-results', 'media-studio-video.png') });
    await row.locator('button[data-act="cancel"]').click();
    await row.locator('.badge', { hasText: 'Stopped (by you)' }).waitFor();
    await row.locator('button[data-act="forget"]').click();
    await row.waitFor({ state: 'detached' });
  });

  it('comes back after a window reload: the panel, its tab, its drafts, and its gallery with real sizes', async () => {
    const { page } = ui();
    await runCommandFromPalette(page, 'Model Gateway: Open Media Studio');
    let frame = await mediaFrame(page);
    await frame.locator('#tab-video').click();
    const video = frame.locator('#panel-video');
    await video.locator('select.video-model-select option[value="wan2.5-t2v-preview"]').waitFor({ state: 'attached' });
    await video.locator('textarea.prompt').fill('A heron at dawn, kept over a reload');
    await video.locator('input.size').fill('480 × 832');
    // The webview saves its drafts a moment after the last keystroke; the workbench keeps them with
    // its editor state, which it writes when the window loses the focus (or once a minute).
    await saveWorkbenchState(page, ['A heron at dawn, kept over a reload', '480 × 832']);

    await reloadWindow(page);
    frame = await mediaFrame(page);
    const restored = frame.locator('#panel-video');
    await restored.locator('textarea.prompt').waitFor();
    await restored
      .locator('select.video-model-select option[value="wan2.5-t2v-preview"]')
      .waitFor({ state: 'attached' });
    assert.equal(await frame.locator('#tab-video').getAttribute('aria-selected'), 'true', 'the tab it was left on');
    assert.equal(await restored.locator('textarea.prompt').inputValue(), 'A heron at dawn, kept over a reload');
    assert.equal(await restored.locator('input.size').inputValue(), '480 × 832');

    // The gallery comes from the host again: the image of the first scenario, with its real size.
    await frame.locator('#tab-images').click();
    const card = frame.locator('#panel-images .gallery .card', { hasText: 'A red fox in the snow' }).first();
    await card.waitFor();
    assert.match(await card.locator('.dimensions').innerText(), /^\d+ × \d+$/);
    await parkMouse(page);
    await page.screenshot({ path: path.join(REPO_ROOT, 'test-results', 'media-studio-reloaded.png') });
  });

  it('says a failed video task once, with an empty bar and what is known about billing, in light and dark themes', async () => {
    const { page, codeServer } = ui();
    const settingsFile = path.join(codeServer.scratchDir, 'ud', 'User', 'settings.json');
    const original = JSON.parse(await fsp.readFile(settingsFile, 'utf8')) as Record<string, unknown>;
    const writeSettings = async (settings: Record<string, unknown>) => {
      const json = JSON.stringify(settings);
      await replaceUserSettingsJson(page, json, async () => (await fsp.readFile(settingsFile, 'utf8')).trim() === json);
    };
    try {
      await runCommandFromPalette(page, 'Model Gateway: Generate Video');
      const frame = await mediaFrame(page);
      const video = frame.locator('#panel-video');
      await video
        .locator('select.video-model-select option[value="wan2.5-t2v-preview"]')
        .waitFor({ state: 'attached' });
      await video.locator('textarea.prompt').fill('[[fail]] A fox that will not be made');
      await video.locator('input.size').fill('832 × 480');
      await frame.locator('button[aria-label="Submit the video task (billed)"]').click();
      const row = video.locator('.tasks .task', { hasText: 'A fox that will not be made' }).first();
      await row.waitFor();
      // A second task that succeeds, for its "Done" badge in both themes.
      await video.locator('textarea.prompt').fill('A heron that will be made');
      await frame.locator('button[aria-label="Submit the video task (billed)"]').click();
      const done = video.locator('.tasks .task', { hasText: 'A heron that will be made' }).first();
      // (The early polls that let "Generating" show are unit-tested: here the double's own timing decides which stage a poll meets.)
      await row.locator('.badge', { hasText: /^Failed$/ }).waitFor({ timeout: 120_000 });

      // Once: the badge says Failed, one paragraph has the gateway's words.
      const text = await row.innerText();
      const reason = await row.locator('.error-message').innerText();
      assert.match(reason, /^The gateway reports the task as failed: /);
      const upstream =
        reason.replace(/^The gateway reports the task as failed: /, '').split(' It was not resubmitted')[0] ?? '';
      assert.ok(upstream.length > 0);
      assert.equal(text.split(upstream).length - 1, 1, `the gateway's words appear more than once: ${text}`);
      assert.equal(
        await page.locator('.notifications-toasts .notification-toast', { hasText: 'failed' }).count(),
        0,
        'the studio is on screen: no notification repeats the failure',
      );
      // An empty bar, never a full one.
      const bar = row.locator('progress');
      assert.equal(await bar.evaluate((el) => (el as unknown as { value: number }).value), 0);
      assert.match((await bar.getAttribute('class')) ?? '', /progress-failed/);
      assert.match(
        await row.locator('.billing-note').innerText(),
        /^Billing: the gateway charged this task when it accepted it and may refund it/,
      );
      // The figures say what they are.
      assert.match(await row.locator('.meta').innerText(), /video length 5 s · took \d/);
      // The session line leaves the failed task out of the billed videos (the heron's task, submitted too, is the one counted).
      const hover = await statusHover(page, /video task failed/);
      assert.match(await hover.innerText(), /1 video task failed/);
      assert.doesNotMatch(await hover.innerText(), /2 video tasks/);

      // The gallery card: Open and a menu of the rest, reachable from the keyboard.
      await frame.locator('#tab-images').click();
      const card = frame.locator('#panel-images .gallery .card').first();
      await card.waitFor();
      assert.equal(
        await card.locator('.item-actions > button, .item-actions > .more > button').count(),
        2,
        'two buttons on a card',
      );
      const toggle = card.locator('button.more-toggle');
      await toggle.focus();
      await page.keyboard.press('Enter');
      const menu = card.locator('.more-menu[role="menu"]');
      await menu.waitFor();
      assert.ok((await menu.innerText()).includes('Remove from Gallery (file kept)'), await menu.innerText());
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Escape');
      await menu.waitFor({ state: 'hidden' });
      assert.equal(
        await toggle.evaluate((el) => el === (el.ownerDocument as unknown as { activeElement: unknown }).activeElement),
        true,
        'focus back on the menu button',
      );

      mkdirSync(path.join(REPO_ROOT, 'test-results', 'e2e-media'), { recursive: true });
      for (const theme of [
        { name: 'light', setting: 'Default Light Modern', workbenchClass: 'vs' },
        { name: 'dark', setting: 'Default Dark Modern', workbenchClass: 'vs-dark' },
      ]) {
        await writeSettings({ ...original, 'workbench.colorTheme': theme.setting });
        await page.locator(`.monaco-workbench.${theme.workbenchClass}`).waitFor();
        await frame.locator('#tab-video').click();
        await row.waitFor();
        const badge = done.locator('.badge', { hasText: /^Done$/ });
        await badge.waitFor({ timeout: 120_000 });
        // Only the colours are read in the page (a function defined in there would need the test build's helpers).
        const colours = await badge.evaluate((el) => {
          const view = el.ownerDocument.defaultView as unknown as {
            getComputedStyle(e: unknown): { color: string; backgroundColor: string };
          };
          const style = view.getComputedStyle(el);
          return [style.color, style.backgroundColor];
        });
        const [fg, bg] = colours.map(luminance) as [number, number];
        const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
        assert.ok(ratio >= 4.5, `the Done badge's contrast in the ${theme.name} theme is ${ratio.toFixed(2)}:1`);
        await parkMouse(page);
        await page.screenshot({
          path: path.join(REPO_ROOT, 'test-results', 'e2e-media', `video-failed-${theme.name}.png`),
        });
      }
    } finally {
      await writeSettings(original);
    }
  });
});

/** WCAG relative luminance of a CSS `rgb(…)` / `rgba(…)` colour. */
function luminance(colour: string): number {
  const [r = 0, g = 0, b = 0] = (colour.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
    const x = Number(v) / 255;
    return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
