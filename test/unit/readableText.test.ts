import * as assert from 'node:assert/strict';
import { readableText } from '../../src/core/tools/readableText';

describe('extracted text as a person reads it', () => {
  it('turns form feeds (page ends) into Markdown rules between pages', () => {
    assert.equal(
      readableText('Page one.\fPage two.\n\f\nPage three.'),
      'Page one.\n\n---\n\nPage two.\n\n---\n\nPage three.',
    );
  });

  it('drops control characters but keeps tabs, line breaks and every other character', () => {
    assert.equal(readableText('a\u0000b\u0007c\td\r\ne\u001bf 表格 ✓'), 'abc\td\r\nef 表格 ✓');
  });

  it('leaves ordinary text exactly as it is', () => {
    const text = '# Title\n\nA line with --- dashes.\n\n---\n\nMore.';
    assert.equal(readableText(text), text);
  });
});
