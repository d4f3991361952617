import * as assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import { REPO_ROOT } from './environment';
import {
  clearNotifications,
  expandGroup,
  masked,
  modelRow,
  notification,
  openModelsView,
  pageTextAndMarkup,
  parkMouse,
  readModelsTree,
  setApiKey,
  waitForStatus,
  type TreeRow,
} from './workbench';

function row(rows: TreeRow[], id: string): TreeRow {
  const found = rows.find((r) => r.level === 2 && r.label === id);
  assert.ok(found, `no row for ${id}; rows: ${rows.map((r) => r.label).join(', ')}`);
  return found;
}

describe('Model Gateway sidebar', () => {
  it('lists the models the key may use, grouped by kind, with protocols and availability', async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await openModelsView(page);
    // The view reloads when the key changes; wait for the demo key's answer, not an earlier one.
    await modelRow(page, 'qwen-max').filter({ hasText: 'not available to this key' }).waitFor();

    await expandGroup(page, 'Tools');
    const rows = await readModelsTree(page);
    assert.deepEqual(
      rows.filter((r) => r.level === 1).map((r) => r.label),
      ['Chat', 'Image', 'Video', 'Tools'],
    );

    const gpt5 = row(rows, 'gpt-5');
    assert.equal(gpt5.group, 'Chat');
    assert.match(
      gpt5.description,
      /^OpenAI — Chat Completions · Responses$/,
      'the provider by its name, not its channel id, first: a narrow view cuts the end of a row',
    );
    assert.equal(gpt5.ariaLabel, 'gpt-5, Chat model, available, Chat Completions · Responses');

    const qwenMax = row(rows, 'qwen-max');
    assert.equal(qwenMax.group, 'Chat');
    assert.equal(qwenMax.description, 'not available to this key');

    const parser = row(rows, 'glm-file-parser');
    assert.equal(parser.group, 'Tools');
    assert.match(parser.ariaLabel, /^glm-file-parser, Tools model, available/);
    assert.match(parser.description, /^Zhipu GLM( — |$)/, `the gateway's zhipu_4v, by name: ${parser.description}`);
    const extract = row(rows, 'kimi-file-extract');
    assert.match(
      extract.description,
      /^Moonshot Kimi( — |$)/,
      `the gateway's "custom" named by the model's vendor: ${extract.description}`,
    );
    assert.ok(!rows.some((r) => /zhipu_4v|^custom( — |$)/.test(r.description)), 'no raw channel id is shown');

    // "Chat with This Model" has an icon of its own beside a chat row (the row's icon is the chat bubbles).
    const gptRow = modelRow(page, 'gpt-5');
    await gptRow.hover();
    const chatAction = gptRow.locator('.actions a[aria-label="Chat with This Model"]');
    await chatAction.waitFor();
    const actionIcon = (await chatAction.getAttribute('class')) ?? '';
    const rowIcon = (await gptRow.locator('.custom-view-tree-node-item-icon').getAttribute('class')) ?? '';
    const iconOf = (cls: string) => /codicon-([a-z-]+)/.exec(cls)?.[1];
    assert.ok(iconOf(actionIcon) && iconOf(rowIcon), `icons: action "${actionIcon}", row "${rowIcon}"`);
    assert.notEqual(iconOf(actionIcon), iconOf(rowIcon), 'the action looks like the row');
    mkdirSync(path.join(REPO_ROOT, 'test-results'), { recursive: true });
    await page.screenshot({ path: path.join(REPO_ROOT, 'test-results', 'models-view-providers.png') });

    // Refresh says what it found.
    await clearNotifications(page);
    await page
      .locator(
        '.part.sidebar .pane-header[aria-label^="Models "] .actions a[aria-label="Refresh Models"], .part.sidebar .composite.title .actions a[aria-label="Refresh Models"]',
      )
      .first()
      .click();
    const toast = await notification(page, /^Models refreshed/);
    assert.match(toast.text, /^Models refreshed: \d+ models are available to this key\.$/);
    await parkMouse(page);
    await page.screenshot({ path: path.join(REPO_ROOT, 'test-results', 'models-view-refreshed.png') });

    const { text } = await pageTextAndMarkup(page);
    assert.ok(!text.includes(DEMO_KEY), 'the full key is in document.body.innerText');
  });
});
