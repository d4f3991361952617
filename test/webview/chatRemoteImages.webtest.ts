/**
 * The chat webview in Chromium (remote images). Images from other hosts in an answer: placeholders
 * until the user allows the host, then shown from what the host fetched and handed over (the page
 * loads no remote address); data: images at once.
 */
import assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { SuiteBuilder } from './chatView.webtest';
import { promptPng } from '../gateway/png';
import { chatPages, SCREENSHOTS } from './chatPages';
import { assistantMessage, snapshot, snapshotMessage } from './fixtures';
import type { WebviewHarness } from './harness';

export function defineRemoteImageTests(s: SuiteBuilder, harness: () => WebviewHarness): void {
  const { open } = chatPages(s, harness);
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );

  s.it('are not loaded until the user allows them; data: images show at once', async () => {
    const p = await open();
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
    await p.clearPosted();

    // Allowed: the page asks the host for the image and loads nothing itself (its CSP lists no remote host).
    await p.push(
      snapshotMessage(
        snapshot({ messages: [assistantMessage('a1', text)], remoteImageHosts: ['images.example.test'] }),
      ),
    );
    const asked = await p.waitForPosted('loadRemoteImage');
    assert.equal(asked.url, 'https://images.example.test/cat.png');
    assert.match(
      await page.locator('.remote-image').first().innerText(),
      /Loading image “a cat” from images\.example\.test/,
    );
    const csp = await page.evaluate<string>(
      `document.querySelector('meta[http-equiv="Content-Security-Policy"]').content`,
    );
    assert.match(csp, /img-src [^;]* data:;/);
    assert.doesNotMatch(csp, /https:|images\.example\.test/, 'the CSP names no remote host');
    await p.push({
      type: 'remoteImage',
      conversationId: asked.conversationId,
      url: asked.url,
      dataUrl: `data:image/png;base64,${PNG.toString('base64')}`,
    });
    await p.waitFor(
      `document.querySelectorAll('.msg-body img').length === 2 && Array.from(document.querySelectorAll('.msg-body img')).every((img) => img.complete && img.naturalWidth > 0)`,
    );
    const cat = page.locator('.msg-body img[alt="a cat"]');
    assert.match((await cat.getAttribute('src')) ?? '', /^data:image\/png;base64,/);
    assert.deepEqual(requests, [], 'the page itself never requested the remote image');
    assert.equal(
      (await p.posted()).filter((m) => m.type === 'loadRemoteImage').length,
      1,
      'asked once, however often the answer was rendered',
    );

    // Shown again (a re-render) from what the page holds, without asking again.
    await p.clearPosted();
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [assistantMessage('a1', `${text}\n\nMore.`)],
          remoteImageHosts: ['images.example.test'],
        }),
      ),
    );
    await p.waitFor(`document.querySelectorAll('.msg-body img[alt="a cat"]').length === 1`);
    assert.deepEqual(await p.posted(), []);
  });

  s.it('an image the host refused says why in its place, and the rest of the answer stays', async () => {
    const p = await open();
    const page = p.page;
    const text =
      'Before.\n\n![plan](https://images.example.test/plan.png)\n\n![x](https://images.example.test/x.png)\n\nAfter.';
    await p.push(
      snapshotMessage(
        snapshot({ messages: [assistantMessage('a1', text)], remoteImageHosts: ['images.example.test'] }),
      ),
    );
    await p.waitFor(`window.__probe.posted.filter((m) => m.type === 'loadRemoteImage').length === 2`);
    const conversationId = (await p.waitForPosted('loadRemoteImage')).conversationId;
    await p.push({
      type: 'remoteImage',
      conversationId,
      url: 'https://images.example.test/plan.png',
      refused: 'the name images.example.test resolves to 127.0.0.1, a private or loopback address',
    });
    await p.waitFor(`document.querySelector('.remote-image-refused') !== null`);
    assert.equal(
      await page.locator('.remote-image-refused').innerText(),
      'Image “plan” from images.example.test not shown: the name images.example.test resolves to 127.0.0.1, a private or loopback address.',
    );
    assert.equal(await page.locator('.msg-body img').count(), 0, 'no broken image');
    assert.match(await page.locator('.msg-body').innerText(), /Before\.[\s\S]*After\./);
    // A fetch cancelled (the conversation was left and shown again) is asked for again.
    await p.clearPosted();
    await p.push({ type: 'remoteImage', conversationId, url: 'https://images.example.test/x.png' });
    const again = await p.waitForPosted('loadRemoteImage');
    assert.equal(again.url, 'https://images.example.test/x.png');
    // Shown, refused and still loading side by side (test-results/webview/remote-images.png).
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [assistantMessage('a1', `${text}\n\n![a dot](https://images.example.test/dot.png)`)],
          remoteImageHosts: ['images.example.test'],
        }),
      ),
    );
    await p.push({
      type: 'remoteImage',
      conversationId,
      url: 'https://images.example.test/dot.png',
      dataUrl: `data:image/png;base64,${promptPng('a dot').toString('base64')}`,
    });
    await p.waitFor(`document.querySelector('.msg-body img[alt="a dot"]')?.naturalWidth > 0`);
    await fsp.mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'remote-images.png') });
    // A reply that is not an image's data: URL is not taken (the protocol check drops it).
    await p.push({ type: 'remoteImage', conversationId, url: again.url, dataUrl: 'https://images.example.test/x.png' });
    assert.equal(await page.locator('.msg-body img').count(), 1, 'only the dot');
  });

  s.it('say loading and not shown in Chinese when VS Code speaks Chinese', async () => {
    const p = await open({ language: 'zh-cn' });
    const text = '![plan](https://images.example.test/plan.png)\n\n![x](https://images.example.test/x.png)';
    await p.push(
      snapshotMessage(
        snapshot({ messages: [assistantMessage('a1', text)], remoteImageHosts: ['images.example.test'] }),
      ),
    );
    const asked = await p.waitForPosted('loadRemoteImage');
    await p.push({
      type: 'remoteImage',
      conversationId: asked.conversationId,
      url: 'https://images.example.test/plan.png',
      refused: '名称 images.example.test 解析为 127.0.0.1，这是私有或本机回环地址',
    });
    await p.waitFor(`document.querySelector('.remote-image-refused') !== null`);
    assert.equal(
      await p.page.locator('.remote-image-refused').innerText(),
      '来自 images.example.test 的图像“plan”未显示：名称 images.example.test 解析为 127.0.0.1，这是私有或本机回环地址。',
    );
    assert.equal(
      await p.page.locator('.remote-image-loading').innerText(),
      '正在加载来自 images.example.test 的图像“x”…',
    );
    await fsp.mkdir(SCREENSHOTS, { recursive: true });
    await p.page.screenshot({ path: path.join(SCREENSHOTS, 'remote-images-zh.png') });
  });
}
