import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import type { Locator, Page } from 'playwright-core';
import { DEMO_KEY } from '../gateway';
import { ui } from '../e2e/context';
import { REPO_ROOT, type LocalisedWorkbench } from '../e2e/environment';
import { until } from '../support/until';
import {
  masked,
  MODELS_HEADER,
  openModelsView,
  parkMouse,
  runFromPalette,
  setApiKey,
  statusItem,
  waitForStatus,
} from '../e2e/workbench';
import { closeLanguageModelsEditor, languageModelRow, screenshot, setTheme } from './chatView';

const nls = (lang: '' | '.zh-cn') =>
  JSON.parse(readFileSync(path.join(REPO_ROOT, `package.nls${lang}.json`), 'utf8')) as Record<string, string>;
const EN = nls('');
const ZH = nls('.zh-cn');

/** "Model Gateway: Get Started" in the palette, in the language of `words`. */
const getStarted = (words: Record<string, string>) =>
  `${words['command.category']}: ${words['command.getStarted.title']}`;

/** A step of the walkthrough by its id in package.json. */
function step(page: Page, id: string): Locator {
  return page.locator(`button.getting-started-step[data-step-id$="#${id}"]`);
}

async function waitDone(page: Page, id: string, timeout = 60_000): Promise<void> {
  await step(page, id).and(page.locator('[aria-checked="true"]')).waitFor({ timeout });
}

/** Opens a step (its description and button show) and clicks its button. */
async function runStep(page: Page, id: string, button: string): Promise<void> {
  // The expanded step's own button is disabled (VS Code opened it as the next one): only a folded one is clicked.
  if ((await step(page, id).getAttribute('aria-expanded')) !== 'true') await step(page, id).click({ timeout: 15_000 });
  await page
    .locator('.getting-started-step.expanded .button-link, .getting-started-step.expanded a', { hasText: button })
    .first()
    .click();
}

/**
 * The first-run walkthrough in VS Code 1.139 (Get Started): opened from the palette and the Models
 * view, each step marked done by what it asks for (the key, Manage Language Models, a utility
 * model), the utility step's button making VS Code's "Set BYOK utility models" box go; English in
 * both themes and Chinese. Screenshots land in test-results/native-chat/.
 */
describe('The first-run walkthrough (VS Code 1.139)', function () {
  it('walks a new user from the key to the utility model, each step done when done, light and dark', async () => {
    const { page, codeServer } = ui();
    const settingsFile = path.join(codeServer.scratchDir, 'ud', 'User', 'settings.json');
    await runFromPalette(page, getStarted(EN));
    await page.locator('.gettingStartedContainer', { hasText: EN['walkthrough.firstRun.title'] }).first().waitFor();
    for (const id of ['setKey', 'manageModels', 'utilityModel', 'agentMode']) await step(page, id).waitFor();
    await parkMouse(page);
    await screenshot(page, 'walkthrough-light');

    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await waitDone(page, 'setKey');

    await runStep(page, 'manageModels', 'Open Chat: Manage Language Models');
    await languageModelRow(page, 'GPT-4o mini').waitFor();
    await closeLanguageModelsEditor(page);
    await waitDone(page, 'manageModels');

    // The walkthrough page is laid out again when a context key changes, which can take the focus
    // and close the quick pick under the pointer: then the step's button is clicked again.
    // A click that chose the model may still throw (the pick closed under it): the step being done ends the tries.
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'modelGateway/' }).first();
    const chosen = () => step(page, 'utilityModel').and(page.locator('[aria-checked="true"]')).isVisible();
    for (let attempt = 1; !(await chosen()); attempt++) {
      try {
        await runStep(page, 'utilityModel', 'Choose Utility Model');
        await row.click({ timeout: 15_000 });
        break;
      } catch (error) {
        if (await chosen()) break;
        if (attempt >= 4) throw error;
        await page.keyboard.press('Escape');
        // The page may have gone with the focus (seen once in the full suite): it is opened again.
        if (!(await step(page, 'utilityModel').isVisible())) await runFromPalette(page, getStarted(EN));
      }
    }
    const written = async (): Promise<unknown> =>
      (parseJsonc(readFileSync(settingsFile, 'utf8')) as Record<string, unknown> | undefined)?.['chat.utilityModel'];
    await until(async () => typeof (await written()) === 'string', 'chat.utilityModel in the user settings');
    // The page marks a step done when it next reads the context keys; one laid out again while the
    // key changed may miss it until it is opened again, as a user going back to Get Started would.
    await waitDone(page, 'utilityModel', 20_000).catch(async () => {
      await runFromPalette(page, getStarted(EN));
      await waitDone(page, 'utilityModel');
    });
    await step(page, 'agentMode').click();
    await parkMouse(page);
    await screenshot(page, 'walkthrough-steps-done-light');
    await setTheme(page, settingsFile, 'dark');
    await parkMouse(page);
    await screenshot(page, 'walkthrough-steps-done-dark');
    await setTheme(page, settingsFile, 'light');
  });

  it('is offered in the Models view and in Chinese', async () => {
    const { page } = ui();
    // The Models view's "…" menu lists Get Started.
    await openModelsView(page);
    const header = page.locator(MODELS_HEADER);
    await header.hover();
    await header.locator('.action-label.codicon-toolbar-more, [aria-label*="More Actions"]').first().click();
    await page
      .locator('.context-view .action-label, .monaco-menu .action-label', { hasText: EN['command.getStarted.title'] })
      .first()
      .waitFor();
    await page.keyboard.press('Escape');

    let workbench: LocalisedWorkbench | undefined;
    try {
      workbench = await ui().openInLanguage('zh-cn');
      const zh = workbench.page;
      await runFromPalette(zh, getStarted(ZH));
      await zh.locator('.gettingStartedContainer', { hasText: ZH['walkthrough.firstRun.title'] }).first().waitFor();
      // Each step's title is in the list whichever step is expanded (the page is laid out again, and
      // another step expanded, whenever a context key changes): the Chinese titles are read there.
      assert.ok(ZH['walkthrough.firstRun.utilityModel.title']);
      await step(zh, 'utilityModel').filter({ hasText: ZH['walkthrough.firstRun.utilityModel.title'] }).waitFor();
      await parkMouse(zh);
      await screenshot(zh, 'walkthrough-zh-cn');
      await statusItem(zh).waitFor();
    } finally {
      await workbench?.stop();
    }
  });
});
