import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { demoLocale } from '../demo/support';

describe('npm start in Chinese', () => {
  it('takes --locale or LOCALE, and refuses a language the extension has no words for', () => {
    assert.equal(demoLocale(['node', 'start.ts', '--locale', 'zh-cn'], {}), 'zh-cn');
    assert.equal(demoLocale(['node', 'start.ts', '--locale', 'zh-CN'], {}), 'zh-cn');
    assert.equal(demoLocale(['node', 'start.ts'], { LOCALE: 'zh-cn' }), 'zh-cn');
    assert.equal(demoLocale(['node', 'start.ts'], {}), undefined);
    assert.equal(demoLocale(['node', 'start.ts', '--locale', 'en'], {}), undefined);
    assert.throws(
      () => demoLocale(['node', 'start.ts', '--locale', 'fr'], {}),
      /no words for the language "fr"; choose one of en, zh-cn/,
    );
  });

  it('the demo passes the language to code-server and the READMEs tell how', () => {
    const start = readFileSync('test/demo/start.ts', 'utf8');
    assert.match(start, /args: \['--locale', locale\]/);
    assert.match(readFileSync('README.md', 'utf8'), /npm start -- --locale zh-cn/);
    assert.match(readFileSync('README.zh-CN.md', 'utf8'), /npm start -- --locale zh-cn/);
  });
});
