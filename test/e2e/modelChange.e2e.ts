import * as assert from 'node:assert/strict';
import { DEMO_KEY, VIP_KEY, VIP_ONLY_MODEL } from '../gateway';
import { ui } from './context';
import {
  clearNotifications,
  masked,
  openNewChat,
  runCommandFromPalette,
  sendChatMessage as send,
  setApiKey,
  waitForStatus,
} from './workbench';

/**
 * The key changes under a conversation and its model leaves the key's list: the conversation says
 * so and asks which model to continue with (Send waits), and the pick is a line in it.
 */
describe('Chat: a model the key can no longer use', () => {
  after(async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
  });

  it('asks which model to continue with instead of switching silently; the pick is recorded and Send works', async () => {
    const { page } = ui();
    await setApiKey(page, VIP_KEY);
    await waitForStatus(page, masked(VIP_KEY), 'check');
    await runCommandFromPalette(page, 'Model Gateway: Refresh Models');
    const frame = await openNewChat(page);
    await frame.locator(`select.model-select option[value="${VIP_ONLY_MODEL}"]`).waitFor({ state: 'attached' });
    await frame.locator('select.model-select').selectOption(VIP_ONLY_MODEL);
    const first = await send(frame, 'A question for the vip model');
    await first.filter({ hasText: `Echo from ${VIP_ONLY_MODEL}` }).waitFor();

    // The demo key's group is not granted the model.
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await runCommandFromPalette(page, 'Model Gateway: Refresh Models');
    const gone = frame.locator('.model-gone');
    await gone.waitFor();
    assert.match(
      await gone.innerText(),
      new RegExp(`^${VIP_ONLY_MODEL} is not available with the new API key\\. Continue with:`),
    );
    const input = frame.locator('textarea[aria-label="Message"]');
    await input.fill('Still there?');
    const sendButton = frame.locator('button[aria-label^="Send the message"]');
    assert.equal(await sendButton.isDisabled(), true, 'Send waits for a pick');
    assert.match(
      await frame.locator('.composer-note').innerText(),
      new RegExp(`Pick the model to continue with: ${VIP_ONLY_MODEL} is not available`),
    );

    // Picked by keyboard: the first choice gets focus, Enter picks it.
    const choice = gone.getByRole('group', { name: 'Continue with' }).getByRole('button').first();
    const picked = (await choice.innerText()).trim();
    assert.notEqual(picked, VIP_ONLY_MODEL);
    await choice.focus();
    await page.keyboard.press('Enter');
    const line = frame.locator('.msg-notice').last();
    await line
      .filter({ hasText: `${VIP_ONLY_MODEL} is not available with the new API key; continuing with ${picked}.` })
      .waitFor();
    await gone.waitFor({ state: 'hidden' });
    assert.equal(await frame.locator('select.model-select').inputValue(), picked);

    await input.press('Enter');
    const next = frame.locator('article.msg-assistant').nth(1);
    await next.filter({ hasText: `Echo from ${picked}: Still there?` }).waitFor();
  });
});
