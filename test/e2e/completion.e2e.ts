import * as assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import { REPO_ROOT } from './environment';
import {
  clearNotifications,
  dismissInputs,
  masked,
  parkMouse,
  pickExactCommand,
  replaceUserSettingsJson,
  runExactCommandFromPalette,
  setApiKey,
  waitForStatus,
} from './workbench';

const SHOTS = path.join(REPO_ROOT, 'test-results', 'e2e-completion');
const QUICK_INPUT = '.quick-input-widget';
const COMPLETION_ITEM = '.part.statusbar [id="model-gateway.model-gateway.modelGateway.completions"]';
const EDITOR = '.part.editor .editor-group-container.active .monaco-editor';
const THEMES = [
  { name: 'light', setting: 'Default Light Modern', workbenchClass: 'vs' },
  { name: 'dark', setting: 'Default Dark Modern', workbenchClass: 'vs-dark' },
] as const;

async function shoot(page: Page, name: string): Promise<void> {
  await fsp.mkdir(SHOTS, { recursive: true });
  await parkMouse(page);
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), animations: 'disabled' });
}

function settingsFile(): string {
  return path.join(ui().codeServer.scratchDir, 'ud', 'User', 'settings.json');
}

async function writeSettings(page: Page, settings: Record<string, unknown>): Promise<void> {
  // One line: the settings editor indents what is typed into it.
  const json = JSON.stringify(settings);
  await replaceUserSettingsJson(page, json, async () => (await fsp.readFile(settingsFile(), 'utf8')).trim() === json);
}

describe('Inline code completion', () => {
  before(async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
  });

  it('offers a model with its cost, shows ghost text at the cursor that Tab accepts, and the status item (light and dark)', async () => {
    const { page, workspace } = ui();
    const original = JSON.parse(await fsp.readFile(settingsFile(), 'utf8')) as Record<string, unknown>;
    const item = page.locator(COMPLETION_ITEM);
    try {
      for (const theme of THEMES) {
        // Each theme starts with completion off: the settings are replaced, completion's with them.
        await writeSettings(page, { ...original, 'workbench.colorTheme': theme.setting });
        await page.locator(`.monaco-workbench.${theme.workbenchClass}`).waitFor();
        await item.filter({ hasText: 'Completion off' }).waitFor();

        // The first offer: the models, fill-in-the-middle first, each with what 100 completions cost.
        await pickExactCommand(page, 'Model Gateway: Code Completion with a Model…');
        const row = page.locator(`${QUICK_INPUT} .monaco-list-row`, { hasText: 'Code completion with deepseek-chat' });
        await row.waitFor();
        const rowText = await row.innerText();
        assert.match(rowText, /about US\$[\d.]+ per 100 completions|price not known here/, rowText);
        assert.match(rowText, /Fill-in-the-middle/, rowText);
        const first = await page.locator(`${QUICK_INPUT} .monaco-list-row`).first().innerText();
        assert.match(first, /Fill-in-the-middle/, `a FIM model is offered first: ${first}`);
        await shoot(page, `offer-${theme.name}`);
        await page.locator(`${QUICK_INPUT} input`).first().fill('deepseek-chat');
        await row.click();
        await page.locator(QUICK_INPUT).waitFor({ state: 'hidden' });
        await item.filter({ hasText: 'deepseek-chat' }).waitFor();

        // Ghost text at the cursor, as the user types; Tab puts it in the document.
        const name = `complete-${theme.name}.ts`;
        await fsp.writeFile(path.join(workspace, name), '// [[fim:a + b;]]\nconst s =');
        await runFromQuickOpen(page, name);
        const editor = page.locator(EDITOR, { hasText: 'const s =' });
        await editor.locator('.view-lines').click();
        await page.keyboard.press('ControlOrMeta+End');
        await page.keyboard.type(' ');
        // Monaco draws ghost text as spans of the line, one per highlighted token.
        const ghost = editor.locator('.view-line .ghost-text-decoration');
        await ghost.first().waitFor();
        const shown = (await ghost.allInnerTexts()).join('').replace(/\u00a0/g, ' ');
        assert.equal(shown, 'a + b;', 'the ghost text is the completion');
        await shoot(page, `ghost-text-${theme.name}`);
        await page.keyboard.press('Tab');
        // The line reads the same while the ghost text is still drawn: the accepted text is the line
        // with that text and no ghost text in it (Monaco may take a moment after Tab on a busy machine).
        const ghostInLine = page.locator('.ghost-text-decoration');
        await editor.locator('.view-line', { hasText: 'const s = a + b;', hasNot: ghostInLine }).waitFor();
        assert.equal(await editor.locator('.ghost-text-decoration').count(), 0, 'no ghost text left after Tab');
        await shoot(page, `accepted-${theme.name}`);
        await runExactCommandFromPalette(page, 'View: Revert and Close Editor');
        await fsp.rm(path.join(workspace, name), { force: true });
      }
    } finally {
      await dismissInputs(page).catch(() => undefined);
      await writeSettings(page, original).catch(() => undefined);
    }
  });
});

/** Opens a workspace file by name through Quick Open, as a user would (Ctrl+P). */
async function runFromQuickOpen(page: Page, name: string): Promise<void> {
  // A file written a moment ago may not be in Quick Open's file search yet (its watcher runs behind
  // on a busy machine): ask again, as a user would, until the file is listed.
  const row = page.locator(`${QUICK_INPUT} .monaco-list-row.focused`, { hasText: name });
  for (let tries = 1; ; tries++) {
    await page.keyboard.press('ControlOrMeta+P');
    const input = page.locator(`${QUICK_INPUT} input`).first();
    await input.waitFor();
    await input.fill(name);
    const listed = await row.waitFor({ timeout: 20_000 }).then(
      () => true,
      () => false,
    );
    if (listed) break;
    if (tries === 4) throw new Error(`Quick Open did not list ${name}`);
    await page.keyboard.press('Escape');
  }
  await page.keyboard.press('Enter');
  await page.locator(`.part.editor .tab.active[aria-label^="${name}"]`).waitFor();
}
