/** The block splitter the chat view streams with (src/webview/chat/blockSplitter.ts): it runs in Node, no page needed. */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import MarkdownIt from 'markdown-it';
import { BlockSplitter, splitBlocks } from '../../src/webview/chat/blockSplitter';
import type { SuiteBuilder } from './chatView.webtest';
import { longAnswer, longCodeFence, RICH_ANSWER } from './fixtures';

export function defineSplitterTests(t: SuiteBuilder): void {
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
