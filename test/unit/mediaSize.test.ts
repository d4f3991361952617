import * as assert from 'node:assert/strict';
import { validateImageSize } from '../../src/core/media/images';
import { validateVideoParams } from '../../src/core/media/video';
import {
  displaySize,
  displaySizeText,
  imageWireSize,
  parseSize,
  resolutionTier,
  videoWireSize,
} from '../../src/shared/mediaSize';

describe('media sizes: one notation for people, each endpoint its own on the wire', () => {
  it('reads a size written with ×, x, X or *, spaces allowed, and nothing else', () => {
    for (const text of ['1024 × 1024', '1024×1024', '1024x1024', '1024 X 1024', '1024*1024', ' 1024 * 1024 '])
      assert.deepEqual(parseSize(text), { width: 1024, height: 1024 }, text);
    assert.deepEqual(parseSize('832 × 480'), { width: 832, height: 480 });
    for (const text of ['', '1024', '1024 by 1024', '1024x', 'x1024', '10.5x20', '-5x5', '1024x1024x3', '123456x1'])
      assert.equal(parseSize(text), undefined, text);
  });

  it('shows every size as "W × H" and sends `WxH` to the Images API, `W*H` to the video endpoint', () => {
    const size = { width: 1280, height: 720 };
    assert.equal(displaySize(size), '1280 × 720');
    assert.equal(imageWireSize(size), '1280x720');
    assert.equal(videoWireSize(size), '1280*720');
    assert.equal(displaySizeText('832*480'), '832 × 480');
    assert.equal(displaySizeText('1024x1536'), '1024 × 1536');
    assert.equal(displaySizeText('auto'), 'auto', 'text that is not a size stays as it is');
  });

  it('converts on send: the image validator answers `WxH`, the video one `W*H`, from any notation', () => {
    assert.equal(validateImageSize('1536 × 1024'), '1536x1024');
    assert.equal(validateImageSize('1024*1024'), '1024x1024');
    assert.equal(validateVideoParams({ model: 'm', prompt: 'p', size: '832 × 480', duration: 5 }).size, '832*480');
    assert.equal(validateVideoParams({ model: 'm', prompt: 'p', size: '832x480', duration: 5 }).size, '832*480');
    assert.throws(() => validateImageSize('large'), /not a width and a height in pixels, e\.g\. 1024 × 1024/);
    assert.throws(() => validateImageSize('0 × 10'), /out of range/);
    assert.throws(
      () => validateVideoParams({ model: 'm', prompt: 'p', size: 'HD', duration: 5 }),
      /not a width and a height in pixels, e\.g\. 832 × 480/,
    );
  });

  it('names the resolution tier video is billed by', () => {
    assert.equal(resolutionTier({ width: 832, height: 480 }), '480P');
    assert.equal(resolutionTier({ width: 480, height: 832 }), '480P', 'portrait counts the same');
    assert.equal(resolutionTier({ width: 1280, height: 720 }), '720P');
    assert.equal(resolutionTier({ width: 1920, height: 1080 }), '1080P');
    assert.equal(resolutionTier({ width: 3840, height: 2160 }), undefined);
  });
});
