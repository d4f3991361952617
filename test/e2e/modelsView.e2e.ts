import * as assert from 'node:assert/strict';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import { expandGroup, masked, modelRow, openModelsView, pageTextAndMarkup, readModelsTree, setApiKey, waitForStatus, type TreeRow } from './workbench';

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
    assert.match(gpt5.description, /^Chat Completions · Responses — openai$/);
    assert.equal(gpt5.ariaLabel, 'gpt-5, Chat model, available, Chat Completions · Responses');

    const qwenMax = row(rows, 'qwen-max');
    assert.equal(qwenMax.group, 'Chat');
    assert.equal(qwenMax.description, 'not available to this key');

    const parser = row(rows, 'glm-file-parser');
    assert.equal(parser.group, 'Tools');
    assert.match(parser.ariaLabel, /^glm-file-parser, Tools model, available/);

    const { text } = await pageTextAndMarkup(page);
    assert.ok(!text.includes(DEMO_KEY), 'the full key is in document.body.innerText');
  });
});
