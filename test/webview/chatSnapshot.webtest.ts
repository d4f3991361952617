/**
 * The chat webview in Chromium (snapshot and header). What a snapshot from the host shows: its
 * messages, the header and the composer's controls, notices and errors; and host messages that do
 * not fit the protocol.
 */
import assert from 'node:assert/strict';
import type { Snapshot } from '../../src/shared/protocol';
import type { SuiteBuilder } from './chatView.webtest';
import { chatPages, posts } from './chatPages';
import { assistantMessage, RICH_ANSWER, snapshot, snapshotMessage, userMessage } from './fixtures';
import type { WebviewHarness } from './harness';
import { expectedText } from './streaming';

export function defineSnapshotTests(s: SuiteBuilder, harness: () => WebviewHarness): void {
  const { open } = chatPages(s, harness);
  s.it('posts ready first and renders the messages of a snapshot', async () => {
    const p = await open();
    assert.deepEqual((await p.posted())[0], { type: 'ready' });
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [
            userMessage('u1', 'How do I sort?\nBy age.', {
              attachments: [{ label: 'users.ts', chars: 1234, truncated: false }],
            }),
            assistantMessage('a1', RICH_ANSWER, {
              usage: { inputTokens: 1200, outputTokens: 345, reasoningTokens: 20, totalTokens: 1565 },
            }),
          ],
          hasOlder: true,
        }),
      ),
    );
    const page = p.page;
    assert.equal(await page.locator('.msg').count(), 2);
    assert.equal(await page.locator('.msg-user .user-text').innerText(), 'How do I sort?\nBy age.');
    assert.match(await page.locator('.msg-user .chip').innerText(), /users\.ts\s+1\.2K characters/);
    assert.equal(await page.locator('.msg-assistant .msg-body h1').innerText(), 'Sorting objects');
    assert.equal(await page.locator('.msg-assistant .msg-body table th').count(), 3);
    assert.equal(await page.locator('.msg-assistant .msg-body td.align-right').count(), 1);
    assert.match(await page.locator('.msg-assistant .msg-meta').innerText(), /gpt-4\.1 · Responses/);
    assert.equal(
      await page.locator('.msg-assistant .msg-usage').innerText(),
      'Tokens: 1,200 in · 345 out · 20 reasoning · 1,565 total',
    );
    assert.equal(await page.locator('.loading').count(), 0);
    await page.getByRole('button', { name: 'Load older messages' }).click();
    assert.equal((await p.waitForPosted('loadOlder')).type, 'loadOlder');
  });

  s.it(
    "shows no conversation controls of its own (the title bar has them) and no title strip (the title is beside the view's name)",
    async () => {
      const p = await open();
      await p.push(snapshotMessage(snapshot({ messages: [userMessage('u1', 'Hi'), assistantMessage('a1', 'Hello')] })));
      const page = p.page;
      assert.equal(await page.getByLabel('Conversation', { exact: true }).count(), 0);
      for (const name of [/new conversation/i, /rename/i, /delete/i, /export/i])
        assert.equal(await page.getByRole('button', { name }).count(), 0, `no ${String(name)} button`);
      assert.equal(await page.getByText('Sorting in TypeScript').count(), 0, 'the title is not a strip of the view');
    },
  );

  s.it(
    'model picker sits in the composer, groups chat models by provider; a protocol chooser only for a model with several',
    async () => {
      const p = await open();
      await p.push(snapshotMessage(snapshot()));
      const page = p.page;
      const model = page.locator('.composer-box').getByLabel('Model', { exact: true });
      assert.equal(await model.evaluate((el) => el.tagName), 'SELECT', 'a native select');
      assert.deepEqual(
        await model.locator('optgroup').evaluateAll((groups) => groups.map((g) => g.getAttribute('label'))),
        ['openai', 'anthropic', 'zhipu'],
      );
      assert.deepEqual(await model.locator('optgroup[label="openai"] option').allInnerTexts(), [
        'gpt-4.1',
        'gpt-4.1-mini',
      ]);
      assert.equal(
        await model.locator('option[value="gpt-4.1"]').getAttribute('title'),
        'gpt-4.1: Responses, Chat Completions',
      );
      const protocol = page.getByLabel('Protocol', { exact: true });
      assert.equal(await protocol.isVisible(), true);
      assert.deepEqual(await protocol.locator('option').allInnerTexts(), ['Responses', 'Chat Completions']);
      assert.equal(await protocol.inputValue(), 'responses');
      assert.equal(await page.locator('.protocol-name').isVisible(), false, 'the protocol is shown once');
      assert.equal(await page.getByRole('button', { name: 'Web search' }).isVisible(), false);

      await model.selectOption('claude-sonnet-4');
      assert.deepEqual(await p.waitForPosted('selectModel'), {
        type: 'selectModel',
        conversationId: 'c1',
        model: 'claude-sonnet-4',
      });
      await protocol.selectOption('chatCompletions');
      assert.deepEqual(await p.waitForPosted('setProtocol'), {
        type: 'setProtocol',
        conversationId: 'c1',
        protocol: 'chatCompletions',
      });
      await p.clearPosted();
      // The model's first protocol is its default: choosing it clears the conversation's override.
      await protocol.selectOption('responses');
      assert.deepEqual(await p.waitForPosted('setProtocol'), { type: 'setProtocol', conversationId: 'c1' });

      await p.push(snapshotMessage(snapshot({ model: 'glm-4.6', enableSearch: false })));
      assert.equal(await protocol.isVisible(), false, 'a model with one protocol has nothing to choose');
      assert.equal(await page.locator('.protocol-name').innerText(), 'Chat Completions');
      const search = page.getByRole('button', { name: 'Web search' });
      assert.equal(await search.isVisible(), true);
      assert.equal(await search.getAttribute('aria-pressed'), 'false');
      await search.click();
      assert.deepEqual(await p.waitForPosted('setSearch'), {
        type: 'setSearch',
        conversationId: 'c1',
        enabled: true,
      });
      assert.equal(await search.getAttribute('aria-pressed'), 'true');
      await p.clearPosted();
      await p.push(snapshotMessage(snapshot({ model: 'glm-4.6', enableSearch: true })));
      assert.equal(await search.getAttribute('aria-pressed'), 'true');
      await search.focus();
      await page.keyboard.press('Space');
      assert.deepEqual(await p.waitForPosted('setSearch'), {
        type: 'setSearch',
        conversationId: 'c1',
        enabled: false,
      });
      assert.equal(await search.getAttribute('aria-pressed'), 'false');

      await p.push(snapshotMessage(snapshot({ model: 'claude-sonnet-4', protocolOverride: 'chatCompletions' })));
      assert.equal(await protocol.inputValue(), 'chatCompletions');
      assert.equal(await page.getByRole('button', { name: 'Web search' }).isVisible(), false);
    },
  );

  s.it(
    'an empty conversation offers starter prompts that fill the message box, and says what the model can do',
    async () => {
      const p = await open();
      const models: Snapshot['models'] = [
        {
          id: 'gpt-4.1',
          provider: 'openai',
          protocols: ['responses'],
          searchable: true,
          imageInput: true,
          thinking: { choices: ['auto', 'low', 'high'] },
        },
        { id: 'plain-model', provider: 'other', protocols: ['chatCompletions'], searchable: false },
      ];
      await p.push(snapshotMessage(snapshot({ models, model: 'gpt-4.1' })));
      const page = p.page;
      assert.equal(
        await page.locator('.empty-can').innerText(),
        'gpt-4.1: takes images · can search the web · thinking can be set.',
      );
      const starters = page.getByRole('group', { name: 'Starter prompts' }).getByRole('button');
      assert.ok((await starters.count()) >= 3 && (await starters.count()) <= 4, 'a few starters');
      assert.equal(await starters.first().innerText(), 'Describe this image and read out any text in it:');
      await p.clearPosted();
      await starters.nth(1).click();
      const input = page.getByRole('textbox', { name: 'Message' });
      assert.equal(await input.inputValue(), 'Search the web for the latest news about ');
      assert.equal(
        await page.evaluate<string>('document.activeElement.getAttribute("aria-label")'),
        'Message',
        'the caret is in the message box',
      );
      assert.deepEqual(posts(await p.posted(), 'send'), [], 'a starter is not sent');
      await p.waitFor(`window.__probe.state?.draft === 'Search the web for the latest news about '`);

      await p.push(snapshotMessage(snapshot({ models, model: 'plain-model' })));
      assert.equal(
        await page.locator('.empty-can').innerText(),
        'plain-model: text only (no images, web search or thinking control).',
      );
      assert.equal(await page.getByText('Describe this image').count(), 0, 'only starters the model can do');
      await p.push(snapshotMessage(snapshot({ models, model: 'plain-model', messages: [userMessage('u1', 'Hi')] })));
      assert.equal(await page.locator('.empty').isVisible(), false);
    },
  );

  s.it(
    'thinking control next to the model picker: the choices the model honours, posted as the conversation’s choice',
    async () => {
      const models: Snapshot['models'] = [
        { id: 'gpt-4.1', provider: 'openai', protocols: ['responses'], searchable: false },
        {
          id: 'gpt-5',
          provider: 'openai',
          protocols: ['responses'],
          searchable: false,
          thinking: { choices: ['auto', 'on', 'low', 'medium', 'high'] },
        },
        {
          id: 'glm-4.6',
          provider: 'zhipu',
          protocols: ['chatCompletions'],
          searchable: false,
          thinking: { choices: ['auto', 'off', 'on'] },
        },
        {
          id: 'kimi-k2-thinking',
          provider: 'moonshot',
          protocols: ['chatCompletions'],
          searchable: false,
          thinking: { always: true, choices: [] },
        },
      ];
      const p = await open();
      const page = p.page;
      const thinking = page.getByLabel('Thinking', { exact: true });
      await p.push(snapshotMessage(snapshot({ models, model: 'gpt-4.1', thinking: 'on' })));
      assert.equal(await thinking.isVisible(), false, 'a model without a control shows none');
      assert.equal(await page.getByText('Always thinks', { exact: true }).isVisible(), false);

      await p.push(snapshotMessage(snapshot({ models, model: 'glm-4.6', thinking: 'off' })));
      assert.equal(await thinking.isVisible(), true);
      assert.deepEqual(await thinking.locator('option').allInnerTexts(), ['Default', 'Off', 'On']);
      assert.equal(await page.locator('.composer-box .thinking-control').isVisible(), true, 'in the composer');
      assert.equal(await thinking.inputValue(), 'off');
      await thinking.selectOption('on');
      assert.deepEqual(await p.waitForPosted('setThinking'), {
        type: 'setThinking',
        conversationId: 'c1',
        choice: 'on',
      });

      // A depth on a model with only a switch is sent as "on", and shown so.
      await p.push(snapshotMessage(snapshot({ models, model: 'glm-4.6', thinking: 'high' })));
      assert.equal(await thinking.inputValue(), 'on');

      await p.push(snapshotMessage(snapshot({ models, model: 'gpt-5', thinking: 'high' })));
      assert.deepEqual(await thinking.locator('option').allInnerTexts(), ['Default', 'On', 'Low', 'Medium', 'High']);
      assert.equal(await thinking.inputValue(), 'high');
      await p.clearPosted();
      await thinking.selectOption('low');
      assert.deepEqual(await p.waitForPosted('setThinking'), {
        type: 'setThinking',
        conversationId: 'c1',
        choice: 'low',
      });

      // "off" kept with the conversation, on a model that cannot turn thinking off: shown, not offered.
      await p.push(snapshotMessage(snapshot({ models, model: 'gpt-5', thinking: 'off' })));
      assert.equal(await thinking.inputValue(), 'off');
      assert.equal(await thinking.locator('option[value="off"]').isDisabled(), true);
      assert.match(await thinking.locator('option[value="off"]').innerText(), /not for this model/);

      await p.push(snapshotMessage(snapshot({ models, model: 'kimi-k2-thinking', thinking: 'off' })));
      assert.equal(await thinking.isVisible(), false);
      assert.equal(await page.getByText('Always thinks', { exact: true }).isVisible(), true);
    },
  );

  s.it('thinking control in Chinese', async () => {
    const p = await open({ language: 'zh-cn' });
    const models: Snapshot['models'] = [
      {
        id: 'glm-4.6',
        provider: 'zhipu',
        protocols: ['chatCompletions'],
        searchable: false,
        thinking: { choices: ['auto', 'off', 'on'] },
      },
    ];
    await p.push(snapshotMessage(snapshot({ models, model: 'glm-4.6', thinking: 'auto' })));
    const thinking = p.page.getByLabel('思考过程', { exact: true });
    assert.deepEqual(await thinking.locator('option').allInnerTexts(), ['默认', '关闭', '开启']);
  });

  s.it('shows the notice banner with its action', async () => {
    const p = await open();
    await p.push(snapshotMessage(snapshot({ notice: { message: 'No API key is set.', action: 'setKey' } })));
    assert.match(await p.page.locator('.notice').innerText(), /No API key is set\./);
    await p.page.locator('.notice').getByRole('button', { name: 'Set API Key' }).click();
    assert.deepEqual(await p.waitForPosted('action'), { type: 'action', action: 'setKey' });
    await p.push(snapshotMessage(snapshot()));
    assert.equal(await p.page.locator('.notice').isVisible(), false);
  });

  s.it('shows an error that produced no text as an error, and one after some text as cut off', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [
            userMessage('u1', 'hello'),
            assistantMessage('a1', '', {
              status: 'cut',
              error: { kind: 'server', message: 'The gateway had an internal error (HTTP 500).' },
            }),
            userMessage('u2', 'again'),
            assistantMessage('a2', 'Half an', {
              status: 'cut',
              error: { kind: 'network', message: 'The connection dropped.' },
            }),
          ],
        }),
      ),
    );
    assert.equal(await p.page.locator('.msg[data-id="a1"] .badge').innerText(), 'Error');
    assert.equal(await p.page.locator('.msg[data-id="a2"] .badge').innerText(), 'Cut off');
  });

  s.it('recalls earlier questions with Up and Down in an empty input, and leaves typed text alone', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [
            userMessage('u1', 'first question'),
            assistantMessage('a1', 'one'),
            userMessage('u2', 'second question'),
            assistantMessage('a2', 'two'),
          ],
        }),
      ),
    );
    const input = p.page.getByRole('textbox', { name: 'Message' });
    await input.focus();
    await input.press('ArrowUp');
    assert.equal(await input.inputValue(), 'second question');
    await input.press('ArrowUp');
    assert.equal(await input.inputValue(), 'first question');
    await input.press('ArrowUp');
    assert.equal(await input.inputValue(), 'first question', 'the oldest question stays');
    await input.press('ArrowDown');
    assert.equal(await input.inputValue(), 'second question');
    await input.press('ArrowDown');
    assert.equal(await input.inputValue(), '', 'past the newest question the input is empty again');
    await input.fill('my own text');
    await input.press('ArrowUp');
    assert.equal(await input.inputValue(), 'my own text');
  });

  s.it('links explicit addresses only, never bare file names', async () => {
    const p = await open();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [
            assistantMessage(
              'a1',
              'See notes.md, README.md and src/app.ts, or https://example.com/docs and www.example.org.',
            ),
          ],
        }),
      ),
    );
    const links = await p.page.locator('.msg[data-id="a1"] a').allInnerTexts();
    assert.deepEqual(links, ['https://example.com/docs']);
  });

  s.it('shows its words in the display language the host hands it (Chinese)', async () => {
    const p = await open({ language: 'zh-cn' });
    assert.equal(await p.page.evaluate<string>('document.documentElement.lang'), 'zh-cn');
    await p.push(snapshotMessage(snapshot({ notice: { message: '请设置 API 密钥以开始对话。', action: 'setKey' } })));
    await p.page.locator('.notice').getByRole('button', { name: '设置 API 密钥' }).click();
    assert.deepEqual(await p.waitForPosted('action'), { type: 'action', action: 'setKey' });
  });

  s.it('decodes HTML entities exactly as markdown-it does (the bundle replaces its entity tables)', async () => {
    const p = await open();
    const markdown = [
      'Named: &copy; &amp; &nbsp;x &lt;b&gt; &eacute;t&eacute; &NotEqualTilde; &Afr; &semi; &notin;',
      'Not entities: &notit; &bogus; &amp &#xZZ; &;',
      'Numeric: &#65; &#x42; &#0; &#x110000;',
      '[link](https://example.com/?a=1&amp;b=2 "t&eacute;st") `&amp; in code`',
      '```&lt;ts\n&amp; stays in fences\n```',
    ].join('\n\n');
    await p.push(snapshotMessage(snapshot({ messages: [assistantMessage('a1', markdown)] })));
    assert.equal(await p.probe('answerText', 'a1'), await expectedText(p, markdown));
    assert.equal(await p.page.getByRole('link', { name: 'link' }).getAttribute('href'), 'https://example.com/?a=1&b=2');
    assert.equal(await p.page.getByRole('link', { name: 'link' }).getAttribute('title'), 'tést');
  });

  s.it('ignores and logs host messages that do not fit the protocol', async () => {
    const p = await open();
    await p.push(snapshotMessage(snapshot({ messages: [assistantMessage('a1', 'Hello')] })));
    await p.clearPosted();
    await p.push(
      { type: 'bogus' },
      { type: 'append', conversationId: 'c1', messageId: 'a1', textFrom: 'five', text: 'x' },
      { type: 'snapshot', state: { messages: 'nope' } },
    );
    assert.equal(p.console.filter((line) => line.includes('does not fit the protocol')).length, 3);
    assert.equal(await p.page.locator('.msg-body').innerText(), 'Hello');
    assert.deepEqual(await p.posted(), []);
  });
}
