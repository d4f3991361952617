/**
 * The chat webview in Chromium (streaming). Answers as they stream in: incremental rendering
 * (finished blocks never touched), reasoning, scrolling that follows or stays put, a saved scroll
 * position, missed deltas.
 */
import assert from 'node:assert/strict';
import type { SuiteBuilder } from './chatView.webtest';
import { chatPages, posts, TOP_MESSAGE } from './chatPages';
import { assistantMessage, longAnswer, longCodeFence, snapshot, snapshotMessage, userMessage } from './fixtures';
import { closeAndCheck, type WebviewHarness } from './harness';
import { expectedText, formatMeasurement, measureStreaming } from './streaming';

export function defineStreamingTests(s: SuiteBuilder, harness: () => WebviewHarness): void {
  const { open } = chatPages(s, harness);
  s.it('appends deltas, renders markdown incrementally and never re-creates finished blocks', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [userMessage('u1', 'Go'), assistantMessage('a1', '', { status: 'streaming' })],
          busy: true,
        }),
      ),
    );
    const page = p.page;
    assert.equal(await page.locator('.msg-assistant .waiting').isVisible(), true);
    let offset = 0;
    const send = async (text: string): Promise<void> => {
      await p.push({
        type: 'append',
        conversationId: 'c1',
        messageId: 'a1',
        textFrom: offset,
        text,
        reasoningFrom: 0,
        reasoning: '',
      });
      offset += text.length;
    };
    await send('# Title\n\nFirst **para');
    assert.equal(await page.locator('.msg-body h1').innerText(), 'Title');
    assert.equal(await page.locator('.msg-body strong').count(), 0);
    await send('graph** done.\n\n');
    assert.equal(await page.locator('.msg-body strong').innerText(), 'paragraph');
    await send('```ts\nconst a = 1;\n');
    // The open fence streams as plain code text inside a code block frame.
    assert.equal(await page.locator('.msg-body .code-block code').last().innerText(), 'const a = 1;\n');
    assert.equal(await p.probe('watch', '.msg[data-id="a1"] .md-block'), true);
    await send('\nconst b = 2;\n```\n\nAfter the code, a [link](https://example.com/x).\n\n- one\n- two\n');
    await send('\nlast paragraph');
    assert.equal(
      await p.probe('watchedStillFirst', '.msg[data-id="a1"] .md-block'),
      true,
      'the first block element is the same node',
    );
    assert.equal(await p.read('mutations'), 0, 'the finished first block was not touched');
    assert.equal(
      await page.locator('.msg-body .hljs-keyword').first().innerText(),
      'const',
      'the closed fence is highlighted',
    );
    // Title, paragraph, fence, "After…", and the list still open: the last line has no newline yet.
    assert.equal(await page.locator('.msg-body .md-block').count(), 5);
    assert.equal(await page.locator('.msg[data-id="a1"]').getAttribute('aria-busy'), 'true');

    await p.push(
      {
        type: 'message',
        conversationId: 'c1',
        message: assistantMessage(
          'a1',
          '# Title\n\nFirst **paragraph** done.\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\nAfter the code, a [link](https://example.com/x).\n\n- one\n- two\n\nlast paragraph',
          { usage: { outputTokens: 42 } },
        ),
      },
      { type: 'busy', conversationId: 'c1', busy: false },
    );
    assert.equal(await page.locator('.msg[data-id="a1"]').getAttribute('aria-busy'), null);
    assert.equal(await p.probe('watchedStillFirst', '.msg[data-id="a1"] .md-block'), true);
    assert.equal(await page.locator('.msg-body p').last().innerText(), 'last paragraph');
    assert.equal(await page.locator('.msg[data-id="a1"] .msg-usage').innerText(), 'Tokens: 42 out');
  });

  s.it('an open code fence streams as plain text that reads as one block, then is highlighted', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(snapshot({ messages: [assistantMessage('a1', '', { status: 'streaming' })], busy: true })),
    );
    const lines = Array.from({ length: 150 }, (_, i) => `let v${i} = ${i};${i % 7 === 0 ? '\n' : ''}`).join('\n');
    const source = `\`\`\`js\n${lines}\n`;
    for (let offset = 0; offset < source.length; offset += 97) {
      await p.probe('push', {
        type: 'append',
        conversationId: 'c1',
        messageId: 'a1',
        textFrom: offset,
        text: source.slice(offset, offset + 97),
        reasoningFrom: 0,
        reasoning: '',
      });
      if (offset % 970 === 0) await p.frames(1);
    }
    await p.frames();
    const code = p.page.locator('.msg-body .code-block code');
    assert.ok((await code.locator('.code-piece').count()) > 1, 'shown in several pieces');
    assert.equal(await code.textContent(), `${lines}\n`, 'the pieces hold exactly the code');
    assert.equal(await code.locator('.hljs-keyword').count(), 0, 'not highlighted while streaming');
    const streamedHeight = (await p.page.locator('.msg-body .code-block pre').boundingBox())?.height;
    await p.push({
      type: 'append',
      conversationId: 'c1',
      messageId: 'a1',
      textFrom: source.length,
      text: '```\n',
      reasoningFrom: 0,
      reasoning: '',
    });
    await p.waitFor(`document.querySelectorAll('.msg-body .code-block code .hljs-keyword').length > 100`);
    assert.equal(await code.textContent(), `${lines}\n`);
    const finalHeight = (await p.page.locator('.msg-body .code-block pre').boundingBox())?.height;
    assert.equal(streamedHeight, finalHeight, 'the pieces take the same lines as the finished block');
  });

  s.it('reasoning is open while thinking and collapsed once the answer is done, unless the user chose', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [userMessage('u1', 'Think'), assistantMessage('a1', '', { status: 'streaming' })],
          busy: true,
        }),
      ),
    );
    await p.push({
      type: 'append',
      conversationId: 'c1',
      messageId: 'a1',
      textFrom: 0,
      text: '',
      reasoningFrom: 0,
      reasoning: 'Let me *think* about it.',
    });
    const details = p.page.locator('.msg[data-id="a1"] details.reasoning');
    assert.equal(await details.getAttribute('open'), '');
    assert.equal(await details.locator('summary').innerText(), 'Thinking…');
    assert.equal(await details.locator('em').innerText(), 'think');
    await p.push({
      type: 'append',
      conversationId: 'c1',
      messageId: 'a1',
      textFrom: 0,
      text: 'Answer.',
      reasoningFrom: 24,
      reasoning: '',
    });
    await p.push({
      type: 'message',
      conversationId: 'c1',
      message: assistantMessage('a1', 'Answer.', { reasoning: 'Let me *think* about it.' }),
    });
    assert.equal(await details.getAttribute('open'), null);
    await details.locator('summary').click();
    await p.push({
      type: 'message',
      conversationId: 'c1',
      message: assistantMessage('a1', 'Answer.', {
        reasoning: 'Let me *think* about it.',
        usage: { outputTokens: 3 },
      }),
    });
    assert.equal(await details.getAttribute('open'), '', 'the user opened it and it stays open');
    await p.waitFor(`window.__probe.state?.reasoning?.a1 === true`);
  });

  s.it('follows the answer while the user is at the bottom, and stays put once they scroll up', async () => {
    const p = await open({ viewport: { width: 420, height: 500 } });
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [userMessage('u1', 'Long please'), assistantMessage('a1', '', { status: 'streaming' })],
          busy: true,
        }),
      ),
    );
    const distanceFromBottom = `(() => { const el = document.querySelector('.messages'); return el.scrollHeight - el.scrollTop - el.clientHeight; })()`;
    const answer = longAnswer(8_000);
    await p.push({
      type: 'append',
      conversationId: 'c1',
      messageId: 'a1',
      textFrom: 0,
      text: answer.slice(0, 4_000),
      reasoningFrom: 0,
      reasoning: '',
    });
    await p.frames(3);
    assert.ok((await p.page.evaluate<number>(distanceFromBottom)) <= 2, 'scrolled to the end');
    await p.page.evaluate(`document.querySelector('.messages').scrollTop = 100`);
    await p.frames(3);
    await p.push({
      type: 'append',
      conversationId: 'c1',
      messageId: 'a1',
      textFrom: 4_000,
      text: answer.slice(4_000),
      reasoningFrom: 0,
      reasoning: '',
    });
    await p.frames(3);
    assert.equal(
      await p.page.evaluate<number>(`document.querySelector('.messages').scrollTop`),
      100,
      'the reader keeps their place',
    );
    await p.page.evaluate(`document.querySelector('.messages').scrollTop = 1e9`);
    await p.frames(3);
    await p.push({
      type: 'message',
      conversationId: 'c1',
      message: assistantMessage('a1', `${answer}\n\nOne more paragraph at the end.`),
    });
    await p.frames(3);
    assert.ok((await p.page.evaluate<number>(distanceFromBottom)) <= 2, 'following again after scrolling back down');
  });

  s.it('keeps the end in view when the view is made narrower or wider and its text wraps again', async () => {
    const p = await open({ viewport: { width: 300, height: 560 } });
    const messages = [
      userMessage('u1', 'A long answer please'),
      assistantMessage('a1', longAnswer(6_000), { usage: { outputTokens: 9 } }),
    ];
    await p.push(snapshotMessage(snapshot({ messages })));
    const distanceFromBottom = `(() => { const el = document.querySelector('.messages'); return el.scrollHeight - el.scrollTop - el.clientHeight; })()`;
    await p.frames(3);
    assert.ok((await p.page.evaluate<number>(distanceFromBottom)) <= 2, 'opened at the end');
    // As a user drags the side bar's edge: a few steps a frame apart, then a pause at each width.
    for (const [from, to] of [
      [300, 220],
      [220, 300],
      [300, 600],
      [600, 220],
    ] as const) {
      for (let step = 1; step <= 5; step++) {
        await p.page.setViewportSize({ width: Math.round(from + ((to - from) * step) / 5), height: 560 });
        await p.frames(1);
      }
      await p.frames(3);
      assert.ok((await p.page.evaluate<number>(distanceFromBottom)) <= 2, `the end stays in view at ${to} px`);
    }
    // A reader who scrolled up keeps their place instead.
    await p.page.evaluate(`document.querySelector('.messages').scrollTop = 200`);
    await p.frames(3);
    await p.page.setViewportSize({ width: 300, height: 500 });
    await p.frames(3);
    assert.ok((await p.page.evaluate<number>(distanceFromBottom)) > 100, 'not pulled to the end');
  });

  s.it(
    'a long conversation renders its last messages; scrolling up renders older ones in order without jumping, then asks the host for more',
    async () => {
      const p = await open({ viewport: { width: 420, height: 500 } });
      // Messages of varied heights (short questions, answers with a list and a code block).
      const conversation = (from: number, to: number) =>
        Array.from({ length: to - from }, (_, k) => {
          const i = from + k;
          return i % 2 === 0
            ? userMessage(`m${i}`, `Question ${i}`)
            : assistantMessage(
                `m${i}`,
                `Answer ${i}.\n\n- one\n- two\n\n\`\`\`ts\nconst x${i} = ${i};\n\`\`\`\n${'More words. '.repeat(i % 7)}`,
              );
        });
      await p.push(snapshotMessage(snapshot({ messages: conversation(200, 400), hasOlder: true })));
      await p.clearPosted();
      // The messages in the page: only those near the viewport are (messageGroups.ts).
      const ids = () =>
        p.page.evaluate<string[]>(`Array.from(document.querySelectorAll('.log .msg'), (e) => e.dataset.id)`);
      const expectOrdered = (shown: string[]) => {
        const from = Number(shown[0]?.slice(1));
        assert.deepEqual(
          shown,
          Array.from({ length: shown.length }, (_, k) => `m${from + k}`),
          'in order, with no gap',
        );
      };
      const atEnd = `(() => { const el = document.querySelector('.messages'); return el.scrollHeight - el.scrollTop - el.clientHeight <= 2; })()`;
      const first = await ids();
      assert.ok(
        first.length > 0 && first.length < 60,
        `only the last messages are rendered at first (${first.length})`,
      );
      expectOrdered(first);
      assert.equal(first.at(-1), 'm399');
      assert.ok(await p.page.evaluate<boolean>(atEnd), 'opened at the end');
      assert.equal(
        await p.page.getByRole('button', { name: 'Load older messages' }).isVisible(),
        false,
        'older messages are still in the view',
      );

      // Scroll to the top again and again: each time older messages appear above, and the message
      // at the top of the viewport stays where it was on screen.
      const topOf = (id: string) =>
        `(() => { const m = document.querySelector('.msg[data-id="${id}"]'); const list = document.querySelector('.messages'); return m.getBoundingClientRect().top - list.getBoundingClientRect().top; })()`;
      let rounds = 0;
      let shown = first;
      while (shown[0] !== 'm200') {
        assert.ok(rounds++ < 200, 'every held message gets rendered');
        await p.page.evaluate(`document.querySelector('.messages').scrollTop = 0`);
        await p.frames(1);
        const before = await p.page.evaluate<{ id: string; top: number } | null>(TOP_MESSAGE);
        await p.frames(3);
        shown = await ids();
        expectOrdered(shown);
        // Scroll offsets are whole pixels: each reveal in these frames may round by up to half a pixel.
        if (before) {
          const after = await p.page.evaluate<number>(topOf(before.id));
          assert.ok(
            Math.abs(after - before.top) <= 2,
            `the message at the top stayed in place (${before.id}: ${before.top} px from the top, then ${after} px)`,
          );
        }
      }
      assert.ok(rounds > 1, 'older messages came in several steps');
      assert.ok(shown.length < 150, `messages far below the viewport left the page (${shown.length} of 200 in it)`);
      // All 200 held messages are rendered and the reader is at the top: the host is asked for more, once.
      await p.page.evaluate(`document.querySelector('.messages').scrollTop = 0`);
      await p.waitForPosted('loadOlder');
      await p.frames(3);
      assert.equal(posts(await p.posted(), 'loadOlder').length, 1, 'asked once until the host answers');
      assert.equal(await p.page.getByRole('button', { name: 'Load older messages' }).isVisible(), true);

      // The host answers with a larger window: nothing on screen moves, then scrolling up shows the older ones.
      const oldest = shown[0] as string;
      const before = await p.page.evaluate<number>(topOf(oldest));
      await p.push(snapshotMessage(snapshot({ messages: conversation(0, 400), hasOlder: false })));
      // The reader is at the top, so older messages are rendered above at once; what they saw stays put.
      expectOrdered(await ids());
      assert.ok((await ids()).includes(oldest));
      const afterLoad = await p.page.evaluate<number>(topOf(oldest));
      assert.ok(
        Math.abs(afterLoad - before) <= 1,
        `the message at the top stayed in place (${oldest}: ${before} px from the top, then ${afterLoad} px)`,
      );
      for (let i = 0; i < 200 && (await ids())[0] !== 'm0'; i++) {
        await p.page.evaluate(`document.querySelector('.messages').scrollTop = 0`);
        await p.frames(2);
      }
      expectOrdered(await ids());
      assert.equal((await ids())[0], 'm0');
      assert.equal(
        await p.page.getByRole('button', { name: 'Load older messages' }).isVisible(),
        false,
        'nothing older',
      );
      // Back at the end, the newest are in the page again, in order; a new message there is rendered too.
      await p.page.evaluate(
        `(() => { const el = document.querySelector('.messages'); el.scrollTop = el.scrollHeight; })()`,
      );
      await p.frames(3);
      expectOrdered(await ids());
      assert.equal((await ids()).at(-1), 'm399');
      await p.push(
        snapshotMessage(
          snapshot({ messages: [...conversation(0, 400), userMessage('m400', 'Question 400')], hasOlder: false }),
        ),
      );
      await p.page.evaluate(
        `(() => { const el = document.querySelector('.messages'); el.scrollTop = el.scrollHeight; })()`,
      );
      await p.frames(3);
      expectOrdered(await ids());
      assert.equal((await ids()).at(-1), 'm400');
      // And the oldest stay rendered: up at the top again, the first message is there at once.
      await p.page.evaluate(`document.querySelector('.messages').scrollTop = 0`);
      await p.frames(3);
      assert.equal((await ids())[0], 'm0');
    },
  );

  s.it(
    'messages far off screen leave the page and come back as they near it, the same elements, with no jump',
    async () => {
      const messages = Array.from({ length: 120 }, (_, i) =>
        i % 2 === 0
          ? userMessage(`m${i}`, `Question ${i}`)
          : assistantMessage(`m${i}`, `Answer ${i}.\n\n${'Words. '.repeat(40)}`),
      );
      const p = await open({ viewport: { width: 420, height: 500 } });
      await p.push(snapshotMessage(snapshot({ messages, hasOlder: false })));
      const inPage = () => p.page.evaluate<number>(`document.querySelectorAll('.log .msg').length`);
      // Scroll up until every message was rendered once.
      for (
        let i = 0;
        i < 300 && !(await p.page.evaluate<boolean>(`document.querySelector('.msg[data-id="m0"]') !== null`));
        i++
      ) {
        await p.page.evaluate(`document.querySelector('.messages').scrollTop = 0`);
        await p.frames(2);
      }
      assert.ok((await inPage()) < 120, `the page holds only what is near the viewport (${await inPage()} of 120)`);
      // An answer keeps its element while it is away (a mark set on it now is still there later).
      for (
        let i = 0;
        i < 100 && !(await p.page.evaluate<boolean>(`document.querySelector('.msg[data-id="m41"]') !== null`));
        i++
      ) {
        await p.page.evaluate(`document.querySelector('.messages').scrollTop += 300`);
        await p.frames(2);
      }
      await p.page.evaluate(`document.querySelector('.msg[data-id="m41"]').dataset.probe = 'kept'`);
      const height = await p.page.evaluate<number>(`document.querySelector('.messages').scrollHeight`);
      await p.page.evaluate(
        `(() => { const el = document.querySelector('.messages'); el.scrollTop = el.scrollHeight; })()`,
      );
      await p.frames(4);
      assert.equal(
        await p.page.evaluate<boolean>(`document.querySelector('.msg[data-id="m41"]') === null`),
        true,
        'far above the viewport: out of the page',
      );
      assert.equal(
        await p.page.evaluate<number>(`document.querySelector('.messages').scrollHeight`),
        height,
        'what left the page keeps its height',
      );
      // Scroll back up by steps: the message at the top of the viewport never jumps.
      const marks: Array<string | null> = [];
      for (
        let i = 0;
        i < 200 && (await p.page.evaluate<number>(`document.querySelector('.messages').scrollTop`)) > 0;
        i++
      ) {
        await p.page.evaluate(`document.querySelector('.messages').scrollTop -= 300`);
        await p.frames(1);
        const before = await p.page.evaluate<{ id: string; top: number } | null>(TOP_MESSAGE);
        await p.frames(3);
        const after = await p.page.evaluate<{ id: string; top: number } | null>(TOP_MESSAGE);
        if (before && after && before.id === after.id)
          assert.ok(
            Math.abs(after.top - before.top) <= 2,
            `${before.id} stayed in place (${before.top} → ${after.top})`,
          );
        marks.push(
          await p.page.evaluate<string | null>(`document.querySelector('.msg[data-id="m41"]')?.dataset.probe ?? null`),
        );
      }
      assert.ok(marks.includes('kept'), 'the message came back on the way up');
      assert.ok(
        marks.every((m) => m === null || m === 'kept'),
        'the same element came back',
      );
      // A message that holds the focus stays in the page wherever the reader scrolls.
      await p.page.evaluate(`document.querySelector('.msg[data-id="m1"] button').focus()`);
      await p.page.evaluate(
        `(() => { const el = document.querySelector('.messages'); el.scrollTop = el.scrollHeight; })()`,
      );
      await p.frames(4);
      assert.equal(
        await p.page.evaluate<boolean>(
          `document.querySelector('.msg[data-id="m1"]')?.contains(document.activeElement) === true`,
        ),
        true,
        'the focused message stayed, with the focus',
      );
      const far = Array.from({ length: 40 }, (_, k) => `m${k + 45}`);
      assert.ok(
        await p.page.evaluate<boolean>(
          `${JSON.stringify(far)}.every((id) => document.querySelector('.msg[data-id="' + id + '"]') === null)`,
        ),
        'the others far off screen left the page',
      );
    },
  );

  s.it('a saved scroll position in a long conversation is restored to the same message', async () => {
    const messages = Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0
        ? userMessage(`m${i}`, `Question ${i}`)
        : assistantMessage(`m${i}`, `Answer ${i}.\n\n${'Words. '.repeat(40)}`),
    );
    // A reader scrolls up a long way, then the view is reloaded with what it saved.
    const first = await harness().open({ viewport: { width: 420, height: 500 } });
    let seen: { id: string; top: number } | null;
    let saved: { rendered?: number };
    try {
      await first.push(snapshotMessage(snapshot({ messages, hasOlder: true })));
      for (
        let i = 0;
        i < 300 && !(await first.page.evaluate<boolean>(`document.querySelector('.msg[data-id="m100"]') !== null`));
        i++
      ) {
        await first.page.evaluate(`document.querySelector('.messages').scrollTop = 0`);
        await first.frames(2);
      }
      await first.page.evaluate(`document.querySelector('.msg[data-id="m100"]').scrollIntoView()`);
      await first.frames(3);
      seen = await first.page.evaluate<{ id: string; top: number } | null>(TOP_MESSAGE);
      assert.equal(seen?.id, 'm100');
      // The view saves its state a moment after a scroll: wait until it has saved this position.
      await first.waitFor(`window.__probe.state?.scrollTop === document.querySelector('.messages').scrollTop`);
      saved = await first.uiState<{ rendered?: number }>();
    } finally {
      await closeAndCheck(first);
    }
    assert.ok((saved.rendered ?? 0) >= 100, `as many messages rendered are saved (${saved.rendered})`);
    const p = await open({ viewport: { width: 420, height: 500 }, uiState: saved });
    await p.push(snapshotMessage(snapshot({ messages, hasOlder: true })));
    await p.frames(3);
    const restored = await p.page.evaluate<{ id: string; top: number } | null>(TOP_MESSAGE);
    assert.equal(restored?.id, seen?.id, 'the same message at the top');
    assert.ok(
      Math.abs((restored?.top ?? NaN) - (seen?.top ?? NaN)) <= 1,
      `at the same place (${seen?.top} → ${restored?.top})`,
    );
  });

  s.it('a missed delta asks for a snapshot once and waits for it', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(snapshot({ messages: [assistantMessage('a1', 'Hello', { status: 'streaming' })], busy: true })),
    );
    await p.clearPosted();
    await p.push({
      type: 'append',
      conversationId: 'c1',
      messageId: 'a1',
      textFrom: 5,
      text: ' there',
      reasoningFrom: 0,
      reasoning: '',
    });
    assert.equal(await p.page.locator('.msg-body').innerText(), 'Hello there');
    assert.deepEqual(await p.posted(), []);
    await p.push({
      type: 'append',
      conversationId: 'c1',
      messageId: 'a1',
      textFrom: 99,
      text: 'lost',
      reasoningFrom: 0,
      reasoning: '',
    });
    await p.push({
      type: 'append',
      conversationId: 'c1',
      messageId: 'a1',
      textFrom: 11,
      text: ' ignored',
      reasoningFrom: 0,
      reasoning: '',
    });
    assert.deepEqual(await p.posted(), [{ type: 'needSnapshot' }]);
    assert.equal(await p.page.locator('.msg-body').innerText(), 'Hello there');
    await p.push(
      snapshotMessage(
        snapshot({ messages: [assistantMessage('a1', 'Hello there, friend', { status: 'streaming' })], busy: true }),
      ),
    );
    await p.push({
      type: 'append',
      conversationId: 'c1',
      messageId: 'a1',
      textFrom: 19,
      text: '!',
      reasoningFrom: 0,
      reasoning: '',
    });
    assert.equal(await p.page.locator('.msg-body').innerText(), 'Hello there, friend!');
  });

  s.it('posts about another conversation or a message the view does not have change nothing', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [userMessage('u1', 'Hi'), assistantMessage('a1', 'Hello', { status: 'streaming' })],
          busy: true,
        }),
      ),
    );
    await p.clearPosted();
    const page = p.page;
    // An answer still streaming in conversation c2 (the user switched away from it) keeps posting.
    await p.push(
      {
        type: 'append',
        conversationId: 'c2',
        messageId: 'a1',
        textFrom: 5,
        text: ' from c2',
        reasoningFrom: 0,
        reasoning: '',
      },
      {
        type: 'append',
        conversationId: 'c2',
        messageId: 'b7',
        textFrom: 0,
        text: 'other',
        reasoningFrom: 0,
        reasoning: '',
      },
      { type: 'message', conversationId: 'c2', message: assistantMessage('a1', 'Replaced from c2') },
      { type: 'message', conversationId: 'c2', message: assistantMessage('b7', 'A whole answer of c2') },
      { type: 'busy', conversationId: 'c2', busy: false },
    );
    // And in c1, posts about a message this view does not have (removed by a regenerate) are stale.
    await p.push(
      {
        type: 'append',
        conversationId: 'c1',
        messageId: 'gone',
        textFrom: 0,
        text: 'x',
        reasoningFrom: 0,
        reasoning: '',
      },
      { type: 'message', conversationId: 'c1', message: assistantMessage('gone', 'An answer that was removed') },
    );
    await p.push({
      type: 'append',
      conversationId: 'c1',
      messageId: 'a1',
      textFrom: 5,
      text: ' there',
      reasoningFrom: 0,
      reasoning: '',
    });
    assert.equal(await page.locator('.msg-body').innerText(), 'Hello there');
    assert.deepEqual(await page.locator('.msg').evaluateAll((els) => els.map((e) => e.getAttribute('data-id'))), [
      'u1',
      'a1',
    ]);
    assert.equal(
      await page.getByRole('button', { name: 'Stop the answer (Escape)' }).isVisible(),
      true,
      'c2 finishing does not end the busy state of c1',
    );
    assert.deepEqual(await p.posted(), [], 'stale posts are ignored without asking for a snapshot');
  });

  // Correctness of the incremental renderer, not its speed (bench row 5 measures that): deltas of 5
  // characters cut every construct at every place in the 20 KB answer; the large ones take 50 so
  // that a busy machine still gets through them well inside the test's time.
  s.it(
    'streams answers in small deltas (20 KB by 5 characters, 200 KB and a 100 KB code fence by 50) and shows exactly their text',
    async () => {
      const p = await open();
      const results: string[] = [];
      for (const [label, markdown, delta] of [
        ['20 KB answer', longAnswer(20 * 1024), 5],
        ['200 KB answer', longAnswer(200 * 1024), 50],
        ['100 KB single code fence', longCodeFence(100 * 1024), 50],
      ] as const) {
        const measured = await measureStreaming(p, markdown, delta);
        results.push(formatMeasurement(label, measured));
        assert.equal(
          await p.probe('answerText', measured.messageId),
          await expectedText(p, markdown),
          `${label}: rendered text`,
        );
      }
      console.log(`      streaming measurements:\n${results.map((r) => `        ${r}`).join('\n')}`);
    },
  );
}
