import * as assert from 'node:assert/strict';
import { until } from '../support/until';
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { FrameLocator } from 'playwright-core';
import { DEMO_KEY, promptPng } from '../gateway';
import { LIMITS } from '../vscode/browser';
import { ui } from './context';
import {
  acceptSaveDialog,
  activityEntry,
  chatFrame,
  clearNotifications,
  clickChatTitleAction,
  explorerContextCommand,
  masked,
  openNewChat,
  runCommandFromPalette,
  sendChatMessage as send,
  setApiKey,
  showExplorerWith,
  waitForStatus,
} from './workbench';

/** What the double answers about an image it received (test/gateway/imageFacts.ts). */
function fact(bytes: Buffer, n = 1): string {
  return `image ${n}: PNG 48x48, ${bytes.length} bytes, sha256 ${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`;
}

/** The browser globals the page functions below use (the e2e tsconfig has no DOM types). */
type PageGlobals = {
  DataTransfer: new () => { items: { add(file: unknown): void } };
  File: new (parts: unknown[], name: string, init: { type: string }) => unknown;
  DragEvent: new (type: string, init: Record<string, unknown>) => unknown;
  atob(text: string): string;
};

/** Drops a file on the chat view as the OS does: a DragEvent whose DataTransfer holds a File. */
async function dropFile(frame: FrameLocator, name: string, bytes: Buffer): Promise<void> {
  await frame.locator('main.messages').evaluate(
    (el, f) => {
      const g = globalThis as unknown as PageGlobals;
      const target = el as unknown as { dispatchEvent(event: unknown): boolean };
      const dt = new g.DataTransfer();
      dt.items.add(new g.File([Uint8Array.from(g.atob(f.b64), (c) => c.charCodeAt(0))], f.name, { type: 'image/png' }));
      for (const type of ['dragenter', 'dragover', 'drop'])
        target.dispatchEvent(new g.DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    { name, b64: bytes.toString('base64') },
  );
}

/** Waits until every <img> matched has loaded real pixels (a thumbnail the CSP or the resource roots blocked has none). */
async function imagesLoaded(frame: FrameLocator, selector: string): Promise<void> {
  const images = frame.locator(selector);
  await images.first().waitFor();
  const deadline = Date.now() + LIMITS.stepMs;
  for (;;) {
    const sizes = await images.evaluateAll((els) =>
      els.map((img) =>
        (img as unknown as { complete: boolean }).complete
          ? (img as unknown as { naturalWidth: number }).naturalWidth
          : 0,
      ),
    );
    if (sizes.length && sizes.every((w) => w > 0)) return;
    if (Date.now() > deadline) throw new Error(`images did not load: ${selector} (${JSON.stringify(sizes)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Chat with images and web search', () => {
  const fox = promptPng('a fox seen from the e2e test');
  const owl = promptPng('an owl seen from the explorer');

  before(async () => {
    const { page, workspace } = ui();
    await fsp.writeFile(path.join(workspace, 'owl.png'), owl);
    // Run on its own, this file may be first: the extension's contributions must be loaded.
    await activityEntry(page).waitFor({ timeout: LIMITS.contributionsMs });
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
  });

  const cases = [
    { model: 'gpt-4o-mini', protocol: 'chatCompletions', path: '/v1/chat/completions' },
    { model: 'gpt-5', protocol: 'responses', path: '/v1/responses' },
    { model: 'claude-sonnet-4-5', protocol: 'messages', path: '/v1/messages' },
  ];

  it('attaches a dropped image and each protocol answers with the description of that exact image, thumbnails shown', async () => {
    const { page, double } = ui();
    const frame = await openNewChat(page);
    for (const c of cases) {
      await frame.locator('select.model-select').selectOption(c.model);
      // The host's next snapshot names the model (its tooltip); only then is the protocol chosen for it.
      await frame.locator(`select.model-select[title^="Model: ${c.model} "]`).waitFor({ state: 'attached' });
      await frame.locator('select.protocol-select').selectOption(c.protocol);
      await frame.locator('button.attach-image[aria-disabled="false"]').waitFor();
      await dropFile(frame, 'dropped-fox.png', fox);
      const chip = frame.locator('.composer .chip-image', { hasText: 'dropped-fox.png' });
      await chip.waitFor();
      assert.match(await chip.innerText(), /PNG 48×48/);
      // The thumbnail comes from the stored file through the webview's resource roots.
      await imagesLoaded(frame, '.composer .chip-image img');
      double.clearLog();
      const answer = await send(frame, `What is this? Over ${c.protocol}.`);
      await answer.filter({ hasText: fact(fox) }).waitFor();
      await frame.locator('button[aria-label^="Send the message"]').waitFor();
      assert.ok(
        double.log.some((e) => e.path === c.path && e.answer),
        `the answer came over ${c.path}`,
      );
      await chip.waitFor({ state: 'detached' });
      const question = frame.locator('article.msg-user', { hasText: `Over ${c.protocol}.` });
      await imagesLoaded(
        frame,
        `article.msg-user[data-id="${await question.getAttribute('data-id')}"] .msg-images img`,
      );
    }
  });

  it('"Ask About This Image" in the explorer context menu attaches the file to the chat; the question goes with it', async () => {
    const { page } = ui();
    // F1 is not always passed on from inside a webview: start from the workbench, as a click there does.
    await page.locator('.part.editor').click();
    await showExplorerWith(page, ['owl.png']);
    await explorerContextCommand(page, 'owl.png', 'Ask About This Image');
    const frame = chatFrame(page);
    const chip = frame.locator('.composer .chip-image', { hasText: 'owl.png' });
    await chip.waitFor();
    await imagesLoaded(frame, '.composer .chip-image img');
    const answer = await send(frame, 'What bird is this?');
    await answer.filter({ hasText: fact(owl) }).waitFor();
    await frame.locator('button[aria-label^="Send the message"]').waitFor();
  });

  it('web search on and off over Responses and Chat Completions; sources are numbered links, kept in the export', async () => {
    const { page, double } = ui();
    const frame = await openNewChat(page);
    const search = frame.getByRole('button', { name: 'Web search' });
    /** The web-search toggle, pressed or not (aria-pressed follows the host's next snapshot). */
    const setSearch = async (on: boolean): Promise<void> => {
      if ((await search.getAttribute('aria-pressed')) !== String(on)) await search.click();
      await frame.locator(`button.search-toggle[aria-pressed="${on}"]`).waitFor();
    };

    await frame.locator('select.model-select').selectOption('gpt-4o-mini');
    await frame.locator('select.protocol-select').selectOption('chatCompletions');
    await search.waitFor({ state: 'hidden' });
    await frame.locator('select.protocol-select').selectOption('responses');
    await frame.locator('.search-toggle[title*="web_search tool"]').waitFor();
    await setSearch(true);
    double.clearLog();
    const answer = await send(frame, 'who won the regatta');
    const sources = answer.locator('.sources ol li');
    await sources.nth(1).waitFor();
    assert.deepEqual(await sources.allInnerTexts(), [
      'Example News news.example.com',
      'Example Encyclopedia encyclopedia.example.org',
    ]);
    assert.equal(
      await answer.locator('.sources a').first().getAttribute('href'),
      'https://news.example.com/who-won-the-regatta',
    );
    assert.match(await answer.locator('.searched').innerText(), /Searched the web for “who won the regatta”/);
    assert.match(
      double.log.find((e) => e.path === '/v1/responses')?.bodyText ?? '',
      /"tools":\[\{"type":"web_search"\}\]/,
    );
    await frame.locator('button[aria-label^="Send the message"]').waitFor();

    await setSearch(false);
    const plain = await send(frame, 'and without the web');
    await plain.filter({ hasText: 'Echo from gpt-4o-mini: and without the web' }).waitFor();
    await frame.locator('button[aria-label^="Send the message"]').waitFor();
    assert.equal(await plain.locator('.sources li').count(), 0);

    // The export (the view's title-bar action, then where to save it) keeps the numbered sources.
    await clickChatTitleAction(page, 'Export Chat as Markdown');
    // The dialog offers the conversation's title as the file name, in the workspace; taken as offered.
    const file = path.join(ui().workspace, 'who won the regatta.md');
    await fsp.rm(file, { force: true });
    const target = page.locator('.quick-input-widget input');
    await target.waitFor();
    // The dialog fills its path in after it opens: wait for the offered name, not its first value.
    await until(
      async () => /who won the regatta\.md$/.test(await target.inputValue()),
      'the save dialog to offer who won the regatta.md',
    );
    await acceptSaveDialog(page);
    await page
      .locator('.notifications-toasts .notification-toast', {
        hasText: `Exported the conversation to ${path.basename(file)}.`,
      })
      .waitFor();
    const exported = await fsp.readFile(file, 'utf8');
    await fsp.rm(file, { force: true });
    assert.match(exported, /1\. \[Example News\]\(https:\/\/news\.example\.com\/who-won-the-regatta\)/);

    // Chat Completions: Bailian's search switch (enable_search in the request).
    await runCommandFromPalette(page, 'Model Gateway: Focus on Chat View');
    await frame.locator('select.model-select').selectOption('qwen-plus');
    // The switch stays; what it does changes with the protocol (the host's next snapshot says so).
    await frame.locator('.search-toggle[title*="Alibaba Bailian"]').waitFor();
    await setSearch(true);
    double.clearLog();
    const qwen = await send(frame, 'weather news');
    await qwen.filter({ hasText: 'I searched the web for "weather news"' }).waitFor();
    await frame.locator('button[aria-label^="Send the message"]').waitFor();
    assert.match(double.log.find((e) => e.path === '/v1/chat/completions')?.bodyText ?? '', /"enable_search":true/);
    await setSearch(false);
    double.clearLog();
    const quiet = await send(frame, 'no searching now');
    await quiet.filter({ hasText: 'Echo from qwen-plus: no searching now' }).waitFor();
    await frame.locator('button[aria-label^="Send the message"]').waitFor();
    assert.doesNotMatch(double.log.find((e) => e.path === '/v1/chat/completions')?.bodyText ?? '', /enable_search/);
  });
});
