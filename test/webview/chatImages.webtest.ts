/**
 * The chat webview in Chromium (images and web sources). Images the user attaches (thumbnails,
 * models that cannot take them) and the web-search switch.
 */
import assert from 'node:assert/strict';
import type { SuiteBuilder } from './chatView.webtest';
import { chatPages } from './chatPages';
import { assistantMessage, snapshot, snapshotMessage, userMessage } from './fixtures';
import { type ChatPage, type WebviewHarness } from './harness';

export function defineImageTests(s: SuiteBuilder, harness: () => WebviewHarness): void {
  const { open } = chatPages(s, harness);
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

  s.it('the Image… control attaches for a model that takes images and says why not for one that does not', async () => {
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
      (await page.getByLabel('Model', { exact: true }).locator('option[value="gpt-4.1"]').getAttribute('title')) ?? '',
      /takes images · can search the web/,
    );
    await attach.click();
    assert.deepEqual(await p.waitForPosted('attach'), { type: 'attach', conversationId: 'c1', what: 'image' });
  });

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
      assert.match(await p.page.locator('.composer-note').innerText(), /Only images can be dropped here.*1 other file/);
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
      assert.match(await p.page.locator('.composer-note').innerText(), /huge\.png is 1\.5 KiB, over the 1,000 B limit/);
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
}
