import * as assert from 'node:assert/strict';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import {
  clearNotifications,
  masked,
  openNewChat,
  sendChatMessage as send,
  setApiKey,
  waitForStatus,
} from './workbench';

/**
 * The honest states of an answer in the real workbench: cut at the token limit with Continue, an
 * error with no text shown as an error with the one action that helps, and Retry only on the last
 * answer, retrying that answer.
 */
describe('Chat answer states', () => {
  before(async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
  });

  afterEach(() => ui().double.clearFaults());

  it('an answer cut at the length limit says so in plain words, and Continue appends to the same answer', async () => {
    const { page } = ui();
    const frame = await openNewChat(page);
    await frame.locator('select.model-select').selectOption('gpt-4o-mini');
    const answer = await send(frame, '[[incomplete]] [[long:1]] tell me everything');
    await answer.locator('.badge.status-length', { hasText: 'Reached the answer length limit' }).waitFor();
    const cut = (await answer.locator('.md.msg-body').innerText()).trim();
    assert.ok(cut.length > 0, 'the cut text is shown');
    await answer.getByRole('button', { name: 'Continue this answer where it stopped' }).click();
    await answer.locator('.badge.status-length').waitFor({ state: 'detached' });
    await frame.locator('button[aria-label^="Send the message"]').waitFor();
    assert.equal(await frame.locator('article.msg-assistant').count(), 1, 'no second answer: the same one goes on');
    const whole = (await answer.locator('.md.msg-body').innerText()).trim();
    assert.ok(
      whole.length > cut.length && whole.startsWith(cut.slice(0, 40)),
      `the continuation is appended (${cut.length} → ${whole.length} characters)`,
    );
  });

  it('an error with no text is an error with its one action; Retry is on the last answer only and retries it', async () => {
    const { page, double } = ui();
    const frame = await openNewChat(page);
    await frame.locator('select.model-select').selectOption('gpt-4o-mini');
    const serverError = (): void =>
      double.inject({
        match: { path: '/v1/chat/completions' },
        times: 1,
        action: {
          type: 'status',
          status: 500,
          body: JSON.stringify({ error: { message: 'upstream exploded', type: 'server_error' } }),
        },
      });

    // A server error with no text: an error (not "Cut off") with Retry, and no Regenerate beside it.
    serverError();
    const first = await send(frame, 'first question');
    await first.locator('.badge', { hasText: /^Error$/ }).waitFor();
    await first.getByRole('button', { name: 'Retry' }).waitFor();
    assert.equal(
      await first.getByRole('button', { name: 'Regenerate the last answer' }).count(),
      0,
      'Retry and Regenerate are not both offered',
    );

    // The next question fails too: Retry moves to the last answer.
    serverError();
    const second = await send(frame, 'second question');
    await second.locator('.badge', { hasText: /^Error$/ }).waitFor();
    const retry = second.getByRole('button', { name: 'Retry' });
    await retry.waitFor();
    await first.getByRole('button', { name: 'Retry' }).waitFor({ state: 'hidden' });

    // Retry answers that same question in place.
    await retry.click();
    await second.filter({ hasText: 'Echo from gpt-4o-mini: second question' }).waitFor();
    await frame.locator('button[aria-label^="Send the message"]').waitFor();
    assert.equal(await frame.locator('article.msg-assistant').count(), 2, 'Retry answered the same question in place');
    assert.equal(await second.locator('.badge', { hasText: /^Error$/ }).count(), 0);

    // The key refused: the one action that helps is Set API Key, not Retry.
    double.inject({
      match: { path: '/v1/chat/completions' },
      times: 1,
      action: {
        type: 'status',
        status: 401,
        body: JSON.stringify({ error: { message: 'invalid token', type: 'invalid_request_error' } }),
      },
    });
    const refused = await send(frame, 'third question');
    await refused.locator('.badge', { hasText: /^Error$/ }).waitFor();
    await refused.getByRole('button', { name: 'Set API Key' }).waitFor();
    assert.equal(await refused.getByRole('button', { name: 'Retry' }).count(), 0, 'no Retry for a refused key');
  });
});
