import * as assert from 'node:assert/strict';
import type { FrameLocator, Page } from 'playwright-core';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import {
  buttonIn,
  chatConversationTitle,
  chatFrame,
  clearNotifications,
  masked,
  modalDialog,
  openNewChat,
  pickExactCommand,
  reloadWindow,
  runCommandFromPalette,
  runFromPalette,
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
 * snapshot is on screen (the message box shows only then).
 */
async function showChat(page: Page): Promise<FrameLocator> {
  await runCommandFromPalette(page, 'Model Gateway: Focus on Chat View');
  const frame = chatFrame(page);
  await frame.locator('textarea[aria-label="Message"]').waitFor();
  return frame;
}

/**
 * Opens a window's Chat History (the view's title-bar clock, here from the palette) and returns
 * its rows. The list follows other windows' changes while it is open.
 */
async function openHistory(page: Page) {
  await runFromPalette(page, 'Model Gateway: Show Chat History');
  await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: 'Chat History' }).waitFor();
  return page.locator(`${QUICK_INPUT} .monaco-list-row`);
}

async function closeHistory(page: Page): Promise<void> {
  await page.keyboard.press('Escape');
  await page.locator(QUICK_INPUT).waitFor({ state: 'hidden' });
}

describe('Two windows on one profile', () => {
  // Window A is the suite's page; window B is a second page on the same code-server and profile.
  let windowB: Page | undefined;
  /** The title of the conversation window A created, shared by the scenarios below (in order). */
  let title = '';
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

  it("a question asked in window A through the palette shows up in window B's chat history", async () => {
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
    // A conversation is titled after its first question.
    await chatConversationTitle(page).filter({ hasText: question }).waitFor();
    title = question;

    const rows = await openHistory(pageB());
    try {
      await rows.filter({ hasText: question }).waitFor({ timeout: OTHER_WINDOW_MS });
    } catch (error) {
      // Tells "B does not follow the shared storage" apart from "the conversation is not on disk":
      // a reloaded window B reads the stored conversations afresh.
      await closeHistory(pageB());
      await reloadWindow(pageB());
      await showChat(pageB());
      const afterReload = (await (await openHistory(pageB())).filter({ hasText: question }).count()) > 0;
      throw new Error(
        `window B's chat history did not list the conversation window A created ("${question}") within ${OTHER_WINDOW_MS / 1000} s; ` +
          (afterReload
            ? 'after reloading window B it does, so B did not follow the shared storage'
            : 'even a reloaded window B does not list it'),
        { cause: error },
      );
    } finally {
      await closeHistory(pageB()).catch(() => undefined);
    }
  });

  it('a conversation renamed in window A shows its new title in window B', async () => {
    assert.ok(title, 'needs the conversation of the scenario before');
    const { page } = ui();
    await showChat(page);
    await chatConversationTitle(page).filter({ hasText: title }).waitFor();
    const renamed = `Heron nests ${Date.now().toString(36)}`;
    // Rename Chat: the view's "…" menu runs the same command.
    await pickExactCommand(page, 'Model Gateway: Rename Chat');
    await page.locator(`${QUICK_INPUT} .quick-input-title`, { hasText: 'Rename conversation' }).waitFor();
    await page.locator(`${QUICK_INPUT} input`).fill(renamed);
    await page.keyboard.press('Enter');
    await chatConversationTitle(page).filter({ hasText: renamed }).waitFor();
    title = renamed;

    const rows = await openHistory(pageB());
    try {
      await rows.filter({ hasText: renamed }).waitFor({ timeout: OTHER_WINDOW_MS });
    } catch (error) {
      throw new Error(
        `window B's chat history did not show the title "${renamed}" given in window A within ${OTHER_WINDOW_MS / 1000} s`,
        { cause: error },
      );
    } finally {
      await closeHistory(pageB()).catch(() => undefined);
    }
  });

  it("a conversation deleted in window A leaves window B's chat history", async () => {
    assert.ok(title, 'needs the conversation of the scenario before');
    const { page } = ui();
    // Only a list that showed the conversation can prove it was dropped; it follows changes while open.
    const rows = await openHistory(pageB());
    try {
      await rows
        .filter({ hasText: title })
        .waitFor({ timeout: OTHER_WINDOW_MS })
        .catch((error: unknown) => {
          throw new Error(`window B never showed the conversation ("${title}"), so its removal cannot be checked`, {
            cause: error,
          });
        });

      await showChat(page);
      await chatConversationTitle(page).filter({ hasText: title }).waitFor();
      // Delete Chat: the view's "…" menu runs the same command.
      await runFromPalette(page, 'Model Gateway: Delete Chat');
      const confirm = modalDialog(page, /Delete the conversation/);
      await buttonIn(confirm, 'Delete').click();
      await confirm.waitFor({ state: 'detached' });
      await chatConversationTitle(page).filter({ hasText: title }).waitFor({ state: 'detached' });

      await rows
        .filter({ hasText: title })
        .waitFor({ state: 'detached', timeout: OTHER_WINDOW_MS })
        .catch((error: unknown) => {
          throw new Error(
            `window B still lists the conversation window A deleted ("${title}") after ${OTHER_WINDOW_MS / 1000} s`,
            { cause: error },
          );
        });
    } finally {
      await closeHistory(pageB()).catch(() => undefined);
    }
  });
});
