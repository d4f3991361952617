import * as assert from 'node:assert/strict';
import { formatBytes, formatCompactNumber, formatNumber, setDisplayLocale } from '../../src/shared/format';

describe('numbers and sizes in the display language', () => {
  afterEach(() => setDisplayLocale('en'));

  it('groups digits as the display language does, and takes a new language at once', () => {
    setDisplayLocale('en');
    assert.equal(formatNumber(12345), '12,345');
    setDisplayLocale('de');
    assert.equal(formatNumber(12345), '12.345');
    setDisplayLocale('zh-cn');
    assert.equal(formatCompactNumber(12345), '1.2万');
  });

  it('falls back to English for a tag Intl does not know or cannot read, and for none', () => {
    for (const tag of ['xx-not-a-language', 'not a tag!', '', undefined]) {
      setDisplayLocale(tag);
      assert.equal(formatNumber(1234567), '1,234,567', String(tag));
      assert.match(formatBytes(2048), /^2(\.0)? KiB$/, String(tag));
    }
  });
});
