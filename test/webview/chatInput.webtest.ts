/**
 * The chat webview in Chromium (input). The message box: Enter and Shift+Enter, Stop while busy,
 * attachments, the saved draft, focus.
 */
import assert from 'node:assert/strict';
import type { SuiteBuilder } from './chatView.webtest';
import { chatPages, posts, withoutSendIds } from './chatPages';
import { assistantMessage, snapshot, snapshotMessage, userMessage } from './fixtures';
import type { WebviewHarness } from './harness';

export function defineInputTests(s: SuiteBuilder, harness: () => WebviewHarness): void {
  const { open } = chatPages(s, harness);
  s.it('Enter sends, Shift+Enter inserts a newline, empty input is not sent', async () => {
    const p = await open();
    await p.push(snapshotMessage(snapshot()));
    await p.clearPosted();
    const input = p.page.getByRole('textbox', { name: 'Message' });
    await input.focus();
    await p.page.keyboard.press('Enter');
    await input.fill('   ');
    await p.page.keyboard.press('Enter');
    assert.equal(await p.page.getByRole('button', { name: 'Send the message (Enter)' }).isDisabled(), true);
    await input.fill('');
    await p.page.keyboard.type('hello');
    await p.page.keyboard.press('Shift+Enter');
    await p.page.keyboard.type('world');
    assert.equal(await input.inputValue(), 'hello\nworld');
    await p.page.keyboard.press('Enter');
    assert.deepEqual(withoutSendIds(posts(await p.posted(), 'send')), [
      { type: 'send', conversationId: 'c1', text: 'hello\nworld' },
    ]);
    assert.equal(await input.inputValue(), '');
    await p.waitFor(`window.__probe.state?.draft === ''`);
  });

  s.it('an edit the host did not store is back in the box; an answer waiting for a free slot says so', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [userMessage('u1', 'Go'), assistantMessage('a1', '', { status: 'streaming' })],
          busy: true,
        }),
      ),
    );
    const waiting = p.page.locator('.waiting');
    await p.waitFor(`document.querySelector('.waiting')?.textContent === 'Waiting for the answer…'`);
    await p.push({ type: 'queued', conversationId: 'c1', messageId: 'a1' });
    assert.match((await waiting.textContent()) ?? '', /Waiting for a free slot/);
    const input = p.page.getByRole('textbox', { name: 'Message' });
    await input.fill('typed meanwhile');
    await p.push({ type: 'putBack', conversationId: 'c1', text: 'the edited question' });
    assert.equal(await input.inputValue(), 'the edited question\ntyped meanwhile');
  });

  s.it(
    'a refused send puts the text back, before what was typed since; an accepted one lets it go, also across a reload',
    async () => {
      const p = await open();
      await p.push(snapshotMessage(snapshot()));
      await p.clearPosted();
      const input = p.page.getByRole('textbox', { name: 'Message' });
      await input.fill('my long question');
      await input.press('Enter');
      const first = await p.waitForPosted('send');
      assert.equal(first.conversationId, 'c1');
      assert.equal(await input.inputValue(), '', 'cleared while the host takes it');
      await p.page.keyboard.type('typed meanwhile');
      await p.push({ type: 'sendResult', sendId: first.sendId, accepted: false });
      assert.equal(
        await input.inputValue(),
        'my long question\ntyped meanwhile',
        'refused: put back, and nothing typed since is lost',
      );
      await p.waitFor(
        `window.__probe.state?.draft === ${JSON.stringify('my long question\ntyped meanwhile')} && window.__probe.state?.pending.length === 0`,
      );
      await input.fill('taken');
      await p.clearPosted();
      await input.press('Enter');
      const second = await p.waitForPosted('send');
      await p.push({ type: 'sendResult', sendId: second.sendId, accepted: true });
      assert.equal(await input.inputValue(), '');
      await p.waitFor(`window.__probe.state?.pending.length === 0 && window.__probe.state?.draft === ''`);
      // Answers that never came (the page reloaded): each text is back unless the conversation holds it.
      await input.fill('stored after all');
      await input.press('Enter');
      await input.fill('never answered');
      await input.press('Enter');
      await p.waitFor(`window.__probe.state?.pending.length === 2`);
      const saved = await p.uiState<object>();
      const again = await open({ uiState: saved });
      await again.push(snapshotMessage(snapshot({ messages: [userMessage('u1', 'stored after all')] })));
      await again.waitFor(`window.__probe.state?.pending.length === 0`);
      assert.equal(await again.page.getByRole('textbox', { name: 'Message' }).inputValue(), 'never answered');
    },
  );

  s.it('Stop (button or Escape) takes the place of Send inside the box while busy, and sending waits', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [userMessage('u1', 'Hi'), assistantMessage('a1', 'Thinking', { status: 'streaming' })],
          busy: true,
        }),
      ),
    );
    const stop = p.page.locator('.composer-box').getByRole('button', { name: 'Stop the answer (Escape)' });
    const send = p.page.locator('.composer-box').getByRole('button', { name: 'Send the message (Enter)' });
    assert.equal(await stop.isVisible(), true);
    assert.equal(await send.isVisible(), false, 'Stop replaces Send');
    const box = await p.page.locator('.composer-box').boundingBox();
    const at = await stop.boundingBox();
    assert.ok(
      box && at && at.x >= box.x && at.x + at.width <= box.x + box.width && at.y + at.height <= box.y + box.height,
      'Stop is inside the input box',
    );
    await p.clearPosted();
    await stop.click();
    assert.deepEqual(await p.posted(), [{ type: 'stop', conversationId: 'c1' }]);
    const input = p.page.getByRole('textbox', { name: 'Message' });
    await input.fill('next question');
    await input.press('Enter');
    await input.press('Escape');
    assert.deepEqual(
      await p.posted(),
      [
        { type: 'stop', conversationId: 'c1' },
        { type: 'stop', conversationId: 'c1' },
      ],
      'Enter does not send while busy; Escape stops',
    );
    await p.push({ type: 'busy', conversationId: 'c1', busy: false });
    assert.equal(await stop.isVisible(), false);
    assert.equal(await send.isVisible(), true, 'Send is back');
    await input.press('Enter');
    assert.deepEqual(withoutSendIds(posts(await p.posted(), 'send')), [
      { type: 'send', conversationId: 'c1', text: 'next question' },
    ]);
  });

  s.it('attach buttons post intents and pending attachments show as removable chips', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({ attachments: [{ id: 'att1', label: 'main.ts (lines 1-40)', chars: 15_000, truncated: true }] }),
      ),
    );
    await p.clearPosted();
    await p.page.getByRole('button', { name: 'Attach the current file' }).click();
    await p.page.getByRole('button', { name: 'Attach the current selection' }).click();
    assert.match(await p.page.locator('.composer .chip').innerText(), /main\.ts \(lines 1-40\)\s+15K characters, cut/);
    await p.page.getByRole('button', { name: 'Remove attachment main.ts (lines 1-40)' }).click();
    assert.deepEqual(await p.posted(), [
      { type: 'attach', conversationId: 'c1', what: 'file' },
      { type: 'attach', conversationId: 'c1', what: 'selection' },
      { type: 'removeAttachment', conversationId: 'c1', id: 'att1' },
    ]);
  });

  s.it('restores the draft from the UI state and keeps only UI-local things there', async () => {
    const p = await open({ uiState: { draft: 'half-written question', stickToBottom: true, reasoning: {} } });
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [userMessage('u1', 'SECRET-CONTENT question'), assistantMessage('a1', 'SECRET-CONTENT answer')],
        }),
      ),
    );
    const input = p.page.getByRole('textbox', { name: 'Message' });
    assert.equal(await input.inputValue(), 'half-written question');
    await input.fill('new draft');
    await p.waitFor(`window.__probe.state?.draft === 'new draft'`);
    assert.equal(JSON.stringify(await p.uiState()).includes('SECRET-CONTENT'), false);
  });

  s.it('focusInput focuses the message box', async () => {
    const p = await open();
    await p.push(snapshotMessage(snapshot()));
    await p.page.getByLabel('Model', { exact: true }).focus();
    await p.push({ type: 'focusInput' });
    assert.equal(await p.page.evaluate<string>('document.activeElement.getAttribute("aria-label")'), 'Message');
  });
}
