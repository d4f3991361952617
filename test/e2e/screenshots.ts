/**
 * README screenshots from the real workbench, driven by the same steps as the UI tests, at the
 * same fixed viewport:
 *
 *   npx tsx test/e2e/screenshots.ts      → media/screenshots/*.png
 *
 * media/screenshots/ is excluded from the .vsix by .vscodeignore.
 */
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { DEMO_KEY } from '../gateway';
import { saveFailureArtifacts } from '../vscode/browser';
import { REPO_ROOT, startEnvironment, type E2eEnvironment } from './environment';
import {
  checkConnection,
  clearNotifications,
  openNewChat,
  sendChatMessage,
  expandGroup,
  masked,
  MODELS_HEADER,
  modelRow,
  openModelsView,
  openSetApiKey,
  parkMouse,
  pasteInto,
  resizeSidebar,
  submitApiKey,
  waitForStatus,
} from './workbench';

const OUT_DIR = path.join(REPO_ROOT, 'media', 'screenshots');
/** Wide enough for "provider — protocols" descriptions, which the default 300 px sidebar cuts off. */
const SIDEBAR_WIDTH = 520;

async function shoot(page: Page, name: string): Promise<string> {
  // No hover card or blinking caret decides what the picture shows.
  await parkMouse(page);
  const file = path.join(OUT_DIR, name);
  await page.screenshot({ path: file, caret: 'hide', animations: 'disabled' });
  console.log(`wrote ${path.relative(REPO_ROOT, file)}`);
  return file;
}

export async function takeScreenshots(env: E2eEnvironment): Promise<string[]> {
  const { page } = env;
  await fsp.mkdir(OUT_DIR, { recursive: true });
  const files: string[] = [];

  // The input box as a new user sees it after pasting: title, prompt, and the key as dots.
  const input = await openSetApiKey(page);
  await pasteInto(page, input, DEMO_KEY);
  files.push(await shoot(page, 'set-api-key.png'));
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
  await clearNotifications(page);
  files.push(await shoot(page, 'models-view.png'));

  await checkConnection(page, 'Key accepted');
  files.push(await shoot(page, 'check-connection.png'));

  // The chat with a rendered answer: headings, lists, a table and highlighted code.
  await clearNotifications(page);
  const chat = await openNewChat(page);
  await page.locator(`${MODELS_HEADER}[aria-expanded="true"]`).click();
  await chat.locator('select.model-select').selectOption('deepseek-r1');
  const answer = await sendChatMessage(chat, '[[long:2]] Show me what you can render');
  await chat.locator('button[aria-label^="Send the message"]').waitFor({ timeout: 60_000 });
  await answer.locator('.msg-usage').waitFor();
  files.push(await shoot(page, 'chat.png'));
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
