/**
 * The chat webview in Chromium (remote images). Images from other hosts in an answer: placeholders
 * until the user allows the host; data: images at once.
 */
import assert from 'node:assert/strict';
import type { SuiteBuilder } from './chatView.webtest';
import { chatPages } from './chatPages';
import { assistantMessage, snapshot, snapshotMessage } from './fixtures';
import type { WebviewHarness } from './harness';

export function defineRemoteImageTests(s: SuiteBuilder, harness: () => WebviewHarness): void {
  const { open } = chatPages(s, harness);
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
    // First what did happen: the answer is rendered, with a placeholder for each remote image and
    // the data: image decoded. Only then does "nothing was requested" say something.
    await p.waitFor(
      `document.querySelectorAll('.remote-image').length === 2 && Array.from(document.querySelectorAll('.msg-body img')).some((img) => img.complete && img.naturalWidth > 0)`,
    );
    assert.equal(
      await page.evaluate<number>(
        `Array.from(document.querySelectorAll('[src], [srcset], [style]')).filter((el) => ['src', 'srcset', 'style'].some((name) => (el.getAttribute(name) ?? '').includes('images.example.test'))).length`,
      ),
      0,
      'no element points at the remote images',
    );
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
      snapshotMessage(snapshot({ messages: [assistantMessage('a1', text)], remoteImageHosts: ['other.example.test'] })),
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
}
