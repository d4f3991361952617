/**
 * The chat webview in Chromium (message actions). What can be done with a message: Copy, Edit,
 * Regenerate, the badges of stopped and cut-off answers, code blocks' buttons, links.
 */
import assert from 'node:assert/strict';
import hljs from 'highlight.js/lib/core';
import typescript from 'highlight.js/lib/languages/typescript';
import type { SuiteBuilder } from './chatView.webtest';
import { chatPages, posts } from './chatPages';
import { assistantMessage, RICH_ANSWER, snapshot, snapshotMessage, userMessage } from './fixtures';
import type { WebviewHarness } from './harness';

hljs.registerLanguage('typescript', typescript);

export function defineActionTests(s: SuiteBuilder, harness: () => WebviewHarness): void {
  const { open } = chatPages(s, harness);
  s.it('Copy on any message, Edit on the last question, Regenerate on the last answer', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [
            userMessage('u1', 'First'),
            assistantMessage('a1', 'One'),
            userMessage('u2', 'Second'),
            assistantMessage('a2', 'Two **bold**'),
          ],
        }),
      ),
    );
    const page = p.page;
    assert.equal(await page.getByRole('button', { name: 'Edit and resend your last message' }).count(), 1);
    assert.equal(
      await page
        .locator('.msg[data-id="u2"]')
        .getByRole('button', { name: 'Edit and resend your last message' })
        .isVisible(),
      true,
    );
    assert.equal(
      await page.locator('.msg[data-id="a2"]').getByRole('button', { name: 'Regenerate the last answer' }).isVisible(),
      true,
    );
    assert.equal(
      await page.locator('.msg[data-id="a1"]').getByRole('button', { name: 'Regenerate the last answer' }).isVisible(),
      false,
    );
    await p.clearPosted();
    await page.locator('.msg[data-id="a2"]').getByRole('button', { name: 'Copy the answer' }).click();
    await page.locator('.msg[data-id="u1"]').getByRole('button', { name: 'Copy your message' }).click();
    await page.locator('.msg[data-id="a2"]').getByRole('button', { name: 'Regenerate the last answer' }).click();
    assert.deepEqual(await p.posted(), [
      { type: 'copy', text: 'Two **bold**' },
      { type: 'copy', text: 'First' },
      { type: 'regenerate', conversationId: 'c1', messageId: 'a2' },
    ]);

    await page.getByRole('button', { name: 'Edit and resend your last message' }).click();
    const editor = page.getByRole('textbox', { name: 'Edit your message' });
    assert.equal(await editor.inputValue(), 'Second');
    await editor.press('Escape');
    assert.equal(await editor.count(), 0, 'Escape cancels the edit');
    await page.getByRole('button', { name: 'Edit and resend your last message' }).click();
    await editor.fill('Second, better');
    await editor.press('Shift+Enter');
    await editor.pressSequentially('again');
    await editor.press('Enter');
    assert.deepEqual(posts(await p.posted(), 'editLast'), [
      { type: 'editLast', conversationId: 'c1', text: 'Second, better\nagain', messageId: 'u2' },
    ]);

    await p.push({ type: 'busy', conversationId: 'c1', busy: true });
    assert.equal(await page.getByRole('button', { name: 'Edit and resend your last message' }).isVisible(), false);
    assert.equal(await page.getByRole('button', { name: 'Regenerate the last answer' }).isVisible(), false);
  });

  s.it(
    'message and code-block actions are icons that show on hover and on keyboard focus, reachable with Tab',
    async () => {
      const p = await open({ viewport: { width: 300, height: 700 } });
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [
              userMessage('u1', 'Sort?'),
              assistantMessage('a1', 'Use this:\n\n```ts\nusers.sort(byAge);\n```\n'),
            ],
          }),
        ),
      );
      const page = p.page;
      const opacity = (selector: string) =>
        page.evaluate<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).opacity`);
      const actions = '.msg[data-id="a1"] > .msg-actions';
      const codeActions = '.msg[data-id="a1"] .code-actions';
      await page.mouse.move(1, 1);
      assert.equal(await opacity(actions), '1', "the last answer's are always in sight, at its end");
      assert.equal(await opacity('.msg[data-id="u1"] > .msg-actions'), '0', 'others are out of the way until wanted');
      assert.equal(await opacity(codeActions), '0');
      // Icons, named and with a tooltip, not text buttons.
      const regenerate = page.locator(actions).getByRole('button', { name: 'Regenerate the last answer' });
      assert.equal(await regenerate.innerText(), '');
      assert.equal(await regenerate.getAttribute('title'), 'Regenerate the last answer');
      assert.equal(await regenerate.locator('svg').count(), 1);

      await page.locator('.msg[data-id="u1"] .user-text').hover();
      assert.equal(await opacity('.msg[data-id="u1"] > .msg-actions'), '1', 'shown on hover');
      await page.locator('.msg[data-id="a1"] .code-block pre').hover();
      assert.equal(await opacity(codeActions), '1', 'code actions shown on hover');
      await page.mouse.move(1, 1);
      assert.equal(await opacity('.msg[data-id="u1"] > .msg-actions'), '0');

      // Keyboard only: back from the message box into the last answer.
      await page.getByRole('textbox', { name: 'Message' }).focus();
      await page.keyboard.press('Shift+Tab');
      assert.equal(
        await page.evaluate<string>('document.activeElement.getAttribute("aria-label")'),
        'Regenerate the last answer',
      );
      assert.equal(await opacity(actions), '1', 'shown while the keyboard is in the message');
      await page.keyboard.press('Shift+Tab');
      assert.equal(await page.evaluate<string>('document.activeElement.getAttribute("aria-label")'), 'Copy the answer');
      await page.keyboard.press('Shift+Tab');
      assert.equal(
        await page.evaluate<string>('document.activeElement.getAttribute("aria-label")'),
        'Insert ts code at the cursor',
      );
      assert.equal(await opacity(codeActions), '1', 'code actions shown on keyboard focus');
      await p.clearPosted();
      await page.keyboard.press('Enter');
      assert.deepEqual(await p.posted(), [{ type: 'insertCode', code: 'users.sort(byAge);' }]);
    },
  );

  s.it('an answer cut at the max tokens limit says so; Continue only on the last answer, by keyboard too', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [
            userMessage('u1', 'First'),
            assistantMessage('l1', 'Cut early', { finishReason: 'length' }),
            userMessage('u2', 'Second'),
            assistantMessage('d1', 'Whole answer', { finishReason: 'stop' }),
            userMessage('u3', 'Third'),
            assistantMessage('l2', 'Cut again', { finishReason: 'length' }),
          ],
        }),
      ),
    );
    const page = p.page;
    assert.equal(await page.locator('.msg[data-id="l1"] .badge').innerText(), 'Reached the answer length limit');
    assert.equal(await page.locator('.msg[data-id="l2"] .badge').innerText(), 'Reached the answer length limit');
    assert.equal(await page.locator('.msg[data-id="d1"] .badge').count(), 0, 'a normal finish has no badge');
    const name = 'Continue this answer where it stopped';
    assert.equal(
      await page.locator('.msg[data-id="l1"]').getByRole('button', { name }).isVisible(),
      false,
      'not on an earlier answer',
    );
    const cont = page.locator('.msg[data-id="l2"]').getByRole('button', { name });
    assert.equal(await cont.isVisible(), true);
    assert.equal(await cont.getAttribute('title'), 'Ask the model to go on; the new text is added to this answer');
    await p.clearPosted();
    await cont.focus();
    await page.keyboard.press('Enter');
    assert.deepEqual(await p.posted(), [{ type: 'continue', conversationId: 'c1', messageId: 'l2' }]);
  });

  s.it('stopped and cut-off answers show a badge, the error and the action for its kind', async () => {
    const p = await open();
    const cut = (id: string, kind: string, message: string) =>
      assistantMessage(id, `Partial ${id}`, { status: 'cut', error: { kind, message } });
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [
            assistantMessage('s1', 'Half an answer', { status: 'stopped' }),
            cut('e1', 'auth', 'The API key was rejected.'),
            cut('e2', 'modelUnavailable', 'This model is not available to your key.'),
            cut('e3', 'network', 'The connection dropped.'),
            cut('e5', 'quota', 'Your balance is used up.'),
            assistantMessage('e6', 'Partial e6', {
              status: 'cut',
              error: {
                kind: 'server',
                message: 'The gateway had an internal error (HTTP 500).',
                requestId: '20251124153012345678901',
              },
            }),
            cut('e4', 'timeout', 'No data for 120 s.'),
          ],
        }),
      ),
    );
    const page = p.page;
    assert.equal(await page.locator('.msg[data-id="s1"] .badge').innerText(), 'Stopped');
    assert.equal(await page.locator('.msg[data-id="e1"] .badge').innerText(), 'Cut off');
    assert.equal(await page.locator('.msg[data-id="e1"] .error-message').innerText(), 'The API key was rejected.');
    assert.equal(await page.locator('.msg[data-id="e1"] .error-request-id').count(), 0);
    // The gateway's request id stands apart from the message, whole.
    assert.equal(
      await page.locator('.msg[data-id="e6"] .error-message').innerText(),
      'The gateway had an internal error (HTTP 500).',
    );
    assert.equal(
      await page.locator('.msg[data-id="e6"] .error-request-id').innerText(),
      'Request ID: 20251124153012345678901',
    );
    assert.equal(
      await page.locator('.msg[data-id="e6"] .error-request-id code').innerText(),
      '20251124153012345678901',
    );
    await p.clearPosted();
    await page.locator('.msg[data-id="e1"]').getByRole('button', { name: 'Set API Key' }).click();
    await page.locator('.msg[data-id="e2"]').getByRole('button', { name: 'Pick another model' }).click();
    assert.equal(
      await page.evaluate<string>('document.activeElement.getAttribute("id") && document.activeElement.tagName'),
      'SELECT',
      'the model picker gets focus',
    );
    // Retry re-runs an answer: offered on the last answer only (the host refuses any other).
    assert.equal(await page.locator('.msg[data-id="e3"]').getByRole('button', { name: 'Retry' }).isVisible(), false);
    // Retry and Regenerate do the same thing: never both on one answer.
    assert.equal(
      await page.locator('.msg[data-id="e4"]').getByRole('button', { name: 'Regenerate the last answer' }).isVisible(),
      false,
    );
    await page.locator('.msg[data-id="e4"]').getByRole('button', { name: 'Retry' }).click();
    assert.equal(await page.locator('.msg[data-id="e5"] .msg-status button').count(), 0);
    assert.deepEqual(await p.posted(), [
      { type: 'action', action: 'setKey' },
      { type: 'action', action: 'pickModel', conversationId: 'c1' },
      { type: 'action', action: 'retry', messageId: 'e4', conversationId: 'c1' },
    ]);
  });

  s.it('code blocks are highlighted and their buttons post copy and insertCode', async () => {
    const p = await open();
    await p.push(snapshotMessage(snapshot({ messages: [assistantMessage('a1', RICH_ANSWER)] })));
    const page = p.page;
    const blocks = page.locator('.code-block');
    assert.equal(await blocks.count(), 3);
    assert.deepEqual(await page.locator('.code-lang').allInnerTexts(), ['ts', 'python', 'brainfuck']);
    // Highlighted by the page's worker (started from a blob: URL, as VS Code webviews require), when it answers.
    await p.waitFor(
      `document.querySelectorAll('.code-block')[0].querySelector('.hljs-keyword') && document.querySelectorAll('.code-block')[1].querySelector('.hljs-keyword')`,
    );
    assert.ok(
      p.page.workers().some((w) => w.url().startsWith('blob:')),
      'highlighting runs in a worker',
    );
    assert.equal(await blocks.nth(2).locator('code span').count(), 0, 'an unknown language is plain text');
    await p.clearPosted();
    await blocks.nth(1).getByRole('button', { name: 'Copy python code' }).click();
    await blocks.nth(0).getByRole('button', { name: 'Insert ts code at the cursor' }).click();
    assert.deepEqual(await p.posted(), [
      { type: 'copy', text: 'def by_age(user):\n    return user["age"]' },
      {
        type: 'insertCode',
        code: 'interface User { name: string; age: number }\n\nconst byAge = (a: User, b: User): number => a.age - b.age;\nusers.sort(byAge);',
      },
    ]);
  });

  s.it(
    'a long code block is highlighted in pieces after it shows, with the same spans as highlighting it whole',
    async () => {
      // A block comment and a template string cross the ~2,000-character piece borders; the
      // characters highlight.js escapes (< > & ' ") come back as themselves.
      let body = '';
      for (let i = 0; body.length < 12_000; i++) {
        body +=
          i % 40 === 25
            ? `/* a comment\n${'that goes on\n'.repeat(200)}*/\n`
            : i % 40 === 5
              ? `const t${i} = \`\n${'template line\n'.repeat(200)}\`;\n`
              : `const value${i} = compute(${i}, "text ${i}" && a < b && 'c' > d); // line ${i} <i> & 'so' "on"\n`;
      }
      const expected = [
        ...hljs
          .highlight(body, { language: 'typescript', ignoreIllegals: true })
          .value.matchAll(/<span class="([^"]+)">/g),
      ].map((m) => m[1]);
      const p = await open();
      await p.push(
        snapshotMessage(snapshot({ messages: [assistantMessage('a1', `Here:\n\n\`\`\`ts\n${body}\`\`\`\n`)] })),
      );
      const classes = `Array.from(document.querySelectorAll('.msg-body code span'), (s) => s.className)`;
      await p.waitFor(`${classes}.length >= ${expected.length}`);
      assert.deepEqual(await p.page.evaluate<string[]>(classes), expected);
      assert.equal(await p.page.locator('.msg-body code').evaluate((e) => e.textContent), body);
    },
  );

  s.it('link clicks post openLink and never navigate the webview', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [
            assistantMessage(
              'a1',
              'See [the docs](https://example.com/docs?q=1), https://example.org/auto and <mailto:me@example.com>.',
            ),
          ],
        }),
      ),
    );
    const url = p.page.url();
    await p.clearPosted();
    await p.page.getByRole('link', { name: 'the docs' }).click();
    await p.page.getByRole('link', { name: 'https://example.org/auto' }).click({ button: 'middle' });
    await p.page.getByRole('link', { name: 'https://example.org/auto' }).focus();
    await p.page.keyboard.press('Enter');
    await p.page.getByRole('link', { name: 'me@example.com' }).click();
    assert.deepEqual(await p.posted(), [
      { type: 'openLink', url: 'https://example.com/docs?q=1' },
      { type: 'openLink', url: 'https://example.org/auto' },
      { type: 'openLink', url: 'mailto:me@example.com' },
    ]);
    assert.equal(p.page.url(), url);
    assert.equal(p.page.context().pages().length, 1);
  });
}
