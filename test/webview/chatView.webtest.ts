/**
 * The chat webview in a real Chromium page with the host's CSP (see harness.ts).
 *
 * The suite is built with Mocha's programmatic API rather than `describe` globals, so that
 * `runWebviewSuite()` can be imported and run from `npm test` (test/runAll.ts) or from
 * `npx tsx test/webview/run.ts`.
 */
import assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import hljs from 'highlight.js/lib/core';
import typescript from 'highlight.js/lib/languages/typescript';
import MarkdownIt from 'markdown-it';
import Mocha from 'mocha';
import fc from 'fast-check';
import { BlockSplitter, splitBlocks } from '../../src/webview/chat/blockSplitter';
import type { Snapshot, WebviewMessage } from '../../src/shared/protocol';
import { reportNotRun, tallyRun } from '../support/mochaResults';
import { type ChatPage, WebviewHarness, closeAndCheck } from './harness';
import {
  assistantMessage,
  longAnswer,
  longCodeFence,
  RICH_ANSWER,
  snapshot,
  snapshotMessage,
  userMessage,
} from './fixtures';
import { expectedText, formatMeasurement, measureStreaming } from './streaming';
import { defineMediaTests } from './mediaView.webtest';
import { defineTranslationTests } from './translation.webtest';
import { defineNoticeTests } from './notices.webtest';
import { defineNewcomerTests } from './newcomer.webtest';

export interface SuiteResult {
  passed: number;
  failed: number;
  skipped: number;
}

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'test-results', 'webview');

type TestBody = () => Promise<void> | void;

/** Builds Mocha suites without globals. */
export class SuiteBuilder {
  constructor(readonly suite: Mocha.Suite) {}
  describe(title: string, body: (s: SuiteBuilder) => void): void {
    body(new SuiteBuilder(Mocha.Suite.create(this.suite, title)));
  }
  it(title: string, fn: TestBody): void {
    this.suite.addTest(new Mocha.Test(title, async () => fn()));
  }
  before(fn: TestBody): void {
    this.suite.beforeAll(async () => fn());
  }
  after(fn: TestBody): void {
    this.suite.afterAll(async () => fn());
  }
  afterEach(fn: TestBody): void {
    this.suite.afterEach(async () => fn());
  }
}

function posts<T extends WebviewMessage['type']>(
  messages: WebviewMessage[],
  type: T,
): Extract<WebviewMessage, { type: T }>[] {
  return messages.filter((m): m is Extract<WebviewMessage, { type: T }> => m.type === type);
}

/** Sends without their random ids, to compare with what is expected. */
function withoutSendIds(
  sends: Array<Extract<WebviewMessage, { type: 'send' }>>,
): Array<Omit<Extract<WebviewMessage, { type: 'send' }>, 'sendId'>> {
  return sends.map(({ sendId: _sendId, ...rest }) => rest);
}

hljs.registerLanguage('typescript', typescript);

function defineSplitterTests(t: SuiteBuilder): void {
  const md = new MarkdownIt({ html: false, linkify: true });
  const text = (html: string): string =>
    html
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();

  t.it('splits at blank lines outside fences and keeps fences and indented continuations whole', () => {
    const source =
      'para one\nline two\n\n```js\na\n\nb\n```\nafter fence\n\n- item\n\n  continued\n\n~~~\nx\n\ny\n~~~\n\nlast';
    assert.deepEqual(splitBlocks(source), [
      'para one\nline two\n\n',
      '```js\na\n\nb\n```\n',
      'after fence\n\n',
      '- item\n\n  continued\n\n',
      '~~~\nx\n\ny\n~~~\n',
      '\nlast',
    ]);
  });

  t.it('rendering block by block shows the same text as rendering the whole answer', () => {
    for (const source of [RICH_ANSWER, longAnswer(40_000), longCodeFence(5_000)]) {
      const whole = text(md.render(source));
      const pieces = text(
        splitBlocks(source)
          .map((b) => md.render(b))
          .join('\n'),
      );
      assert.equal(pieces, whole);
    }
  });

  t.it('feeding text in any chunks gives the same blocks as feeding it at once', () => {
    const source = RICH_ANSWER + longAnswer(6_000);
    const expected = splitBlocks(source);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 400 }), (sizes) => {
        const splitter = new BlockSplitter();
        let fed = 0;
        for (let i = 0; fed < source.length; i++) {
          fed = Math.min(source.length, fed + (sizes[i % sizes.length] as number));
          splitter.feed(source.slice(0, fed));
        }
        const blocks: string[] = [];
        let start = 0;
        for (const end of splitter.ends) {
          blocks.push(source.slice(start, end));
          start = end;
        }
        if (start < source.length) blocks.push(source.slice(start));
        assert.deepEqual(blocks, expected);
      }),
      { numRuns: 60 },
    );
  });
}

