import * as assert from 'node:assert/strict';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import {
  checkConnection,
  clearApiKey,
  clearNotifications,
  inputError,
  masked,
  openSetApiKey,
  pageTextAndMarkup,
  parkMouse,
  pasteInto,
  setApiKey,
  statusItem,
  submitApiKey,
  waitForStatus,
} from './workbench';

describe('API key from the command palette', () => {
  it('saves a pasted key and shows only its last four characters', async () => {
    const { page } = ui();
    const input = await openSetApiKey(page);
    assert.equal(await input.getAttribute('type'), 'password', 'the key must be typed into a password box');
    const title = (await page.locator('.quick-input-widget .quick-input-title').innerText()).trim();
    assert.equal(title, 'Model Gateway: Set API Key');
    const toast = await submitApiKey(page, input, DEMO_KEY);
    assert.equal(toast.severity, 'info');
    assert.match(toast.text, new RegExp(`^API key ${masked(DEMO_KEY)} saved`));

    const status = await waitForStatus(page, masked(DEMO_KEY), 'check');
    assert.equal(status.text, `Gateway ${masked(DEMO_KEY)}`);

    // The hover card is part of the page too; show it before looking for the key.
    await statusItem(page).hover();
    await page.locator('.monaco-hover', { hasText: `Key ${masked(DEMO_KEY)} accepted` }).waitFor();
    const { text, markup } = await pageTextAndMarkup(page);
    assert.ok(!text.includes(DEMO_KEY), 'the full key is in document.body.innerText');
    assert.ok(!markup.includes(DEMO_KEY), 'the full key is in the page markup');
    assert.ok(text.includes(masked(DEMO_KEY)), 'the masked key is not shown anywhere');
    await parkMouse(page);
  });

  it('refuses a malformed key inside the input box and does not save it', async () => {
    const { page, double } = ui();
    await clearApiKey(page);
    await waitForStatus(page, 'Gateway: no key');
    await clearNotifications(page);

    const input = await openSetApiKey(page);
    await pasteInto(page, input, `Bearer ${DEMO_KEY}`);
    assert.match(await inputError(page, /without "Bearer"/), /^Paste the key alone/);
    // Enter on an invalid value keeps the box open with the reason, as VS Code does for errors.
    await page.keyboard.press('Enter');
    assert.ok(await input.isVisible(), 'the input box closed on an invalid key');
    assert.match(await inputError(page, /without "Bearer"/), /^Paste the key alone/);

    await pasteInto(page, input, `${DEMO_KEY},${DEMO_KEY}`);
    assert.match(await inputError(page, /two keys joined together/), /Paste exactly one key/);

    await page.keyboard.press('Escape');
    await input.waitFor({ state: 'hidden' });
    assert.equal((await waitForStatus(page, 'Gateway: no key')).text, 'Gateway: no key');
    // Barrier: a later command reads the secret storage and reports no key. A save on the refused
    // Enter would have come before it, so its "saved" toast would be on screen by now.
    await checkConnection(page, 'No API key is set.');
    assert.equal(await page.locator('.notifications-toasts .notification-toast', { hasText: 'saved' }).count(), 0);
    assert.ok(
      double.log.every((e) => !(e.headers.authorization ?? '').toLowerCase().startsWith('bearer bearer')),
      'a "Bearer Bearer" header reached the gateway',
    );
  });

  it('clears the key: notification, and the status bar says there is no key', async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY));
    await clearNotifications(page);

    const toast = await clearApiKey(page);
    assert.equal(toast.text, `API key "default" (${masked(DEMO_KEY)}) was removed from secret storage.`);
    const status = await waitForStatus(page, 'Gateway: no key', 'key');
    assert.equal(status.text, 'Gateway: no key');

    await clearNotifications(page);
    assert.equal((await clearApiKey(page)).text, 'No API key was stored.');
  });
});
