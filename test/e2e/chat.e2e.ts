import * as assert from 'node:assert/strict';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import {
  chatFrame,
  clearNotifications,
  masked,
  openNewChat,
  reloadWindow,
  runCommandFromPalette,
  sendChatMessage as send,
  setApiKey,
  waitForStatus,
} from './workbench';

describe('Chat view', () => {
  before(async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
  });

  const cases = [
    { model: 'gpt-4o-mini', protocol: 'chatCompletions', path: '/v1/chat/completions' },
    { model: 'gpt-5', protocol: 'responses', path: '/v1/responses' },
    { model: 'claude-sonnet-4-5', protocol: 'messages', path: '/v1/messages' },
  ];

  it('streams a rendered answer over each protocol from the model picker', async () => {
    const { page, double } = ui();
    const frame = await openNewChat(page);
    for (const c of cases) {
      await frame.locator('select.model-select').selectOption(c.model);
      // The host's next snapshot names the model (its tooltip); only then is the protocol chosen for it.
      await frame.locator(`select.model-select[title^="Model: ${c.model} "]`).waitFor({ state: 'attached' });
      await frame.locator('select.protocol-select').selectOption(c.protocol);
      double.clearLog();
      const answer = await send(frame, `Say **hello** over ${c.protocol}`);
      await answer.locator('.md strong', { hasText: 'hello' }).waitFor();
      await answer.filter({ hasText: `Echo from ${c.model}:` }).waitFor();
      await frame.locator('button[aria-label^="Send the message"]').waitFor();
      assert.ok(
        double.log.some((e) => e.path === c.path),
        `the answer came over ${c.path}`,
      );
      assert.match(await answer.locator('.msg-usage').innerText(), /tokens/i);
    }
  });

  it('stops mid-stream and keeps the partial answer', async () => {
    const { page } = ui();
    const frame = await openNewChat(page);
    await frame.locator('select.model-select').selectOption('gpt-4o-mini');
    const answer = await send(frame, '[[slow:40]] [[long:16]] a long answer to stop');
    await answer
      .locator('.md')
      .filter({ hasText: /\S{20,}/ })
      .first()
      .waitFor();
    await frame.locator('button[aria-label^="Stop the answer"]').click();
    await answer.locator('.badge.status-stopped').waitFor();
    const text = await answer.innerText();
    assert.ok(text.length > 40, `the partial answer is kept: ${text.slice(0, 80)}`);
  });

  it('shows a model answer with script, onerror and javascript: links without running them', async () => {
    const { page } = ui();
    const dialogs: string[] = [];
    const onDialog = (d: { message(): string; dismiss(): Promise<void> }) => {
      dialogs.push(d.message());
      void d.dismiss();
    };
    page.on('dialog', onDialog);
    try {
      const frame = await openNewChat(page);
      await frame.locator('select.model-select').selectOption('gpt-4o-mini');
      const answer = await send(frame, '[[xss]] show me');
      await answer.filter({ hasText: 'Echo from gpt-4o-mini' }).waitFor();
      await frame.locator('button[aria-label^="Send the message"]').waitFor();
      const md = answer.locator('.md');
      assert.equal(await md.locator('script').count(), 0);
      assert.equal(await md.locator('[onerror], [onclick], [onload]').count(), 0);
      assert.equal(await md.locator('a[href^="javascript:"]').count(), 0);
      const link = md.locator('a', { hasText: 'link' });
      if (await link.count()) await link.first().click();
      // Barrier instead of a pause: every image of the answer has loaded or failed (an onerror
      // handler, had one survived, is queued by then) and one more task has run in the answer's
      // frame after that. An alert() from the answer blocks that frame until the dialog handler
      // above dismisses it, so once this returns any dialog the answer raised has been recorded.
      await answer.evaluate(async (el) => {
        type Img = { complete: boolean; addEventListener(type: string, fn: () => void, opts: { once: boolean }): void };
        const images = Array.from(
          (el as unknown as { querySelectorAll(s: string): ArrayLike<Img> }).querySelectorAll('img'),
        );
        await Promise.all(
          images.map((img) =>
            img.complete
              ? undefined
              : new Promise<void>((resolve) => {
                  img.addEventListener('load', resolve, { once: true });
                  img.addEventListener('error', resolve, { once: true });
                }),
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 0));
      });
      assert.deepEqual(dialogs, [], 'nothing from the answer ran');
    } finally {
      page.off('dialog', onDialog);
    }
  });

  it('finds the conversation again after a window reload, with the cut answer kept', async () => {
    const { page } = ui();
    const frame = await openNewChat(page);
    await frame.locator('select.model-select').selectOption('gpt-4o-mini');
    // About 64 KB at four words per frame and 150 ms a frame: minutes of streaming, so the reload
    // below lands in the middle of it however slow the machine is.
    const answer = await send(frame, '[[slow:150]] [[long:64]] remember the platypus');
    // Some text on screen, and enough of it (over a dozen frames, so over a second of streaming)
    // that the host has checkpointed part of it to the store.
    await answer
      .locator('.md.msg-body')
      .filter({ hasText: /(\S+\s+){60}/ })
      .waitFor();
    const before = (await answer.locator('.md.msg-body').innerText()).trim();
    assert.ok(
      await frame.locator('button[aria-label^="Stop the answer"]').isVisible(),
      'the answer is still streaming when the window reloads',
    );
    await reloadWindow(page);
    // The palette waits until it lists the view's command (registered again after the reload).
    await runCommandFromPalette(page, 'Model Gateway: Focus on Chat View');
    const after = chatFrame(page);
    await after.locator('article.msg-user', { hasText: 'remember the platypus' }).waitFor();
    const kept = after.locator('article.msg-assistant', { hasText: 'Echo from gpt-4o-mini: remember the platypus' });
    // Nothing streams in this window: the window that streamed the answer is gone.
    await after.locator('button[aria-label^="Send the message"]').waitFor();
    await kept
      .locator('.md.msg-body')
      .filter({ hasText: /(\S+\s+){20}/ })
      .waitFor();
    const keptText = (await kept.locator('.md.msg-body').innerText()).trim();
    // The part received before the reload (up to the last checkpoint at least) is kept as it was
    // shown; only its start is compared, as the markdown at the cut may render differently.
    const start = 150;
    assert.ok(
      keptText.length > start && before.length > start,
      `some of the answer is kept (${keptText.length} of ${before.length} characters shown before)`,
    );
    assert.equal(keptText.slice(0, start), before.slice(0, start), 'the kept part is the text that was shown');
    assert.ok(keptText.length < 32 * 1024, `the answer was cut, not finished (${keptText.length} characters)`);
  });
});
