/**
 * What a newcomer trips over in the chat and the editor, in the real workbench at the default
 * 300 px side bar: Send without a key, the conversation's title beside the view's name (plain text,
 * following Edit & Resend), a model change said in the conversation, "Chat with This Model"
 * starting a new chat, Export asking where to save, and web search results rendered in the group
 * the user works in. Screenshots: test-results/e2e-chat-newcomer/.
 */
import * as assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { until } from '../support/until';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import { REPO_ROOT } from './environment';
import {
  chatConversationTitle,
  chatFrame,
  clearApiKey,
  clearNotifications,
  clickChatTitleAction,
  continuePastBillingNotice,
  masked,
  MODELS_HEADER,
  notification,
  openNewChat,
  parkMouse,
  replaceUserSettingsJson,
  resizeSidebar,
  runCommandFromPalette,
  runFromPalette,
  sendChatMessage as send,
  setApiKey,
  waitForStatus,
  acceptSaveDialog,
} from './workbench';

const SHOTS = path.join(REPO_ROOT, 'test-results', 'e2e-chat-newcomer');
const QUICK_INPUT = '.quick-input-widget';
const WIDTH = 300;
const THEMES = [
  { name: 'light', setting: 'Default Light Modern', workbenchClass: 'vs' },
  { name: 'dark', setting: 'Default Dark Modern', workbenchClass: 'vs-dark' },
] as const;

async function shoot(page: Page, name: string): Promise<void> {
  await fsp.mkdir(SHOTS, { recursive: true });
  await parkMouse(page);
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), caret: 'hide', animations: 'disabled' });
}

/** The user settings file of the workbench under test. */
function settingsFile(): string {
  return path.join(ui().codeServer.scratchDir, 'ud', 'User', 'settings.json');
}

async function writeSettings(page: Page, settings: Record<string, unknown>): Promise<void> {
  // One line: the settings editor indents what is typed into it.
  const json = JSON.stringify(settings);
  await replaceUserSettingsJson(page, json, async () => (await fsp.readFile(settingsFile(), 'utf8')).trim() === json);
}

