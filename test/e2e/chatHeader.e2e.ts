import * as assert from 'node:assert/strict';
import { DEMO_KEY } from '../gateway';
import { LIMITS } from '../vscode/browser';
import { ui } from './context';
import {
  CHAT_HEADER,
  CHAT_TITLE_ACTIONS,
  chatFrame,
  clearApiKey,
  clearNotifications,
  clickChatTitleAction,
  masked,
  MODELS_HEADER,
  openModelsView,
  openNewChat,
  sendChatMessage as send,
  setApiKey,
  waitForStatus,
} from './workbench';

/** The chat view's title-bar action buttons (icons), by their accessible labels. */
async function titleActionLabels(): Promise<string[]> {
  const { page } = ui();
  const labels = await page
    .locator(CHAT_TITLE_ACTIONS.map((a) => `${a} a.action-label[aria-label]`).join(', '))
    .evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
  return labels.filter(Boolean);
}

describe('Chat header, history and keybindings', () => {
  before(async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
  });

  it('gives the chat the container: Models starts collapsed, New Chat, History and Export are title-bar icons', async () => {
    const { page } = ui();
    await openNewChat(page);
    const chatPane = page.locator(`.part.sidebar .pane:has(${CHAT_HEADER.replace('.part.sidebar ', '')})`);
    const modelsHeader = page.locator(MODELS_HEADER);
    // A fresh profile shows Models collapsed (the manifest's "visibility"), unless an earlier
    // scenario opened it; collapse it the way a user would and measure the chat's share.
    if ((await modelsHeader.getAttribute('aria-expanded')) === 'true') await modelsHeader.click();
    await page.locator(`${MODELS_HEADER}[aria-expanded="false"]`).waitFor();
    const sidebar = await page.locator('.part.sidebar').boundingBox();
    const chat = await chatPane.boundingBox();
    assert.ok(sidebar && chat, 'the side bar and the chat are on screen');
    assert.ok(
      chat.height / sidebar.height > 0.8,
      `the chat has ${Math.round(chat.height)} of ${Math.round(sidebar.height)} px`,
    );
    await page.locator(CHAT_HEADER).hover();
    const labels = await titleActionLabels();
    for (const name of ['New Chat', 'Show Chat History', 'Export Chat as Markdown']) {
      assert.ok(
        labels.some((l) => l.startsWith(name)),
        `"${name}" is a title-bar action (${labels.join(', ')})`,
      );
    }
    // Rename and Delete live in the "…" menu, not as buttons.
    assert.ok(!labels.some((l) => /^(Rename|Delete) Chat/.test(l)), `no Rename/Delete buttons: ${labels.join(', ')}`);
  });

  it('History lists conversations with dates and counts, filters as you type, and opens the one chosen', async () => {
    const { page } = ui();
    const stamp = Date.now().toString(36);
    for (const topic of ['apples', 'pears']) {
      const frame = await openNewChat(page);
      await frame.locator('select.model-select').selectOption('gpt-4o-mini');
      const answer = await send(frame, `History ${topic} ${stamp}`);
      await answer.filter({ hasText: 'Echo from gpt-4o-mini' }).waitFor();
      await frame.locator('button[aria-label^="Send the message"]').waitFor();
    }
    await clickChatTitleAction(page, 'Show Chat History');
    const input = page.locator('.quick-input-widget input[type="text"]');
    await input.waitFor();
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    await rows.filter({ hasText: `History pears ${stamp}` }).waitFor();
    const row = await rows.filter({ hasText: `History apples ${stamp}` }).innerText();
    assert.match(row, /2 messages/, `the row counts the messages: ${row}`);
    assert.match(row, /\d{1,2}:\d{2}/, `the row says when: ${row}`);
    await input.fill(`apples ${stamp}`);
    await rows.filter({ hasText: `History pears ${stamp}` }).waitFor({ state: 'detached' });
    await input.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    const frame = chatFrame(page);
    await frame.locator('article.msg-user', { hasText: `History apples ${stamp}` }).waitFor({ timeout: LIMITS.stepMs });
  });

  it('keybindings: New Chat and Focus Chat from anywhere, Add Selection from the editor', async () => {
    const { page } = ui();
    const frame = await openNewChat(page);
    await frame.locator('select.model-select').selectOption('gpt-4o-mini');
    const answer = await send(frame, 'A conversation to leave');
    await answer.filter({ hasText: 'Echo from gpt-4o-mini' }).waitFor();
    // Focus the editor area, then the keybinding for a new chat: the chat empties and takes focus.
    await page.locator('.part.editor').click({ position: { x: 20, y: 20 } });
    await page.keyboard.press('Control+Shift+Alt+M');
    await frame.locator('article.msg').first().waitFor({ state: 'detached' });
    await page.locator('.part.editor').click({ position: { x: 20, y: 20 } });
    await page.keyboard.press('Control+Shift+Alt+G');
    await frame.locator('textarea[aria-label="Message"]:focus').waitFor();
  });

  it('without a key, the Models view welcomes with what to do and a Set API Key button', async () => {
    const { page } = ui();
    await openModelsView(page);
    const header = page.locator(MODELS_HEADER);
    await clearApiKey(page);
    try {
      const welcome = page.locator('.part.sidebar .welcome-view-content', { hasText: 'Paste the API key you copied' });
      await welcome.waitFor();
      await welcome.locator('a.monaco-button', { hasText: 'Set API Key' }).click();
      await page
        .locator('.quick-input-widget input[type="password"], .quick-input-widget input[type="text"]')
        .first()
        .waitFor();
      await page.keyboard.press('Escape');
      await header.click();
    } finally {
      await setApiKey(page, DEMO_KEY);
      await waitForStatus(page, masked(DEMO_KEY), 'check');
    }
  });
});
