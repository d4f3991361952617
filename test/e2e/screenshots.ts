/**
 * README screenshots from the real workbench, driven by the same steps as the UI tests, at the
 * same fixed viewport:
 *
 *   npx tsx test/e2e/screenshots.ts      → media/screenshots/*.webp
 *
 * The README (and so the .vsix, whose Extensions page renders it) shows them: lossless WebP
 * (encoded by sharp, a development dependency), every pixel as the workbench drew it. A workbench's
 * flat colours and sharp text compress better losslessly than as JPEG at quality 75, whose blocks
 * around letters are noise that costs bytes: three such pictures took 59 KB, 68 KB as PNG at zlib's
 * level 9, 124 KB as JPEG.
 */
import * as fsp from 'node:fs/promises';
import type { FrameLocator } from 'playwright-core';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { DEMO_KEY } from '../gateway';
import { saveFailureArtifacts } from '../vscode/browser';
import { REPO_ROOT, startEnvironment, type E2eEnvironment } from './environment';
import {
  chatConversationTitle,
  checkConnection,
  clearNotifications,
  openNewChat,
  replaceUserSettingsJson,
  sendChatMessage,
  expandGroup,
  masked,
  MODELS_HEADER,
  modelRow,
  openModelsView,
  openSetApiKey,
  parkMouse,
  pasteInto,
  pickExactCommand,
  resizeSidebar,
  runCommandFromPalette,
  submitApiKey,
  waitForStatus,
} from './workbench';

const OUT_DIR = path.join(REPO_ROOT, 'media', 'screenshots');
/** Wide enough for "provider — protocols" descriptions, which the default 300 px sidebar cuts off. */
const SIDEBAR_WIDTH = 520;
/** The chat at a roomy but common side-bar width, as in the layout test's widest case. */
const CHAT_WIDTH = 420;
/** The title the pictured conversation is given (Rename Chat), as a user would title it. */
const SHOWN_TITLE = 'What can you render?';
/**
 * The themes the README shows the chat in: one. A second picture of the same chat in the light theme
 * cost 21 KB of the .vsix (whose size has a budget: `npm run bench`) and told a reader nothing new;
 * the UI tests take both themes (test-results/).
 */
const THEMES = [{ name: 'dark', setting: 'Default Dark Modern', workbenchClass: 'vs-dark' }] as const;

/**
 * The window from its left edge to the side bar's right edge, full height (title, activity and
 * status bars included): the extension's views live there, and the empty editor area beside them
 * would only shrink them when the README shows two pictures side by side (and cost bytes).
 */
async function shoot(page: Page, name: string): Promise<string> {
  // No hover card or blinking caret decides what the picture shows.
  await parkMouse(page);
  const file = path.join(OUT_DIR, name);
  const sidebar = await page.locator('.part.sidebar').boundingBox();
  const viewport = page.viewportSize();
  if (!sidebar || !viewport) throw new Error('the side bar is not on screen');
  const clip = { x: 0, y: 0, width: Math.ceil(sidebar.x + sidebar.width), height: viewport.height };
  const png = await page.screenshot({ type: 'png', caret: 'hide', animations: 'disabled', clip });
  // effort 6: the slowest and smallest encoding; a second for a picture this size.
  await fsp.writeFile(file, await sharp(png).webp({ lossless: true, effort: 6 }).toBuffer());
  console.log(`wrote ${path.relative(REPO_ROOT, file)}`);
  return file;
}

export async function takeScreenshots(env: E2eEnvironment): Promise<string[]> {
  const { page } = env;
  await fsp.mkdir(OUT_DIR, { recursive: true });
  const files: string[] = [];

  // The key as a new user enters it (shown only as dots), then the models the key may use.
  const input = await openSetApiKey(page);
  await pasteInto(page, input, DEMO_KEY);
  await submitApiKey(page, input, DEMO_KEY);
  await waitForStatus(page, masked(DEMO_KEY), 'check');

  await openModelsView(page);
  await resizeSidebar(page, SIDEBAR_WIDTH);

  await modelRow(page, 'qwen-max').filter({ hasText: 'not available to this key' }).waitFor();
  // Tools, because a tool entry under its own group is what the view adds over a plain model list.
  await expandGroup(page, 'Tools');
  // Keyboard focus would leave a highlighted row in the picture.
  await page.locator('.part.editor').click();
  await modelRow(page, 'glm-file-parser').waitFor();
  await checkConnection(page, 'Key accepted');
  // The toast sits over the editor area, outside the picture; the status bar shows the key's state.
  await clearNotifications(page);
  files.push(await shoot(page, 'models-view.webp'));

  // The chat with a rendered answer (headings, lists, a table, highlighted code).
  const settingsFile = path.join(env.codeServer.scratchDir, 'ud', 'User', 'settings.json');
  const original = JSON.parse(await fsp.readFile(settingsFile, 'utf8')) as Record<string, unknown>;
  for (const theme of THEMES) {
    const json = JSON.stringify({ ...original, 'workbench.colorTheme': theme.setting });
    await replaceUserSettingsJson(page, json, async () => (await fsp.readFile(settingsFile, 'utf8')).trim() === json);
    await page.locator(`.monaco-workbench.${theme.workbenchClass}`).waitFor();
    // The settings editor would take the picture's editor area.
    await runCommandFromPalette(page, 'View: Close All Editors');
    const chat: FrameLocator = await openNewChat(page);
    const models = page.locator(`${MODELS_HEADER}[aria-expanded="true"]`);
    if ((await models.count()) > 0) await models.click();
    await resizeSidebar(page, CHAT_WIDTH);
    await chat.locator('select.model-select').selectOption('deepseek-r1');
    const answer = await sendChatMessage(chat, '[[long:2]] Show me what you can render');
    await chat.locator('button[aria-label^="Send the message"]').waitFor({ timeout: 60_000 });
    await answer.locator('.msg-usage').waitFor();
    // A user's conversation has a plain title, not the double's scenario marker it was asked with.
    await pickExactCommand(page, 'Model Gateway: Rename Chat');
    await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Rename conversation' }).waitFor();
    await page.locator('.quick-input-widget input').fill(SHOWN_TITLE);
    await page.keyboard.press('Enter');
    await chatConversationTitle(page).filter({ hasText: SHOWN_TITLE }).waitFor();
    await clearNotifications(page);
    files.push(await shoot(page, `chat-${theme.name}.webp`));
  }
  await replaceUserSettingsJson(page, JSON.stringify(original), async () => true);
  return files;
}

async function main(): Promise<number> {
  const env = await startEnvironment();
  try {
    await takeScreenshots(env);
    return 0;
  } catch (error) {
    console.error(error);
    await saveFailureArtifacts(env.page, 'screenshots', [env.codeServer.logFile]);
    return 1;
  } finally {
    await env.stop();
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