describe('The chat and the editor for a newcomer (300 px)', () => {
  before(async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
  });

  it('without a key, Send is disabled with the reason and Set API Key beside it, and no starter prompts (light and dark)', async () => {
    const { page } = ui();
    const original = JSON.parse(await fsp.readFile(settingsFile(), 'utf8')) as Record<string, unknown>;
    await clearApiKey(page);
    try {
      for (const theme of THEMES) {
        await writeSettings(page, { ...original, 'workbench.colorTheme': theme.setting });
        await page.locator(`.monaco-workbench.${theme.workbenchClass}`).waitFor();
        await runCommandFromPalette(page, 'Model Gateway: New Chat');
        const frame = chatFrame(page);
        const models = page.locator(`${MODELS_HEADER}[aria-expanded="true"]`);
        if ((await models.count()) > 0) await models.click();
        await resizeSidebar(page, WIDTH);
        const input = frame.locator('textarea[aria-label="Message"]');
        await input.waitFor();
        await input.fill('Hello?');
        const notice = frame.locator('footer.composer .notice', { hasText: 'Set your API key to start chatting.' });
        await notice.waitFor();
        assert.equal(
          await frame.getByRole('button', { name: 'Send the message (Enter)' }).isDisabled(),
          true,
          'Send is disabled',
        );
        assert.equal(await frame.locator('.starter').count(), 0, 'no starter prompts');
        assert.equal(await frame.getByText('Choose a model below').count(), 0);
        assert.equal(await frame.getByText('this key').count(), 0, 'nothing blames a key there is none of');
        await input.press('Enter');
        assert.equal(await frame.locator('article.msg').count(), 0, 'nothing was sent');
        await shoot(page, `no-key-${theme.name}`);
        await input.fill('');
      }
      await writeSettings(page, original);
      await chatFrame(page).locator('footer.composer .notice').getByRole('button', { name: 'Set API Key' }).click();
      await page.locator(`${QUICK_INPUT} input[type="password"], ${QUICK_INPUT} input[type="text"]`).first().waitFor();
      await page.keyboard.press('Escape');
    } finally {
      await writeSettings(page, original).catch(() => undefined);
      await setApiKey(page, DEMO_KEY);
      await waitForStatus(page, masked(DEMO_KEY), 'check');
      await clearNotifications(page);
    }
  });

  it('the title is plain text beside the view name and follows Edit & Resend; a model change is a line in the conversation; Export asks where to save', async () => {
    const { page, workspace } = ui();
    const frame = await openNewChat(page);
    await resizeSidebar(page, WIDTH);
    await frame.locator('select.model-select').selectOption('gpt-4o-mini');
    const answer = await send(frame, '**Explain** the `sort` function');
    await answer.filter({ hasText: 'Echo from gpt-4o-mini' }).waitFor();
    await frame.locator('button[aria-label^="Send the message"]').waitFor();
    const title = chatConversationTitle(page);
    await title.filter({ hasText: 'Explain the sort function' }).waitFor();
    assert.ok(!(await title.innerText()).includes('*'), 'no Markdown marks in the title');

    // Edit & Resend, from the keyboard: the title follows the first question.
    const edit = frame.getByRole('button', { name: 'Edit and resend your last message' });
    await edit.focus();
    await edit.press('Enter');
    const editor = frame.getByRole('textbox', { name: 'Edit your message' });
    await editor.fill('Explain the map function');
    await editor.press('Enter');
    await frame
      .locator('article.msg-assistant', { hasText: 'Echo from gpt-4o-mini: Explain the map function' })
      .waitFor();
    await title.filter({ hasText: 'Explain the map function' }).waitFor();

    // Another model for the same conversation: the conversation says so.
    await frame.locator('button[aria-label^="Send the message"]').waitFor();
    await frame.locator('select.model-select').selectOption('qwen-plus');
    await frame.locator('.msg-notice', { hasText: 'Model switched from gpt-4o-mini to qwen-plus.' }).waitFor();
    // The last answer's actions are in sight, at its end.
    await frame
      .getByRole('toolbar', { name: 'Actions for the answer' })
      .getByRole('button', { name: 'Copy the answer' })
      .waitFor();
    await shoot(page, 'title-and-notice');

    // Export: a save dialog offers a file named after the title; the file is written and can be opened.
    const file = path.join(workspace, 'Explain the map function.md');
    await fsp.rm(file, { force: true });
    await clickChatTitleAction(page, 'Export Chat as Markdown');
    const pathInput = page.locator(`${QUICK_INPUT} input`);
    await pathInput.waitFor();
    // The dialog fills its path in after it opens: wait for the offered name, not its first value.
    await until(
      async () => /Explain the map function\.md$/.test(await pathInput.inputValue()),
      'the save dialog to offer Explain the map function.md',
    );
    await acceptSaveDialog(page);
    await notification(page, 'Exported the conversation to Explain the map function.md.');
    assert.match(await fsp.readFile(file, 'utf8'), /^# Explain the map function\n/);
    assert.equal(
      await page.locator('.part.editor .tab[aria-label^="Untitled"]').count(),
      0,
      'no unsaved Untitled buffer',
    );
    // Opened without a click (a toast's button vanishes with the toast).
    await page.locator('.part.editor .tab.active[aria-label^="Explain the map function.md"]').waitFor();
    await runCommandFromPalette(page, 'View: Close All Editors');
    await fsp.rm(file, { force: true });

    // Chat with This Model: a new chat with that model; the conversation above keeps its own.
    await runFromPalette(page, 'Model Gateway: Chat with This Model');
    await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: 'Chat with This Model' }).waitFor();
    await page.keyboard.type('gpt-4o-mini');
    await page.locator(`${QUICK_INPUT} .monaco-list-row[data-index="0"]`, { hasText: 'gpt-4o-mini' }).waitFor();
    await page.keyboard.press('Enter');
    await frame.locator('article.msg').first().waitFor({ state: 'detached' });
    // The new chat shows first with the model picked last (qwen-plus); the chosen one follows.
    const modelSelect = frame.locator('select.model-select');
    await until(async () => (await modelSelect.inputValue()) === 'gpt-4o-mini', 'the new chat to show gpt-4o-mini');
    await title.filter({ hasText: 'Explain the map function' }).waitFor({ state: 'detached' });
  });

  it('web search results open rendered, in the editor group the user works in (no split)', async () => {
    const { page } = ui();
    const query = 'harbor cranes';
    await runCommandFromPalette(page, 'View: Close All Editors');
    await runFromPalette(page, 'Model Gateway: Search the Web');
    await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: 'Model Gateway: Search the Web' }).waitFor();
    await page.keyboard.type(query);
    await page.keyboard.press('Enter');
    const picks = page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: `Results for "${query}"` });
    await continuePastBillingNotice(page, picks);
    await picks.waitFor();
    await page.keyboard.type('Open all results');
    await page
      .locator(`${QUICK_INPUT} .monaco-list-row[data-index="0"]`, {
        hasText: 'Open all results as a Markdown document',
      })
      .waitFor();
    await page.keyboard.press('Enter');
    // Markdown's preview (a rendered page, not the Markdown source) in the one editor group.
    const preview = page.locator('.part.editor .tab.active[aria-label^="Preview Search harbor cranes"]');
    await preview.waitFor();
    assert.equal(await page.locator('.part.editor .editor-group-container').count(), 1, 'the editor was not split');
    assert.equal(
      await page.locator('.part.editor .tab[aria-label^="Search harbor cranes.md"]').count(),
      0,
      'no Markdown source tab beside it',
    );
    await shoot(page, 'search-results');
    await runCommandFromPalette(page, 'View: Close All Editors');
  });
});
