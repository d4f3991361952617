/**
 * The chat's layout in the real side bar: at 220, 300 and 600 px and in a light and a dark theme,
 * answers keep most of the view's height and the composer (the message box with its model picker,
 * toggles and Send) wraps instead of overflowing. Screenshots: test-results/e2e-chat-layout/.
 */
import * as assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import { REPO_ROOT } from './environment';
import {
  clearNotifications,
  MODELS_HEADER,
  masked,
  openNewChat,
  parkMouse,
  replaceUserSettingsJson,
  resizeSidebar,
  sendChatMessage as send,
  setApiKey,
  waitForStatus,
} from './workbench';

const SHOTS = path.join(REPO_ROOT, 'test-results', 'e2e-chat-layout');
const WIDTHS = [220, 300, 600];
const THEMES = [
  { name: 'light', setting: 'Default Light Modern', bodyClass: 'vscode-light', workbenchClass: 'vs' },
  { name: 'dark', setting: 'Default Dark Modern', bodyClass: 'vscode-dark', workbenchClass: 'vs-dark' },
] as const;

interface Layout {
  /** The webview's height and the messages' and composer's shares of it. */
  view: number;
  messages: number;
  composer: number;
  /** How far the composer's content reaches past its right edge (0: it fits). */
  overflow: number;
  /** Whether Send sits inside the message box. */
  sendInBox: boolean;
}

async function measure(frame: FrameLocator): Promise<Layout> {
  const box = async (selector: string) => {
    const b = await frame.locator(selector).boundingBox();
    if (!b) throw new Error(`${selector} is not on screen`);
    return b;
  };
  const app = await box('#app');
  const messages = await box('main.messages');
  const composer = await box('footer.composer');
  const input = await box('.composer-box');
  const sendButton = await box('button[aria-label^="Send the message"]');
  const overflow = await frame.locator('footer.composer').evaluate((el) => {
    const e = el as unknown as {
      scrollWidth: number;
      clientWidth: number;
      querySelectorAll(s: string): ArrayLike<{ getBoundingClientRect(): { right: number } }>;
      getBoundingClientRect(): { right: number };
    };
    const right = e.getBoundingClientRect().right;
    const furthest = Math.max(...Array.from(e.querySelectorAll('*'), (c) => c.getBoundingClientRect().right));
    return Math.max(e.scrollWidth - e.clientWidth, furthest - right, 0);
  });
  const sendInBox =
    sendButton.x >= input.x &&
    sendButton.x + sendButton.width <= input.x + input.width + 0.5 &&
    sendButton.y + sendButton.height <= input.y + input.height + 0.5;
  return { view: app.height, messages: messages.height, composer: composer.height, overflow, sendInBox };
}

describe('Chat layout in the side bar', () => {
  let settingsFile = '';
  let original: Record<string, unknown> = {};

  const writeSettings = async (page: Page, settings: Record<string, unknown>): Promise<void> => {
    const json = JSON.stringify(settings);
    await replaceUserSettingsJson(page, json, async () => (await fsp.readFile(settingsFile, 'utf8')).trim() === json);
  };

  before(async () => {
    const { page, codeServer } = ui();
    settingsFile = path.join(codeServer.scratchDir, 'ud', 'User', 'settings.json');
    original = JSON.parse(await fsp.readFile(settingsFile, 'utf8')) as Record<string, unknown>;
    await fsp.mkdir(SHOTS, { recursive: true });
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
  });

  after(async () => {
    const { page } = ui();
    await writeSettings(page, original);
  });

  it('keeps most of the height for answers and a compact composer at 220, 300 and 600 px, light and dark', async () => {
    const { page } = ui();
    const problems: string[] = [];
    for (const theme of THEMES) {
      await writeSettings(page, { ...original, 'workbench.colorTheme': theme.setting });
      await page.locator(`.monaco-workbench.${theme.workbenchClass}`).waitFor();
      const frame = await openNewChat(page);
      // The chat alone in its container, as a user makes room for it.
      const models = page.locator(`${MODELS_HEADER}[aria-expanded="true"]`);
      if ((await models.count()) > 0) await models.click();
      await frame.locator('select.model-select').selectOption('gpt-4o-mini');
      // A starter prompt is offered in the empty chat.
      await frame.locator('.starter').first().waitFor();
      const answer = await send(frame, `[[long:3]] A long answer for the ${theme.name} layout`);
      await answer.filter({ hasText: 'Echo from gpt-4o-mini' }).waitFor();
      await frame.locator('button[aria-label^="Send the message"]').waitFor();
      await frame.locator(`body.${theme.bodyClass}`).waitFor();
      for (const width of WIDTHS) {
        await resizeSidebar(page, width);
        await parkMouse(page);
        // The view follows the side bar (allow for the sash and borders).
        const sidebar = await page.locator('.part.sidebar').boundingBox();
        assert.ok(
          sidebar && Math.abs(sidebar.width - width) < 12,
          `the side bar is ${sidebar?.width} px wide, not ${width}`,
        );
        // A reader at the end of the answer stays there while the text wraps again.
        const distance = () =>
          frame.locator('main.messages').evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
        const settled = Date.now() + 5_000;
        let fromEnd = await distance();
        while (fromEnd > 2 && Date.now() < settled) {
          await page.waitForTimeout(100);
          fromEnd = await distance();
        }
        const layout = await measure(frame);
        await page.screenshot({
          path: path.join(SHOTS, `chat-${theme.name}-${width}.png`),
          caret: 'hide',
          animations: 'disabled',
        });
        const share = layout.messages / layout.view;
        const where = `${theme.name} ${width} px`;
        if (share <= 0.6)
          problems.push(
            `${where}: the messages have ${Math.round(share * 100)} % of the height (${Math.round(layout.messages)} of ${Math.round(layout.view)} px; the composer ${Math.round(layout.composer)} px)`,
          );
        if (layout.overflow > 1) problems.push(`${where}: the composer overflows by ${Math.round(layout.overflow)} px`);
        if (!layout.sendInBox) problems.push(`${where}: Send is not inside the message box`);
        if (fromEnd > 2)
          problems.push(`${where}: the end of the answer is ${Math.round(fromEnd)} px out of view after the resize`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
