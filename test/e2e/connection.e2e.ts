import * as assert from 'node:assert/strict';
import { DEFAULT_GROUPS, DEFAULT_MODELS, DEMO_KEY, DISABLED_KEY } from '../gateway';
import { modelKind } from '../gateway/world';
import { ui } from './context';
import { checkConnection, clearNotifications, masked, pageTextAndMarkup, setApiKey, statusBackground, waitForStatus } from './workbench';

/** What the double's default group grants, counted by the double's own idea of each model's kind. */
function expectedCounts(): string {
  const granted = new Set(DEFAULT_GROUPS.default);
  const count = (kind: string) => DEFAULT_MODELS.filter((m) => granted.has(m.id) && modelKind(m) === kind).length;
  return `Models for this key: ${count('chat')} chat, ${count('image')} image, ${count('video')} video, ${count('tool')} tool`;
}

describe('Check Connection', () => {
  it('reports an accepted key and how many models of each kind it may use', async () => {
    const { page, double } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);

    const toast = await checkConnection(page, 'Key accepted');
    assert.equal(toast.severity, 'info');
    assert.ok(toast.text.includes(`Base address: ${double.url}`), toast.text);
    assert.ok(toast.text.includes(`API key: set (${masked(DEMO_KEY)})`), toast.text);
    assert.ok(toast.text.includes('Key accepted by the gateway.'), toast.text);
    assert.ok(toast.text.includes(expectedCounts()), `expected "${expectedCounts()}" in: ${toast.text}`);
    assert.match(toast.text, /Catalog: \d+ models/);
    assert.equal((await waitForStatus(page, masked(DEMO_KEY), 'check')).text, `Gateway ${masked(DEMO_KEY)}`);
  });

  it('says a disabled key was refused and marks the status bar', async () => {
    const { page } = ui();
    await setApiKey(page, DISABLED_KEY);
    await clearNotifications(page);

    const toast = await checkConnection(page, 'Key refused');
    assert.notEqual(toast.severity, 'info', `a refused key was reported as information: ${toast.text}`);
    assert.ok(toast.text.includes(`API key: set (${masked(DISABLED_KEY)})`), toast.text);
    assert.ok(toast.text.includes('Key refused by the gateway.'), toast.text);
    assert.match(toast.text, /Problem: /);

    const status = await waitForStatus(page, masked(DISABLED_KEY), 'error');
    assert.equal(status.text, `Gateway ${masked(DISABLED_KEY)}`);
    const background = await statusBackground(page);
    assert.notEqual(background, 'rgba(0, 0, 0, 0)', 'the refused key is not highlighted in the status bar');

    const { text, markup } = await pageTextAndMarkup(page);
    assert.ok(!text.includes(DISABLED_KEY) && !markup.includes(DISABLED_KEY), 'the full disabled key is in the page');
  });
});
