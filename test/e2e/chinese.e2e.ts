/**
 * The extension in a VS Code whose display language is Simplified Chinese. No language pack for
 * VS Code itself can be installed here (none is on the npm registry), so the workbench's own words
 * stay English; code-server's `--locale zh-cn` still makes `vscode.env.language` `zh-cn` and hands
 * the extension its `l10n/bundle.l10n.zh-cn.json` and `package.nls.zh-cn.json`: exactly the path a
 * Chinese VS Code takes for this extension. Screenshots: test-results/e2e-zh-cn/.
 */
import * as assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import { REPO_ROOT, type LocalisedWorkbench } from './environment';
import {
  chatFrame,
  masked,
  mediaFrame,
  parkMouse,
  pasteInto,
  runCommandFromPalette,
  runFromPalette,
  statusItem,
} from './workbench';

const SHOTS = path.join(REPO_ROOT, 'test-results', 'e2e-zh-cn');
const nls = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.nls.zh-cn.json'), 'utf8')) as Record<string, string>;
const zh = JSON.parse(readFileSync(path.join(REPO_ROOT, 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8')) as Record<
  string,
  string
>;

/** A command's palette label in Chinese: "<category>: <title>", from the Chinese manifest strings. */
function command(titleKey: string): string {
  const category = nls['command.category'];
  const title = nls[titleKey];
  if (!category || !title) throw new Error(`package.nls.zh-cn.json has no ${titleKey}`);
  return `${category}: ${title}`;
}

/** The Chinese of an English string of the code (the test fails if the bundle lacks it). */
function t(english: string): string {
  const text = zh[english];
  if (!text) throw new Error(`no Chinese for "${english}"`);
  return text;
}

async function shoot(page: Page, name: string): Promise<void> {
  await parkMouse(page);
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, name) });
}

async function lang(frame: FrameLocator): Promise<string | null> {
  return frame.locator('html').getAttribute('lang');
}

describe('In Chinese (code-server --locale zh-cn)', () => {
  let workbench: LocalisedWorkbench | undefined;
  const page = (): Page => {
    if (!workbench) throw new Error('the Chinese workbench did not start');
    return workbench.page;
  };

  before(async () => {
    workbench = await ui().openInLanguage('zh-cn');
    // Set API Key, found in the palette by its Chinese title.
    await runFromPalette(page(), command('command.setApiKey.title'));
    const input = page().locator('.quick-input-widget input[type="password"]');
    await input.waitFor();
    await pasteInto(page(), input, DEMO_KEY);
    await page().keyboard.press('Enter');
    await statusItem(page())
      .filter({ hasText: masked(DEMO_KEY) })
      .waitFor();
  });
  after(async () => {
    await workbench?.stop();
  });

  it('shows the chat in Chinese: its page language, labels and a streamed answer', async () => {
    await runCommandFromPalette(page(), command('command.newChat.title'));
    const frame = chatFrame(page());
    const input = frame.locator(`textarea[aria-label="${t('Message')}"]`);
    await input.waitFor();
    assert.equal(await lang(frame), 'zh-cn', 'the host hands the webview the display language');
    assert.equal(await input.getAttribute('placeholder'), t('Ask anything'));
    await frame.locator('select.model-select option[value="gpt-4o-mini"]').waitFor({ state: 'attached' });
    await frame.locator('select.model-select').selectOption('gpt-4o-mini');
    await input.fill('用一句话介绍**排序**');
    await input.press('Enter');
    const answer = frame.locator('article.msg-assistant').last();
    await answer.locator('.md strong').first().waitFor();
    await frame.getByRole('button', { name: t('Send the message (Enter)') }).waitFor();
    assert.equal(await answer.locator('.msg-role').innerText(), t('Assistant'));
    assert.match(await answer.locator('.msg-usage').innerText(), /^Token：(输入|输出) [\d,]+/);
    await frame.getByRole('button', { name: t('Copy the answer') }).waitFor();
    await shoot(page(), 'chat.png');
  });

  it('shows the Media Studio in Chinese: tabs, form, billing note and gallery', async () => {
    await runCommandFromPalette(page(), command('command.openMediaStudio.title'));
    const frame = await mediaFrame(page());
    assert.equal(await lang(frame), 'zh-cn');
    await frame.locator('h1.title', { hasText: t('Media Studio') }).waitFor();
    await frame.getByRole('tab', { name: t('Images') }).click();
    const images = frame.locator('#panel-images');
    await images.locator('select.model-select option[value="gpt-image-1"]').waitFor({ state: 'attached' });
    await images.locator('select[name="route"]').selectOption('images');
    await images.getByPlaceholder(t('Describe the image…')).fill('雪中的红狐');
    await images.locator('input.size').fill('1024x1024');
    await frame.getByRole('button', { name: t('Generate the image') }).click();
    await images.locator('.job-done').waitFor();
    await images.locator('.gallery .card', { hasText: '雪中的红狐' }).first().locator('img.thumb').waitFor();
    assert.match(await images.locator('.job-status').innerText(), /^已保存 /);
    await shoot(page(), 'media-images.png');

    await frame.getByRole('tab', { name: t('Video') }).click();
    const video = frame.locator('#panel-video');
    await video.locator('select.video-model-select option[value="wan2.5-t2v-preview"]').waitFor({ state: 'attached' });
    await video.getByPlaceholder(t('Describe the video…')).fill('雪中奔跑的狐狸');
    await video.locator('.billing', { hasText: '按任务计费' }).waitFor();
    // Durations in Chinese units, in the billing note and the model's hint alike.
    assert.match(await video.locator('.billing').innerText(), /wan2\.5-t2v-preview，5 秒，832 × 480 \(480P\)/);
    assert.doesNotMatch(await video.locator('.note').first().innerText(), /\d s\b/);
    await video
      .locator('.empty', {
        hasText: t('No video tasks yet. Submitted tasks are kept with this workspace and resume after a reload.'),
      })
      .waitFor();
    await shoot(page(), 'media-video.png');

    // A task the upstream's moderation fails: its words verbatim, after a Chinese sentence saying what happened.
    await video.getByPlaceholder(t('Describe the video…')).fill('[[fail]] 不会生成的狐狸');
    await frame.getByRole('button', { name: t('Submit the video task (billed)') }).click();
    const row = video.locator('.tasks .task', { hasText: '不会生成的狐狸' }).first();
    await row.locator('.badge', { hasText: new RegExp(`^${t('Failed')}$`) }).waitFor({ timeout: 120_000 });
    const reason = await row.locator('.error-message').innerText();
    assert.ok(reason.startsWith('网关报告任务失败：'), reason);
    assert.match(reason, /inappropriate content/, 'the upstream words stay as they came');
    assert.ok((await row.locator('.billing-note').innerText()).startsWith('计费：'));
    const meta = await row.locator('.meta').innerText();
    assert.match(meta, /视频时长 5 秒 · 用时 /);
    assert.doesNotMatch(meta, /\d s\b/, `English units: ${meta}`);
    await shoot(page(), 'media-video-failed.png');
  });
});
