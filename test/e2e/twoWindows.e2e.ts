import * as assert from 'node:assert/strict';
import type { FrameLocator, Page } from 'playwright-core';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import {
  buttonIn,
  chatFrame,
  clearNotifications,
  masked,
  modalDialog,
  openNewChat,
  pickExactCommand,
  reloadWindow,
  runCommandFromPalette,
  setApiKey,
  waitForStatus,
} from './workbench';

/**
 * How long the other window may take to show a change: the conversations live in the profile's
 * global storage, shared by every window, and each window's chat must follow the files on disk
 * (README, Chat: "Nothing is lost"; two windows are one profile). A few seconds on an idle machine.
 */
const OTHER_WINDOW_MS = 20_000;

const QUICK_INPUT = '.quick-input-widget';

/**
 * The chat view of a window, shown from the palette as a user would, once the host's first
 * snapshot is on screen (the conversation picker is filled only from a snapshot, which the host
 * sends once it has read the stored conversations).
 */
async function showChat(page: Page): Promise<FrameLocator> {
  await runCommandFromPalette(page, 'Model Gateway: Focus on Chat View');
  const frame = chatFrame(page);
  await frame.locator('textarea[aria-label="Message"]').waitFor();
  await frame.locator('select.conversation-select option').first().waitFor({ state: 'attached' });
  return frame;
}

/** The conversation picker's entry for `id` (its option's value is the conversation id). */
function conversationOption(frame: FrameLocator, id: string) {
  return frame.locator(`select.conversation-select option[value="${id}"]`);
}

describe('Two windows on one profile', () => {
  // Window A is the suite's page; window B is a second page on the same code-server and profile.
  let windowB: Page | undefined;
  /** The conversation window A created, shared by the scenarios below (in order). */
  let conversationId = '';
  const question = `two windows: where does the heron nest? (${Date.now().toString(36)})`;

  before(async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
    windowB = await ui().openWindow();
    // B shows its chat (and so has read the conversations) before A creates a new one.
    await showChat(windowB);
  });
  after(async () => {
    await windowB?.close();
    windowB = undefined;
  });

  function pageB(): Page {
    if (!windowB) throw new Error('window B is not open (its before hook failed)');
    return windowB;
  }

  it('a question asked in window A through the palette shows up in window B\'s conversation list', async () => {
    const { page } = ui();
    // A new conversation in A, so the question cannot land in one B already knows. The view is
    // shown (and has read the stored conversations) first: a New Chat that arrives while a window's
    // chat is still loading is overtaken by the latest stored conversation.
    await showChat(page);
    const frameA = await openNewChat(page);
    await pickExactCommand(page, 'Model Gateway: Ask');
    const input = page.locator(`${QUICK_INPUT} input`);
    await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: 'Model Gateway: Ask' }).waitFor();
    await input.fill(question);
    await page.keyboard.press('Enter');
    await frameA.locator('article.msg-assistant', { hasText: `: ${question}` }).waitFor();
    await frameA.locator('button[aria-label^="Send the message"]').waitFor();
    conversationId = await frameA.locator('select.conversation-select').inputValue();
    assert.ok(conversationId, 'window A shows the new conversation as the current one');

    const frameB = chatFrame(pageB());
    try {
      await conversationOption(frameB, conversationId).waitFor({ state: 'attached', timeout: OTHER_WINDOW_MS });
    } catch (error) {
      // Tells "B does not follow the shared storage" apart from "the conversation is not on disk":
      // a reloaded window B reads the stored conversations afresh.
      await reloadWindow(pageB());
      const afterReload = (await conversationOption(await showChat(pageB()), conversationId).count()) > 0;
      throw new Error(
        `window B's conversation list did not show the conversation window A created (${conversationId}) within ${OTHER_WINDOW_MS / 1000} s; ` +
          (afterReload ? 'after reloading window B it does, so B did not follow the shared storage' : 'even a reloaded window B does not list it'),
        { cause: error },
      );
    }
  });

  it('a conversation renamed in window A shows its new title in window B', async () => {
    assert.ok(conversationId, 'needs the conversation of the scenario before');
    const { page } = ui();
    const frameA = await showChat(page);
    assert.equal(await frameA.locator('select.conversation-select').inputValue(), conversationId);
    const title = `Heron nests ${Date.now().toString(36)}`;
    await frameA.getByRole('button', { name: 'Rename this conversation' }).click();
    await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: 'Rename conversation' }).waitFor();
    await page.locator(`${QUICK_INPUT} input`).fill(title);
    await page.keyboard.press('Enter');
    await conversationOption(frameA, conversationId).filter({ hasText: title }).waitFor({ state: 'attached' });

    await conversationOption(chatFrame(pageB()), conversationId)
      .filter({ hasText: title })
      .waitFor({ state: 'attached', timeout: OTHER_WINDOW_MS })
      .catch((error: unknown) => {
        throw new Error(`window B's conversation list did not show the title "${title}" given in window A within ${OTHER_WINDOW_MS / 1000} s`, { cause: error });
      });
  });

  it('a conversation deleted in window A leaves window B\'s conversation list', async () => {
    assert.ok(conversationId, 'needs the conversation of the scenario before');
    const { page } = ui();
    const frameB = chatFrame(pageB());
    // Only a list that showed the conversation can prove it was dropped.
    await conversationOption(frameB, conversationId)
      .waitFor({ state: 'attached', timeout: OTHER_WINDOW_MS })
      .catch((error: unknown) => {
        throw new Error(`window B never showed the conversation (${conversationId}), so its removal cannot be checked`, { cause: error });
      });

    const frameA = await showChat(page);
    assert.equal(await frameA.locator('select.conversation-select').inputValue(), conversationId);
    await frameA.getByRole('button', { name: 'Delete this conversation' }).click();
    const confirm = modalDialog(page, /Delete the conversation/);
    await buttonIn(confirm, 'Delete').click();
    await confirm.waitFor({ state: 'detached' });
    await conversationOption(frameA, conversationId).waitFor({ state: 'detached' });

    await conversationOption(frameB, conversationId)
      .waitFor({ state: 'detached', timeout: OTHER_WINDOW_MS })
      .catch((error: unknown) => {
        throw new Error(`window B still lists the conversation window A deleted (${conversationId}) after ${OTHER_WINDOW_MS / 1000} s`, { cause: error });
      });
  });
});
