/**
 * What a newcomer trips over in the chat view, at the side bar's narrow width: Send without a key,
 * an answer that is still arriving, how an answer ended, code wider than the view, the actions of
 * a long answer, and the counts of attached text. Screenshots of each in both themes at 300 px go
 * to test-results/webview (newcomer-*.png).
 */
import assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { SuiteBuilder } from './chatView.webtest';
import { assistantMessage, longAnswer, snapshot, snapshotMessage, userMessage } from './fixtures';
import { closeAndCheck, type ChatPage, type WebviewHarness } from './harness';

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'test-results', 'webview');
const NARROW = { width: 300, height: 640 };
const THEMES = ['light', 'dark'] as const;

/** A code line far wider than 300 px. */
const WIDE_CODE =
  "```ts\nconst sortedUsersByAgeThenName = users.slice().sort((a, b) => a.age - b.age || a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }));\n```\n";

export function defineNewcomerTests(t: SuiteBuilder, harness: () => WebviewHarness): void {
  let page: ChatPage | undefined;
  const open = async (theme: 'light' | 'dark' = 'light', viewport = NARROW): Promise<ChatPage> => {
    page = await harness().open({ theme, viewport });
    return page;
  };
  const close = async (): Promise<void> => {
    if (!page) return;
    const closing = page;
    page = undefined;
    await closeAndCheck(closing);
  };
  t.afterEach(close);
  const shoot = async (p: ChatPage, name: string): Promise<void> => {
    await fsp.mkdir(SCREENSHOTS, { recursive: true });
    await p.page.evaluate('document.fonts.ready');
    await p.page.screenshot({ path: path.join(SCREENSHOTS, `newcomer-${name}.png`) });
  };

  t.it(
    'without a key: Send is disabled, the reason and Set API Key are beside it, and nothing invites to pick a model or try a prompt',
    async () => {
      for (const theme of THEMES) {
        const p = await open(theme);
        await p.push(
          snapshotMessage(
            snapshot({
              conversationId: undefined,
              conversations: [],
              models: [],
              model: undefined,
              notice: { message: 'Set your API key to start chatting.', action: 'setKey' },
            }),
          ),
        );
        const input = p.page.getByRole('textbox', { name: 'Message' });
        await input.fill('hello?');
        const send = p.page.getByRole('button', { name: 'Send the message (Enter)' });
        assert.equal(await send.isDisabled(), true, 'Send is disabled with text typed');
        assert.equal(await send.getAttribute('title'), 'Set your API key to start chatting.');
        const composer = p.page.locator('footer.composer');
        assert.match(
          await composer.locator('.notice').innerText(),
          /Set your API key to start chatting\./,
          'the reason is beside Send',
        );
        assert.equal(await p.page.getByText('Choose a model below to start.').count(), 0);
        assert.equal(await p.page.getByRole('group', { name: 'Starter prompts' }).isVisible(), false);
        assert.equal(await p.page.getByText('Ask anything. Enter sends').isVisible(), false);
        await input.press('Enter');
        await p.frames();
        assert.deepEqual(
          (await p.posted()).filter((m) => m.type === 'send'),
          [],
          'Enter sends nothing',
        );
        await shoot(p, `no-key-${theme}`);
        await composer.getByRole('button', { name: 'Set API Key' }).click();
        assert.deepEqual(await p.waitForPosted('action'), { type: 'action', action: 'setKey' });
        // With a key and models, Send works and the starters come back.
        await p.push(snapshotMessage(snapshot({ conversationId: undefined, conversations: [] })));
        assert.equal(await send.isDisabled(), false);
        assert.equal(await p.page.getByRole('group', { name: 'Starter prompts' }).isVisible(), true);
        await close();
      }
    },
  );

  t.it('an answer still arriving shows a named, pulsing mark at its end, gone once it has ended', async () => {
    for (const theme of THEMES) {
      const p = await open(theme);
      const question = userMessage('u1', 'Explain sorting');
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [
              question,
              assistantMessage('a1', 'Sorting puts things **in order**. First,', { status: 'streaming' }),
            ],
            busy: true,
          }),
        ),
      );
      const mark = p.page.locator('.msg[data-id="a1"]').getByRole('img', { name: 'The answer is still being written' });
      assert.equal(await mark.isVisible(), true);
      const below = await p.page.evaluate<boolean>(
        `(() => { const m = document.querySelector('.msg[data-id="a1"] .stream-mark'); const b = document.querySelector('.msg[data-id="a1"] .msg-body'); return m.getBoundingClientRect().top >= b.getBoundingClientRect().bottom - 1; })()`,
      );
      assert.ok(below, 'the mark is at the end of the text');
      assert.notEqual(
        await mark
          .locator('span')
          .first()
          .evaluate((el) => getComputedStyle(el).animationName),
        'none',
        'it pulses',
      );
      await shoot(p, `streaming-${theme}`);
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [question, assistantMessage('a1', 'Sorting puts things **in order**. First, compare.')],
          }),
        ),
      );
      assert.equal(await mark.count(), 0, 'no mark on an ended answer');
      await close();
    }
  });

  t.it(
    'Stopped and the length limit look different; the limit is said in plain words with how to go on or raise it',
    async () => {
      for (const theme of THEMES) {
        const p = await open(theme);
        await p.push(
          snapshotMessage(
            snapshot({
              messages: [
                userMessage('u1', 'First'),
                assistantMessage('s1', 'Half an answer', { status: 'stopped' }),
                userMessage('u2', 'Second'),
                assistantMessage('l1', 'A long answer that ran out of room', { finishReason: 'length' }),
              ],
            }),
          ),
        );
        const stopped = p.page.locator('.msg[data-id="s1"] .badge');
        const limit = p.page.locator('.msg[data-id="l1"] .badge');
        assert.equal(await stopped.innerText(), 'Stopped');
        assert.equal(await limit.innerText(), 'Reached the answer length limit');
        assert.match(
          await p.page.locator('.msg[data-id="l1"] .status-hint').innerText(),
          /modelGateway\.chat\.maxTokens/,
        );
        assert.equal(await p.page.getByText('max_tokens limit').count(), 0, 'no API words');
        const look = (el: Element): string => {
          const s = getComputedStyle(el);
          return [s.color, s.backgroundColor, s.borderTopStyle, s.borderTopColor].join(' ');
        };
        assert.notEqual(await stopped.evaluate(look), await limit.evaluate(look), 'the two badges look different');
        await shoot(p, `endings-${theme}`);
        await close();
      }
    },
  );

  t.it(
    'at 300 px a code line wider than the view wraps inside its block: nothing is cut at the edge; wider views scroll it',
    async () => {
      const facts = async (p: ChatPage): Promise<{ scrolls: boolean; inside: boolean; lines: number }> =>
        p.page.evaluate(`(() => {
        const pre = document.querySelector('.msg[data-id="a1"] .code-block pre');
        const code = pre.querySelector('code');
        const msg = document.querySelector('.msg[data-id="a1"]').getBoundingClientRect();
        const range = document.createRange();
        range.selectNodeContents(code);
        const text = range.getBoundingClientRect();
        return { scrolls: pre.scrollWidth > pre.clientWidth + 1, inside: text.right <= msg.right + 0.5, lines: Math.round(text.height / parseFloat(getComputedStyle(pre).lineHeight)) };
      })()`);
      for (const theme of THEMES) {
        const p = await open(theme);
        await p.push(
          snapshotMessage(
            snapshot({
              messages: [userMessage('u1', 'Sort users'), assistantMessage('a1', `Here:\n\n${WIDE_CODE}\nDone.`)],
            }),
          ),
        );
        const narrow = await facts(p);
        assert.equal(narrow.scrolls, false, 'no part of the line is hidden to the right');
        assert.ok(narrow.inside, 'the code ends inside the message');
        assert.ok(narrow.lines >= 2, `the long line wraps (${narrow.lines} lines)`);
        await shoot(p, `code-${theme}`);
        await close();
      }
      const wide = await open('light', { width: 700, height: 640 });
      await wide.push(
        snapshotMessage(
          snapshot({
            messages: [userMessage('u1', 'Sort users'), assistantMessage('a1', `Here:\n\n${WIDE_CODE}\nDone.`)],
          }),
        ),
      );
      const facts700 = await facts(wide);
      assert.equal(facts700.lines, 1, 'a wide view keeps the line whole');
    },
  );

  t.it(
    "a long answer's Copy and Regenerate are at its end, shown, and reached by Tab from anywhere in it",
    async () => {
      for (const theme of THEMES) {
        const p = await open(theme);
        await p.push(
          snapshotMessage(
            snapshot({ messages: [userMessage('u1', 'Tell me a lot'), assistantMessage('a1', longAnswer(8000))] }),
          ),
        );
        const actions = p.page.locator('.msg[data-id="a1"]').getByRole('toolbar', { name: 'Actions for the answer' });
        const inView = async (): Promise<boolean> =>
          p.page.evaluate<boolean>(`(() => {
          const bar = document.querySelector('.msg[data-id="a1"] .msg-actions').getBoundingClientRect();
          const list = document.querySelector('.messages').getBoundingClientRect();
          return bar.height > 0 && bar.top >= list.top - 0.5 && bar.bottom <= list.bottom + 0.5 && getComputedStyle(document.querySelector('.msg[data-id="a1"] .msg-actions')).opacity === '1';
        })()`);
        // At the end (the view follows it): the actions are at the answer's end, shown.
        assert.ok(await inView(), 'at the end of the answer');
        // Halfway up the long answer: they stay at its end (floating at the view's bottom they covered the text
        // being read; polish.webtest.ts checks that), and Tab still reaches them.
        await p.page.evaluate(
          `document.querySelector('.messages').scrollTop = document.querySelector('.msg[data-id="a1"]').offsetTop + 400`,
        );
        await p.frames();
        const end = await p.page.evaluate<number>(
          `document.querySelector('.msg[data-id="a1"]').getBoundingClientRect().bottom - document.querySelector('.messages').getBoundingClientRect().bottom`,
        );
        assert.ok(end > 200, `the answer goes on below the view (${end} px)`);
        assert.equal(await inView(), false, 'in the middle of the answer, not over its text');
        await shoot(p, `actions-${theme}`);
        // From the keyboard: focusable, with names.
        await actions.getByRole('button', { name: 'Copy the answer' }).focus();
        await p.page.keyboard.press('Tab');
        assert.equal(
          await p.page.evaluate<string>('document.activeElement.getAttribute("aria-label")'),
          'Regenerate the last answer',
        );
        await p.page.keyboard.press('Enter');
        assert.deepEqual(await p.waitForPosted('regenerate'), {
          type: 'regenerate',
          messageId: 'a1',
          conversationId: 'c1',
        });
        await close();
      }
    },
  );

  t.it(
    'attachment chips belong to their conversation and count in the same words as the notices ("746 characters")',
    async () => {
      const p = await open();
      await p.push(
        snapshotMessage(
          snapshot({ attachments: [{ id: 'att1', label: 'Parsed report.pdf', chars: 746, truncated: false }] }),
        ),
      );
      const chips = p.page.locator('.composer .chip');
      assert.match(await chips.innerText(), /Parsed report\.pdf\s+746 characters/);
      await shoot(p, 'chips-light');
      // Another conversation has nothing attached: no chip follows.
      await p.push(snapshotMessage(snapshot({ key: 'c2', conversationId: 'c2', attachments: [] })));
      assert.equal(await chips.count(), 0);
      await p.push(
        snapshotMessage(
          snapshot({ attachments: [{ id: 'att1', label: 'Parsed report.pdf', chars: 746, truncated: false }] }),
        ),
      );
      assert.equal(await chips.count(), 1);
    },
  );
}
