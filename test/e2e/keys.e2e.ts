import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { DEMO_KEY, TEAM_KEY, VIP_ONLY_MODEL } from '../gateway';
import { ui } from './context';
import { REPO_ROOT } from './environment';
import {
  chatFrame,
  clearApiKey,
  clearNotifications,
  masked,
  notification,
  openModelsView,
  pageTextAndMarkup,
  parkMouse,
  pasteInto,
  runFromPalette,
  sendChatMessage,
  setApiKey,
  statusHover,
  waitForStatus,
} from './workbench';

const SHOTS = path.join(REPO_ROOT, 'test-results', 'e2e-keys');
const QUICK_INPUT = '.quick-input-widget';

describe('Several API keys', () => {
  after(async () => {
    // Later scenarios expect the one demo key: Clear removes every key, then the demo key is set again.
    const { page } = ui();
    await clearApiKey(page);
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
  });

  it('adds a second key from the palette and chats with a model only it may call', async () => {
    const { page, double } = ui();
    await clearApiKey(page);
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);

    // Add API Key: a name, then the key (a password box), as a user does.
    await runFromPalette(page, 'Model Gateway: Add API Key');
    const name = page.locator(`${QUICK_INPUT} input[aria-label="Model Gateway: Add API Key"]`);
    await name.waitFor();
    await pasteInto(page, name, 'default');
    await page
      .locator(`${QUICK_INPUT} .quick-input-message`, { hasText: 'There is already a key named "default".' })
      .waitFor();
    await pasteInto(page, name, 'team-claude');
    await page.keyboard.press('Enter');
    const secret = page.locator(`${QUICK_INPUT} input[type="password"]`);
    await secret.waitFor();
    await pasteInto(page, secret, TEAM_KEY);
    await page.keyboard.press('Enter');
    const toast = await notification(page, `API key "team-claude" (${masked(TEAM_KEY)}) added`);
    assert.equal(toast.severity, 'info');

    // The Models view groups the models by key; qwen-max is under the team key only.
    await openModelsView(page, 'default');
    const teamNode = page.locator('.monaco-list-row[aria-level="1"]', { hasText: 'team-claude' });
    await teamNode.waitFor();
    assert.match(await teamNode.innerText(), new RegExp(masked(TEAM_KEY)));
    // Under each key its kinds, under them its models (one level deeper than with one key).
    const defaultNode = page.locator('.monaco-list-row[aria-level="1"]', { hasText: 'default' });
    await defaultNode.waitFor();
    // The default key's long list folded away, so the team key's models fit in the pane.
    await defaultNode.click();
    await page.keyboard.press('ArrowLeft');
    await page.locator(`.monaco-list-row[aria-level="3"][aria-label^="${VIP_ONLY_MODEL},"]`).waitFor();
    await page
      .locator('.monaco-list-row[aria-level="3"][aria-label^="gpt-4o-mini,"]', { hasText: 'called with "default"' })
      .waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'models-by-key.png') });

    // The status bar tooltip gives each key's quota under its name.
    await statusHover(page, /Quota of key "team-claude": US\$[\d.]+ left/);
    await page.screenshot({ path: path.join(SHOTS, 'status-tooltip.png') });
    await parkMouse(page);

    // Chat with the model only the team key may call: the request goes with that key.
    await runFromPalette(page, 'Model Gateway: Chat with This Model');
    await page.locator(`${QUICK_INPUT} .monaco-list-row`, { hasText: VIP_ONLY_MODEL }).first().waitFor();
    await pasteInto(page, page.locator(`${QUICK_INPUT} input`).first(), VIP_ONLY_MODEL);
    await page.locator(`${QUICK_INPUT} .monaco-list-row.focused`, { hasText: VIP_ONLY_MODEL }).waitFor();
    await page.keyboard.press('Enter');
    const frame = chatFrame(page);
    await frame.locator(`select.model-select[title^="Model: ${VIP_ONLY_MODEL} "]`).waitFor({ state: 'attached' });
    double.clearLog();
    const answer = await sendChatMessage(frame, 'Which key am I using?');
    await answer.filter({ hasText: `Echo from ${VIP_ONLY_MODEL}:` }).waitFor();
    const chats = double.log.filter((e) => e.path === '/v1/chat/completions');
    assert.equal(chats.length, 1, double.log.map((e) => e.path).join(', '));
    assert.equal(chats[0]?.headers.authorization, `Bearer ${TEAM_KEY}`);
    await page.screenshot({ path: path.join(SHOTS, 'chat-with-team-key.png') });

    const { text, markup } = await pageTextAndMarkup(page);
    for (const key of [DEMO_KEY, TEAM_KEY]) {
      assert.ok(!text.includes(key) && !markup.includes(key), 'a full key is on the page');
    }
  });

  it('Clear API Key asks which key, "All 2 keys" first, and names every key it removed', async () => {
    const { page } = ui();
    const toast = await clearApiKey(page);
    assert.equal(
      toast.text,
      `All 2 API keys were removed from secret storage: "default" (${masked(DEMO_KEY)}), "team-claude" (${masked(TEAM_KEY)}).`,
    );
  });
});
