/**
 * The conversation's notices in the chat webview (noticeView.ts): a model change shown as one
 * quiet line among the messages, and, while the conversation's model cannot be used with the key,
 * the question which model to continue with, answered by keyboard as well as by mouse.
 */
import assert from 'node:assert/strict';
import type { ChatMessageView } from '../../src/shared/protocol';
import type { SuiteBuilder } from './chatView.webtest';
import { assistantMessage, snapshot, snapshotMessage, userMessage } from './fixtures';
import { closeAndCheck, type ChatPage, type WebviewHarness } from './harness';

const SEND = 'Send the message (Enter)';

function noticeMessage(
  id: string,
  from: string,
  to: string,
  reason?: 'keyChanged' | 'modelGone' | 'imageNeedsVision',
): ChatMessageView {
  return {
    id,
    role: 'notice',
    text: '',
    status: 'done',
    notice: { kind: 'modelChange', from, to, ...(reason ? { reason } : {}) },
    createdAt: 1_700_000_002_000,
  };
}

export function defineNoticeTests(t: SuiteBuilder, harness: () => WebviewHarness): void {
  let page: ChatPage | undefined;
  t.afterEach(async () => {
    if (page) {
      const closing = page;
      page = undefined;
      await closeAndCheck(closing);
    }
  });

  t.it(
    'a model change is one quiet line in its place among the messages, with no message actions; Regenerate stays on the answer before it',
    async () => {
      const p = (page = await harness().open());
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [
              userMessage('u1', 'What is in this picture?'),
              noticeMessage('n1', 'glm-4.6', 'gpt-4.1', 'imageNeedsVision'),
              assistantMessage('a1', 'A fox.'),
              noticeMessage('n2', 'gpt-4.1', 'claude-sonnet-4', 'keyChanged'),
            ],
          }),
        ),
      );
      const lines = p.page.locator('.log > .msg-group > *');
      assert.deepEqual(
        await lines.evaluateAll((els) => els.map((el) => el.getAttribute('data-id'))),
        ['u1', 'n1', 'a1', 'n2'],
        'in the order of the conversation',
      );
      const n1 = p.page.locator('.msg-notice[data-id="n1"]');
      assert.equal(await n1.innerText(), 'Model switched from glm-4.6 to gpt-4.1: glm-4.6 does not take images.');
      assert.equal(await n1.getAttribute('role'), 'note');
      assert.equal(
        await p.page.locator('.msg-notice[data-id="n2"]').innerText(),
        'gpt-4.1 is not available with the new API key; continuing with claude-sonnet-4.',
      );
      assert.equal(await p.page.locator('.msg-notice button').count(), 0, 'a notice has no Copy, Edit or Regenerate');
      assert.equal(
        await p.page
          .locator('.msg[data-id="a1"]')
          .getByRole('button', { name: 'Regenerate the last answer' })
          .isVisible(),
        true,
        'the answer before a notice is still the last answer',
      );
      // A second snapshot keeps the same line (no flicker, focus kept) and drops a notice that is gone.
      const handle = await n1.elementHandle();
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [
              userMessage('u1', 'What is in this picture?'),
              noticeMessage('n1', 'glm-4.6', 'gpt-4.1', 'imageNeedsVision'),
              assistantMessage('a1', 'A fox.'),
            ],
          }),
        ),
      );
      assert.equal(await handle?.evaluate((el) => el.isConnected), true);
      assert.equal(await p.page.locator('.msg-notice').count(), 1);
    },
  );

  t.it(
    'a model the key can no longer use: the conversation asks which to continue with, Send waits and says why; the choices work by keyboard',
    async () => {
      const p = (page = await harness().open());
      const messages = [userMessage('u1', 'Hello'), assistantMessage('a1', 'Hi.')];
      await p.push(
        snapshotMessage(
          snapshot({
            messages,
            model: 'gpt-5',
            modelGone: { model: 'gpt-5', choices: ['gpt-4.1', 'gpt-4.1-mini'], keyChanged: false },
          }),
        ),
      );
      const gone = p.page.locator('.model-gone');
      assert.equal(await gone.isVisible(), true);
      assert.match(await gone.innerText(), /^gpt-5 is no longer available with this API key\. Continue with:/);
      const choices = gone.getByRole('group', { name: 'Continue with' }).getByRole('button');
      assert.deepEqual(await choices.allInnerTexts(), ['gpt-4.1', 'gpt-4.1-mini', 'Pick another…']);

      const input = p.page.getByRole('textbox', { name: 'Message' });
      await input.fill('Are you there?');
      assert.equal(await p.page.getByRole('button', { name: SEND }).isDisabled(), true, 'Send waits for a pick');
      assert.equal(
        await p.page.locator('.composer-note').innerText(),
        'Pick the model to continue with: gpt-5 is not available with this API key.',
      );
      await input.press('Enter');

      await p.clearPosted();
      await p.page.getByRole('button', { name: 'Continue with gpt-4.1', exact: true }).focus();
      await p.page.keyboard.press('Tab');
      assert.equal(
        await p.page.evaluate<string>('document.activeElement.textContent'),
        'gpt-4.1-mini',
        'Tab goes from one choice to the next',
      );
      await p.page.keyboard.press('Enter');
      await p.page.keyboard.press('Tab');
      assert.equal(await p.page.evaluate<string>('document.activeElement.textContent'), 'Pick another…');
      await p.page.keyboard.press('Space');
      assert.deepEqual(
        await p.posted(),
        [
          { type: 'selectModel', conversationId: 'c1', model: 'gpt-4.1-mini' },
          { type: 'action', action: 'pickModel', conversationId: 'c1' },
        ],
        'Enter in the box sent nothing; each choice posts its pick',
      );

      // The host recorded the pick: the question is gone, a notice says what happened, Send works again.
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [...messages, noticeMessage('n1', 'gpt-5', 'gpt-4.1-mini', 'modelGone')],
            model: 'gpt-4.1-mini',
          }),
        ),
      );
      assert.equal(await gone.isVisible(), false);
      assert.equal(
        await p.page.locator('.msg-notice[data-id="n1"]').innerText(),
        'gpt-5 is no longer available with this API key; continuing with gpt-4.1-mini.',
      );
      assert.equal(await p.page.getByRole('button', { name: SEND }).isDisabled(), false);
      assert.equal(await p.page.locator('.composer-note').isVisible(), false);
      await p.clearPosted();
      await input.press('Enter');
      assert.deepEqual(
        (await p.posted()).map((m) => (m.type === 'send' ? { ...m, sendId: '' } : m)),
        [{ type: 'send', conversationId: 'c1', text: 'Are you there?', sendId: '' }],
      );
    },
  );
}
