// First: answers `vscode` for every host module imported after it.
import './chatHost/fakeVscode';
import * as assert from 'node:assert/strict';
import { BillingMeter } from '../../src/core/tools/billing';
import { sessionFigures } from '../../src/host/statusBar';

describe("the session's cost line counts generated images and videos", () => {
  it('adds images by count and videos by duration at each resolution tier, none of them in the amount', () => {
    const meter = new BillingMeter();
    let changes = 0;
    meter.onDidChange(() => changes++);
    assert.deepEqual(sessionFigures(meter), [], 'nothing generated, nothing said');
    meter.record('search');
    meter.recordImages('gpt-image-1', 2);
    meter.recordImages('gpt-image-1', 1);
    meter.recordVideo('wan2.5-t2v-preview', '832*480', 5);
    meter.recordVideo('wan2.5-t2v-preview', '832*480', 10);
    meter.recordVideo('other-video', '1280*720', 4);
    meter.recordVideo('other-video', '4096*2160', 3);
    assert.equal(changes, 7, 'the status bar hears of each');
    assert.equal(meter.usd, 0.1, 'only the priced tool call is in the amount');
    assert.deepEqual(sessionFigures(meter), [
      '1 billed tool call, about US$0.10',
      '3 images generated (priced per model; not in the amount)',
      '4 video tasks, 15 s at 480P, 4 s at 720P, 3 s at another resolution (billed per model by duration and resolution; no price is known here, so not in the amount)',
    ]);
  });

  it('words one image and one video in the singular', () => {
    const meter = new BillingMeter();
    meter.recordImages('m', 1);
    meter.recordImages('m', 0);
    meter.recordVideo('v', '1920 × 1080', 5);
    assert.deepEqual(meter.media, { images: 1, videos: 1, videoSeconds: { '1080P': 5 }, failedVideos: 0 });
    assert.deepEqual(sessionFigures(meter), [
      '1 image generated (priced per model; not in the amount)',
      '1 video task, 5 s at 1080P (billed per model by duration and resolution; no price is known here, so not in the amount)',
    ]);
  });

  it('leaves a failed video task out of the billed figures and says it failed', () => {
    const meter = new BillingMeter();
    meter.recordVideo('wan2.5-t2v-preview', '832*480', 5);
    meter.recordVideo('wan2.5-t2v-preview', '832*480', 10);
    meter.recordVideoFailed('832*480', 5);
    assert.deepEqual(meter.media, { images: 0, videos: 1, videoSeconds: { '480P': 10 }, failedVideos: 1 });
    assert.deepEqual(sessionFigures(meter), [
      '1 video task, 10 s at 480P (billed per model by duration and resolution; no price is known here, so not in the amount)',
      "1 video task failed (left out: the gateway may refund it; the key's quota says)",
    ]);
  });
});
