/**
 * What a user does in VS Code's own Chat view (VS Code 1.139), as reusable steps: the Language
 * Models editor, the model and mode pickers, the message box, tool confirmations, Stop and the
 * context indicator. Selectors are the ones seen in code-server 4.139.1; every step waits for a
 * condition, never for a fixed time.
 */
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import type { Locator, Page } from 'playwright-core';
import { REPO_ROOT } from '../e2e/environment';
import { runFromPalette } from '../e2e/workbench';
import { until } from '../support/until';
import { LIMITS } from '../vscode/browser';

export const SHOTS = path.join(REPO_ROOT, 'test-results', 'native-chat');

const INPUT_PART = '.part.auxiliarybar .interactive-input-part';
const SESSION = '.part.auxiliarybar .interactive-session';

/** The Chat view's message box (a Monaco editor). */
export function chatInput(page: Page): Locator {
  return page.locator(`${INPUT_PART} .interactive-input-editor`);
}

/** Opens the Chat view (it starts in the secondary side bar) and waits for its message box. */
export async function showChatView(page: Page): Promise<void> {
  if (!(await chatInput(page).isVisible())) await runFromPalette(page, 'Chat: Focus on Chat View');
  await chatInput(page).waitFor();
}

/** "Chat: Manage Language Models" opens the Language Models editor; returns its row for `modelName` once listed. */
export function languageModelRow(page: Page, modelName: string): Locator {
  // Each row's label reads "<name> from <provider>. Context size: …".
  return page.locator(`.monaco-list-row[aria-label^="${modelName} from Model Gateway."]`).first();
}

export async function closeLanguageModelsEditor(page: Page): Promise<void> {
  const close = page.locator('[aria-label^="Close Modal Editor"]');
  if (await close.isVisible()) await close.click();
  await page.locator('[aria-label^="Close Modal Editor"]').waitFor({ state: 'hidden' });
}

/** Picks a model in the Chat view's model picker by its name, as a user types into its search box. */
export async function pickModel(page: Page, modelName: string): Promise<void> {
  const picker = page.locator(`${INPUT_PART} [aria-label^="Models,"]`).first();
  if ((await picker.getAttribute('aria-label')) === `Models, ${modelName}`) return;
  await chooseFromDropdown(page, picker, async () => {
    await page
      .locator('.action-list-filter-input[placeholder="Search models"]')
      .fill(modelName, { timeout: ATTEMPT_MS });
    await page
      .locator('.chat-model-picker-dropdown .monaco-list-row', { hasText: modelName })
      .first()
      .click({ timeout: ATTEMPT_MS });
    await page.locator(`${INPUT_PART} [aria-label="Models, ${modelName}"]`).first().waitFor({ timeout: ATTEMPT_MS });
  });
}

/** Switches the chat mode (Agent, Ask, Plan). */
export async function pickMode(page: Page, mode: 'Agent' | 'Ask' | 'Plan'): Promise<void> {
  const picker = page.locator(`${INPUT_PART} .chat-mode-picker-item`).first();
  if ((await picker.innerText()).trim() === mode) return;
  await chooseFromDropdown(page, picker, async () => {
    await page.locator(`.context-view .monaco-list-row[aria-label^="${mode},"]`).first().click({ timeout: ATTEMPT_MS });
    await picker.filter({ hasText: mode }).waitFor({ timeout: ATTEMPT_MS });
  });
}

/** How long one attempt at a dropdown may take before it is closed and opened again. */
const ATTEMPT_MS = 10_000;

/**
 * Opens a picker's dropdown and makes the choice, again from the start when an attempt fails: right
 * after a new session or a closed card the first click can land while the view is still taking the
 * focus and open nothing, or the list is laid out again under the pointer and the row is replaced.
 */
async function chooseFromDropdown(page: Page, picker: Locator, choose: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + LIMITS.stepMs;
  for (;;) {
    try {
      await picker.click({ timeout: ATTEMPT_MS });
      await choose();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await page.keyboard.press('Escape');
    }
  }
}

/** Starts a new chat session in the view. */
export async function newChat(page: Page): Promise<void> {
  await page.locator('.part.auxiliarybar [aria-label^="New Chat"]').first().click();
  await page.locator(`${SESSION} .monaco-list-row.response`).first().waitFor({ state: 'detached' });
}

/** Types a prompt into the message box and sends it with Enter; returns the (last) response row. */
export async function sendPrompt(page: Page, prompt: string): Promise<Locator> {
  await chatInput(page).click();
  await page.keyboard.insertText(prompt);
  await page.keyboard.press('Enter');
  return lastResponse(page);
}

export function lastResponse(page: Page): Locator {
  return page.locator(`${SESSION} .monaco-list-row.response`).last();
}