/** In the page: the message at the top of the chat's viewport, and where its top is in it. */
const TOP_MESSAGE = `(() => { const list = document.querySelector('.messages'); const r = list.getBoundingClientRect(); const el = document.elementFromPoint(r.left + 40, r.top + 4)?.closest('.msg'); return el ? { id: el.dataset.id, top: el.getBoundingClientRect().top - r.top } : null; })()`;

function defineBrowserTests(t: SuiteBuilder, harness: () => WebviewHarness): void {
  let page: ChatPage | undefined;
  const open = async (options?: Parameters<WebviewHarness['open']>[0]): Promise<ChatPage> => {
    page = await harness().open(options);
    return page;
  };
  t.afterEach(async () => {
    if (page) {
      const closing = page;
      page = undefined;
      await closeAndCheck(closing);
    }
  });

  t.describe('snapshot and header', (s) => {
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
        await p.push(
          snapshotMessage(snapshot({ messages: [userMessage('u1', 'Hi'), assistantMessage('a1', 'Hello')] })),
        );
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
      assert.equal(
        await p.page.getByRole('link', { name: 'link' }).getAttribute('href'),
        'https://example.com/?a=1&b=2',
      );
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
  });

  t.describe('streaming', (s) => {
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
        assert.ok(
          Math.abs((await p.page.evaluate<number>(topOf(oldest))) - before) <= 1,
          'the message at the top stayed in place',
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
            await p.page.evaluate<string | null>(
              `document.querySelector('.msg[data-id="m41"]')?.dataset.probe ?? null`,
            ),
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
  });

  t.describe('input', (s) => {
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
      assert.match(
        await p.page.locator('.composer .chip').innerText(),
        /main\.ts \(lines 1-40\)\s+15K characters, cut/,
      );
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
  });

  t.describe('message actions', (s) => {
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
        await page
          .locator('.msg[data-id="a2"]')
          .getByRole('button', { name: 'Regenerate the last answer' })
          .isVisible(),
        true,
      );
      assert.equal(
        await page
          .locator('.msg[data-id="a1"]')
          .getByRole('button', { name: 'Regenerate the last answer' })
          .isVisible(),
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
        assert.equal(
          await page.evaluate<string>('document.activeElement.getAttribute("aria-label")'),
          'Copy the answer',
        );
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

    s.it(
      'an answer cut at the max tokens limit says so; Continue only on the last answer, by keyboard too',
      async () => {
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
      },
    );

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
        await page
          .locator('.msg[data-id="e4"]')
          .getByRole('button', { name: 'Regenerate the last answer' })
          .isVisible(),
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
  });

  t.describe('security', (s) => {
    const PAYLOADS = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '[x](javascript:alert(1))',
      '[y](JaVaScRiPt:alert(2))',
      '[z](&#106;avascript:alert(3))',
      '[v](vbscript:msgbox(1))',
      '[d](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
      '<javascript:alert(4)>',
      '![i](javascript:alert(5))',
      '<a href="javascript:alert(6)">raw link</a>',
      '<svg onload=alert(7)></svg>',
      '<iframe src="javascript:alert(8)"></iframe>',
      '<style>body { display: none }</style>',
      '<div style="background:url(javascript:alert(9))">styled</div>',
      '[t](https://example.com "x\\" onmouseover=\\"alert(10)")',
      '<details open ontoggle=alert(11)>',
      '```html\n<script>alert(12)</script>\n```',
    ];

    s.it('XSS payloads in answers and questions do not execute and javascript: links are not clickable', async () => {
      const p = await open();
      const markdown = PAYLOADS.join('\n\n');
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [
              userMessage('u1', PAYLOADS.join('\n')),
              assistantMessage('a1', markdown, { reasoning: markdown }),
            ],
          }),
        ),
      );
      const page = p.page;
      // Hover and click everything in the answer and the reasoning, including the text of the would-be links.
      await page.locator('.msg[data-id="a1"] summary').click();
      for (const el of await page.locator('.msg-body a, .msg-body p, .reasoning-body a').all()) {
        await el.hover();
        await el.click({ force: true });
      }
      await p.frames(3);
      const dom = await page.evaluate<{
        dangerous: number;
        handlers: number;
        styles: number;
        badLinks: number;
        links: string[];
      }>(`(() => {
        const list = document.querySelector('.messages');
        const all = Array.from(list.querySelectorAll('*'));
        return {
          // The app's own icons are SVG inside its icon buttons (markdown cannot make a button).
          dangerous: list.querySelectorAll('script, iframe, object, embed, svg:not(.icon-btn > svg.icon), style, form, input:not([type]), details:not(.reasoning)').length,
          handlers: all.filter((el) => Array.from(el.attributes).some((a) => a.name.startsWith('on'))).length,
          styles: all.filter((el) => el.hasAttribute('style')).length,
          badLinks: all.filter((el) => /^\\s*(javascript|vbscript|data):/i.test(el.getAttribute('href') || el.getAttribute('src') || '')).length,
          links: Array.from(list.querySelectorAll('.msg-body a[href]')).map((a) => a.getAttribute('href')),
        };
      })()`);
      assert.deepEqual(dom, { dangerous: 0, handlers: 0, styles: 0, badLinks: 0, links: ['https://example.com'] });
      assert.deepEqual(await p.alerts(), []);
      assert.deepEqual(p.dialogs, []);
      const opened = posts(await p.posted(), 'openLink').map((m) => m.url);
      assert.ok(
        opened.every((u) => u === 'https://example.com/'),
        `only the https link may be opened: ${opened.join(', ')}`,
      );
      assert.match(
        await page.locator('.msg-body').innerText(),
        /<script>alert\(1\)<\/script>/,
        'raw HTML is shown as text',
      );
      assert.match(
        await page.locator('.msg-body').innerText(),
        /\[x\]\(javascript:alert\(1\)\)/,
        'a javascript: link stays plain text',
      );
    });
  });

  t.describe('remote images', (s) => {
    const PNG = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );

    s.it('are not loaded until the user allows them; data: images show at once', async () => {
      const p = await open({ remoteImagesInCsp: true });
      const requests: string[] = [];
      await p.context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith('https://') || url.startsWith('http://images.')) {
          requests.push(url);
          return route.fulfill({ status: 200, contentType: 'image/png', body: PNG });
        }
        return route.continue();
      });
      const text = `Remote: ![a cat](https://images.example.test/cat.png)\n\nInsecure: ![dog](http://images.example.test/dog.png)\n\nInline: ![dot](data:image/png;base64,${PNG.toString('base64')})`;
      await p.push(snapshotMessage(snapshot({ messages: [assistantMessage('a1', text)] })));
      const page = p.page;
      await page.waitForTimeout(300);
      assert.deepEqual(requests, []);
      assert.equal(await page.locator('.msg-body img').count(), 1, 'only the data: image is an <img>');
      assert.match(
        await page.locator('.remote-image').first().innerText(),
        /image “a cat” from images\.example\.test — Load images from images\.example\.test/,
      );
      assert.match(await page.locator('.remote-image').nth(1).innerText(), /not a secure address/);
      await p.clearPosted();
      await page.getByRole('button', { name: 'Load images from images.example.test' }).click();
      assert.deepEqual(await p.posted(), [{ type: 'allowRemoteImageHost', host: 'images.example.test' }]);
      // The view only asks: nothing loads until the host's next snapshot lists the host.
      await p.push(
        snapshotMessage(
          snapshot({ messages: [assistantMessage('a1', text)], remoteImageHosts: ['other.example.test'] }),
        ),
      );
      assert.equal(await page.locator('.msg-body img').count(), 1, 'another allowed host does not let this one in');

      await p.push(
        snapshotMessage(
          snapshot({ messages: [assistantMessage('a1', text)], remoteImageHosts: ['images.example.test'] }),
        ),
      );
      await p.waitFor(
        `Array.from(document.querySelectorAll('.msg-body img')).every((img) => img.complete && img.naturalWidth > 0)`,
      );
      assert.deepEqual(requests, ['https://images.example.test/cat.png']);
      assert.equal(await page.locator('.msg-body img').count(), 2);
      assert.equal(await page.locator('.msg-body img').first().getAttribute('referrerpolicy'), 'no-referrer');
    });
  });

  t.describe('images and web sources', (s) => {
    const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const seeing = {
      id: 'gpt-4.1',
      provider: 'openai',
      protocols: ['responses', 'chatCompletions'],
      searchable: true,
      searchProtocols: ['responses'],
      imageInput: true,
      imageNote: 'gpt-4.1 takes images.',
    } as const;
    const blind = {
      id: 'glm-4.6',
      provider: 'zhipu',
      protocols: ['chatCompletions'],
      searchable: false,
      imageInput: false,
      imageNote: 'glm-4.6 does not take images: the model catalog lists only text input for it.',
    } as const;
    const models = [
      { ...seeing, protocols: [...seeing.protocols], searchProtocols: [...seeing.searchProtocols] },
      { ...blind, protocols: [...blind.protocols] },
    ];
    const image = {
      id: 'a'.repeat(64),
      name: 'dot.png',
      mediaType: 'image/png' as const,
      bytes: 70,
      width: 1,
      height: 1,
      src: `data:image/png;base64,${PNG_1X1}`,
    };

    /** Dispatches a drop (or a paste into the message box) carrying files and/or data, as a browser does. */
    const transfer = (
      p: ChatPage,
      kind: 'drop' | 'paste',
      files: Array<{ name: string; type: string; base64: string }>,
      data: Record<string, string> = {},
    ) =>
      p.page.evaluate(`(() => {
        const dt = new DataTransfer();
        for (const f of ${JSON.stringify(files)}) dt.items.add(new File([Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0))], f.name, { type: f.type }));
        for (const [type, value] of Object.entries(${JSON.stringify(data)})) dt.setData(type, value);
        const input = document.querySelector('textarea.composer-input');
        if (${JSON.stringify(kind)} === 'paste') return input.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
        input.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
        return document.querySelector('.messages').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      })()`);

    s.it(
      'the Image… control attaches for a model that takes images and says why not for one that does not',
      async () => {
        const p = await open();
        await p.push(snapshotMessage(snapshot({ models, model: 'glm-4.6' })));
        const page = p.page;
        const attach = page.locator('button.attach-image');
        assert.equal(await attach.getAttribute('aria-disabled'), 'true');
        assert.match((await attach.getAttribute('title')) ?? '', /glm-4\.6 does not take images/);
        await p.clearPosted();
        // aria-disabled, not disabled: it stays focusable, so a keyboard user can learn why.
        await attach.focus();
        await page.keyboard.press('Enter');
        assert.match(
          await page.locator('.composer-note').innerText(),
          /glm-4\.6 does not take images: the model catalog lists only text input/,
        );
        assert.equal(await page.locator('.composer-note').getAttribute('role'), 'status');
        await transfer(p, 'drop', [{ name: 'dot.png', type: 'image/png', base64: PNG_1X1 }]);
        await p.frames();
        assert.deepEqual(await p.posted(), [], 'nothing is posted for a model without image input');

        await p.push(snapshotMessage(snapshot({ models, model: 'gpt-4.1' })));
        assert.equal(await attach.getAttribute('aria-disabled'), 'false');
        assert.match(
          (await page.getByLabel('Model', { exact: true }).locator('option[value="gpt-4.1"]').getAttribute('title')) ??
            '',
          /takes images · can search the web/,
        );
        await attach.click();
        assert.deepEqual(await p.waitForPosted('attach'), { type: 'attach', conversationId: 'c1', what: 'image' });
      },
    );

    s.it(
      'a dropped or pasted image is posted with its bytes; a dropped explorer file as its URI; text pastes stay text',
      async () => {
        const p = await open();
        await p.push(snapshotMessage(snapshot({ models, model: 'gpt-4.1', imageMaxBytes: 1000 })));
        await transfer(p, 'drop', [
          { name: 'dot.png', type: 'image/png', base64: PNG_1X1 },
          { name: 'notes.txt', type: 'text/plain', base64: 'aGk=' },
        ]);
        assert.deepEqual(await p.waitForPosted('attachImage'), {
          type: 'attachImage',
          conversationId: 'c1',
          name: 'dot.png',
          data: PNG_1X1,
        });
        assert.match(
          await p.page.locator('.composer-note').innerText(),
          /Only images can be dropped here.*1 other file/,
        );
        await p.clearPosted();
        await p.page.getByRole('textbox', { name: 'Message' }).focus();
        await transfer(p, 'paste', [{ name: 'image.png', type: 'image/png', base64: PNG_1X1 }]);
        assert.deepEqual(await p.waitForPosted('attachImage'), {
          type: 'attachImage',
          conversationId: 'c1',
          name: 'image.png',
          data: PNG_1X1,
        });
        await p.clearPosted();
        await transfer(p, 'drop', [], {
          'text/uri-list': '# a comment\r\nfile:///home/user/pics/cat.png\r\nfile:///home/user/pics/dog.webp',
        });
        assert.deepEqual(await p.waitForPosted('attachImageUris'), {
          type: 'attachImageUris',
          conversationId: 'c1',
          uris: ['file:///home/user/pics/cat.png', 'file:///home/user/pics/dog.webp'],
        });
        await p.clearPosted();
        await transfer(p, 'drop', [
          { name: 'huge.png', type: 'image/png', base64: Buffer.alloc(1500).toString('base64') },
        ]);
        await p.frames();
        assert.match(
          await p.page.locator('.composer-note').innerText(),
          /huge\.png is 1\.5 KiB, over the 1,000 B limit/,
        );
        assert.deepEqual(await p.posted(), []);
      },
    );

    s.it('pending images show as thumbnails; sending waits when the model cannot take them', async () => {
      const p = await open();
      const attachments = [{ id: 'att1', label: 'dot.png', chars: 0, truncated: false, image }];
      await p.push(snapshotMessage(snapshot({ models, model: 'gpt-4.1', attachments })));
      const page = p.page;
      const chip = page.locator('.composer .chip-image');
      assert.match(await chip.innerText(), /dot\.png\s+PNG 1×1, 70 B/);
      await p.waitFor(`document.querySelector('.composer .chip-image img').naturalWidth === 1`);
      const input = page.getByRole('textbox', { name: 'Message' });
      await input.fill('what is this?');
      assert.equal(await page.getByRole('button', { name: 'Send the message (Enter)' }).isDisabled(), false);

      await p.push(snapshotMessage(snapshot({ models, model: 'glm-4.6', attachments })));
      assert.equal(await page.getByRole('button', { name: 'Send the message (Enter)' }).isDisabled(), true);
      // The disabled Send says why next to it, before anyone presses anything.
      assert.equal(
        await page.locator('.composer-note').innerText(),
        'glm-4.6 does not take images: remove the image or pick a model that does.',
      );
      await p.clearPosted();
      await input.press('Enter');
      assert.match(await page.locator('.composer-note').innerText(), /glm-4\.6 does not take images/);
      assert.equal(await input.inputValue(), 'what is this?', 'the question is kept');
      assert.deepEqual(await p.posted(), []);
      await page.getByRole('button', { name: 'Remove attachment dot.png' }).click();
      assert.deepEqual(await p.waitForPosted('removeAttachment'), {
        type: 'removeAttachment',
        conversationId: 'c1',
        id: 'att1',
      });
      await p.push(snapshotMessage(snapshot({ models, model: 'glm-4.6', attachments: [] })));
      assert.equal(await page.locator('.composer-note').isVisible(), false, 'the reason goes with the image');
      assert.equal(await page.getByRole('button', { name: 'Send the message (Enter)' }).isDisabled(), false);
    });

    s.it(
      'a question shows its images; an answer its numbered sources and searches, links opened by the host',
      async () => {
        const p = await open();
        const citations = [
          { url: 'https://news.example.com/regatta', title: 'Example News' },
          { url: 'https://encyclopedia.example.org/wiki/regatta' },
          { url: 'javascript:alert(1)', title: 'Sneaky' },
        ];
        await p.push(
          snapshotMessage(
            snapshot({
              models,
              messages: [
                userMessage('u1', 'What is this?', { images: [image] }),
                assistantMessage('a1', 'A dot. Example News agrees.', { citations, searches: ['regatta winner'] }),
              ],
            }),
          ),
        );
        const page = p.page;
        const thumb = page.getByRole('button', { name: 'Open image dot.png (PNG 1×1, 70 B)' });
        await p.waitFor(`document.querySelector('.msg-images img').naturalWidth === 1`);
        assert.equal(await page.locator('.msg-images img').getAttribute('alt'), 'dot.png (PNG 1×1, 70 B)');
        await thumb.click();
        assert.deepEqual(await p.waitForPosted('openImage'), { type: 'openImage', conversationId: 'c1', id: image.id });

        const sources = page.locator('.msg-assistant .sources');
        assert.match(await sources.locator('.searched').innerText(), /Searched the web for “regatta winner”/);
        assert.deepEqual(await sources.locator('ol li').allInnerTexts(), [
          'Example News news.example.com',
          'encyclopedia.example.org',
          'Sneaky',
        ]);
        assert.equal(await sources.locator('a').count(), 2, 'only web links are links');
        await p.clearPosted();
        await sources.getByRole('link', { name: 'Example News' }).click();
        assert.deepEqual(await p.waitForPosted('openLink'), {
          type: 'openLink',
          url: 'https://news.example.com/regatta',
        });
        assert.equal(new URL(p.page.url()).pathname, '/chat.html', 'the webview did not navigate');
        assert.deepEqual(await p.alerts(), []);
      },
    );

    s.it('the web-search switch says which form it takes on the protocol in use', async () => {
      const p = await open();
      await p.push(snapshotMessage(snapshot({ models, model: 'gpt-4.1' })));
      assert.match((await p.page.locator('.search-toggle').getAttribute('title')) ?? '', /Responses web_search tool/);
      await p.push(
        snapshotMessage(
          snapshot({
            models: [
              {
                id: 'qwen-plus',
                provider: 'ali',
                protocols: ['chatCompletions'],
                searchable: true,
                searchProtocols: ['chatCompletions'],
              },
            ],
            model: 'qwen-plus',
          }),
        ),
      );
      assert.match((await p.page.locator('.search-toggle').getAttribute('title')) ?? '', /Alibaba Bailian models/);
    });
  });

  t.describe('accessibility and looks', (s) => {
    s.it(
      'the list is a polite log, a streaming answer is busy, controls are named buttons with a visible focus',
      async () => {
        const p = await open();
        await p.push(
          snapshotMessage(
            snapshot({
              messages: [userMessage('u1', 'Q'), assistantMessage('a1', 'A', { status: 'streaming' })],
              busy: true,
            }),
          ),
        );
        const page = p.page;
        const log = page.getByRole('log');
        assert.equal(await log.getAttribute('aria-live'), 'polite');
        assert.equal(await page.locator('[role="log"] .msg[data-id="a1"]').getAttribute('aria-busy'), 'true');
        const unnamed = await page.evaluate<number>(
          `Array.from(document.querySelectorAll('button')).filter((b) => !(b.getAttribute('aria-label') || b.textContent.trim())).length`,
        );
        assert.equal(unnamed, 0);
        assert.equal(await page.locator('[onclick], [onkeydown], [onload]').count(), 0);
        await page.locator('body').click({ position: { x: 2, y: 2 } });
        await page.keyboard.press('Tab');
        const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
        assert.notEqual(outline, 'none', 'keyboard focus is visible');
      },
    );

    s.it('renders in the light and the dark theme (screenshots in test-results/webview)', async () => {
      await fsp.mkdir(SCREENSHOTS, { recursive: true });
      for (const theme of ['light', 'dark'] as const) {
        const p = await open({ theme, viewport: { width: 460, height: 1100 } });
        await p.push(
          snapshotMessage(
            snapshot({
              messages: [
                userMessage('u1', 'How do I sort users by age in TypeScript?', {
                  attachments: [{ label: 'users.ts', chars: 1234, truncated: false }],
                }),
                assistantMessage('a1', RICH_ANSWER, {
                  reasoning: 'The user wants a **comparator**.',
                  usage: { inputTokens: 1200, outputTokens: 345 },
                }),
                userMessage('u2', 'And with a remote image?'),
                assistantMessage(
                  'a2',
                  'Here: ![chart](https://images.example.test/chart.png)\n\nThen the stream broke',
                  { status: 'cut', error: { kind: 'network', message: 'The connection to the gateway dropped.' } },
                ),
              ],
              attachments: [{ id: 'att1', label: 'selection.ts', chars: 320, truncated: false }],
              notice: { message: 'The model list is out of date.', action: 'refreshModels' },
            }),
          ),
        );
        await p.page.evaluate('document.fonts.ready');
        await p.page.screenshot({ path: path.join(SCREENSHOTS, `chat-${theme}.png`), fullPage: false });
        await p.close();
        page = undefined;
      }
    });
  });
}