/** The response row once it has finished (no longer loading) and shows `text`. */
export async function waitForAnswer(
  page: Page,
  text: string | RegExp,
  timeoutMs: number = LIMITS.stepMs * 2,
): Promise<Locator> {
  const row = lastResponse(page);
  await row
    .locator('.interactive-response:not(.chat-response-loading)')
    .filter({ hasText: text })
    .waitFor({ timeout: timeoutMs });
  return row;
}

/** The confirmation a tool asks for (the visible one: the list keeps a hidden copy), with its title. */
export function toolConfirmation(page: Page, title: string | RegExp): Locator {
  return page
    .locator('.chat-confirmation-widget:visible, .chat-confirmation-widget2:visible')
    .filter({ hasText: title })
    .first();
}

/** Clicks the confirmation's first Allow button (allow this call, or for the session, whichever VS Code offers first). */
export async function allowTool(page: Page, confirmation: Locator): Promise<void> {
  await confirmation
    .locator('.chat-confirmation-widget-buttons a.monaco-text-button:visible', { hasText: 'Allow' })
    .first()
    .click();
  await confirmation.waitFor({ state: 'hidden' });
}

/** Stop: the send button turns into Cancel while a request runs. */
export async function stopRequest(page: Page): Promise<void> {
  await page
    .locator(
      `${INPUT_PART} a.action-label[aria-label^="Cancel"]:visible, ${INPUT_PART} a.action-label[aria-label^="Stop"]:visible`,
    )
    .first()
    .click();
}

/** The context indicator's tooltip text ("… / … tokens"), read by hovering it as a user does. */
export async function contextUsage(page: Page): Promise<{ used: number; window: number; text: string }> {
  const widget = page
    .locator(`${INPUT_PART} .chat-context-usage-widget, .part.auxiliarybar .chat-context-usage-widget`)
    .first();
  await widget.hover();
  const card = page
    .locator('.monaco-hover, .context-view')
    .filter({ hasText: /tokens/ })
    .last();
  await card.waitFor();
  const text = await card.innerText();
  // The card stays while the pointer is over it and would cover the message box.
  await page.keyboard.press('Escape');
  await page.mouse.move(600, 400);
  await page.locator('.token-details-container').waitFor({ state: 'hidden' });
  const match = /([\d.]+)(K?)\s*\/\s*([\d.]+)(K?)\s*tokens/.exec(text);
  if (!match) throw new Error(`the context indicator shows no token figures: ${text}`);
  const value = (n: string | undefined, k: string | undefined): number => Number(n) * (k ? 1000 : 1);
  return { used: value(match[1], match[2]), window: value(match[3], match[4]), text };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await fsp.mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), caret: 'hide', animations: 'disabled' });
}

/**
 * Switches the colour theme by editing the user settings in VS Code's own editor, as a user can (the
 * theme picker lists no themes in this build's web workbench, and a file written behind its back is
 * not picked up), and waits until the workbench shows it. The key is never part of these settings.
 */
export async function setTheme(page: Page, settingsFile: string, theme: 'light' | 'dark'): Promise<void> {
  const workbench = page.locator(`.monaco-workbench.${theme === 'dark' ? 'vs-dark' : 'vs'}`);
  if (await workbench.isVisible()) return;
  const settings = { ...(parseJsonc(await fsp.readFile(settingsFile, 'utf8')) as Record<string, unknown> | undefined) };
  settings['workbench.colorTheme'] = theme === 'dark' ? 'Default Dark Modern' : 'Default Light Modern';
  await editUserSettings(page, settingsFile, settings);
  await workbench.waitFor();
}

/**
 * "Preferences: Open User Settings (JSON)" opens a modal editor in 1.139 (no tab): the whole text is
 * replaced, saved, and the editor closed once the file on disk holds it.
 */
export async function editUserSettings(
  page: Page,
  settingsFile: string,
  settings: Record<string, unknown>,
): Promise<void> {
  // One line: the editor indents every new line it is given after the previous one.
  const json = JSON.stringify(settings);
  await runFromPalette(page, 'Preferences: Open User Settings (JSON)');
  const close = page.locator('[aria-label^="Close Modal Editor"]');
  await close.waitFor();
  await page.locator('.monaco-editor.focused .view-lines', { hasText: '{' }).waitFor();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(json);
  // Whatever the editor's auto-closing added after the cursor goes.
  await page.keyboard.press('Shift+ControlOrMeta+End');
  await page.keyboard.press('Delete');
  await page.keyboard.press('ControlOrMeta+S');
  await until(
    async () => (await fsp.readFile(settingsFile, 'utf8')).trim() === json,
    'the edited user settings on disk',
    LIMITS.stepMs,
  );
  await close.click();
  await close.waitFor({ state: 'hidden' });
}