/** Adds the suite's tests to `root`. */
export function defineWebviewSuite(root: Mocha.Suite): void {
  const top = new SuiteBuilder(Mocha.Suite.create(root, 'chat webview'));
  top.describe('block splitter', (s) => defineSplitterTests(s));
  top.describe('in Chromium', (s) => {
    let harness: WebviewHarness | undefined;
    s.suite.timeout(120_000);
    s.before(async () => {
      harness = await WebviewHarness.start();
    });
    s.after(async () => {
      await harness?.close();
    });
    const started = (): WebviewHarness => {
      if (!harness) throw new Error('the webview harness did not start');
      return harness;
    };
    defineBrowserTests(s, started);
    s.describe('notices', (n) => defineNoticeTests(n, started));
    s.describe('for a newcomer, at 300 px', (n) => defineNewcomerTests(n, started));
    s.describe('in Chinese (both apps)', (c) => defineTranslationTests(c, started));
    s.describe('Media Studio', (m) => defineMediaTests(m, started));
  });
}

/** Runs the chat webview suite (only the tests whose title contains `grep`, if given); `npm test` adds the counts to its total. */
export function runWebviewSuite(grep?: string): Promise<SuiteResult> {
  const mocha = new Mocha({ timeout: 60_000, reporter: 'spec', ...(grep ? { grep } : {}) });
  defineWebviewSuite(mocha.suite);
  return new Promise((resolve) => {
    const runner = mocha.run(() => {
      // Tests a failed hook (e.g. the browser not starting) kept from running count as failed.
      const tally = tallyRun(runner, mocha.suite);
      reportNotRun(tally);
      resolve({ passed: tally.passed, failed: tally.failed, skipped: tally.skipped });
    });
  });
}
