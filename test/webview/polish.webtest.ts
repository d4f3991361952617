/**
 * Narrow and visual polish of the chat webview: nothing wider than the side bar at 220 px (no
 * horizontal scrollbar on the whole chat), Cancel beside Save & Resend as a secondary button, and
 * the dots of an answer still arriving big and strong enough to be seen. Screenshots of each, light
 * and dark, at 220 and 300 px, go to test-results/webview (polish-*.png).
 */
import assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { SuiteBuilder } from './chatView.webtest';
import { RICH_ANSWER, assistantMessage, snapshot, snapshotMessage, userMessage } from './fixtures';
import { closeAndCheck, type ChatPage, type WebviewHarness } from './harness';

const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'test-results', 'webview');
const THEMES = ['light', 'dark'] as const;
const WIDTHS = [220, 300] as const;

/** Things that push a narrow view wide: a long URL, a long word, a wide code line, a table. */
const WIDE_ANSWER = `${RICH_ANSWER}\n\nSee https://example.com/a/very/long/path/that/never/breaks/by/itself/because/it/has/no/spaces/at/all.html and Donaudampfschifffahrtsgesellschaftskapitänsmützenabzeichen.\n\n| Column one | Column two | Column three | Column four |\n| --- | --- | --- | --- |\n| a fairly long cell | another long cell | and a third one | and a fourth |\n`;

/** Every element that scrolls sideways although it should not: the page itself and any container not made to scroll. */
function sideways(p: ChatPage): Promise<string[]> {
  return p.page.evaluate(() => {
    const root = document.scrollingElement ?? document.documentElement;
    const out: string[] = [];
    if (root.scrollWidth > root.clientWidth) out.push(`page ${root.scrollWidth} > ${root.clientWidth}`);
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('body *'))) {
      if (el.closest('pre, table')) continue;
      const style = getComputedStyle(el);
      const scrolls = ['auto', 'scroll'].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 1;
      const box = el.getBoundingClientRect();
      const sticksOut = box.width > 0 && box.right > root.clientWidth + 1 && style.position !== 'fixed';
      if (scrolls || sticksOut)
        out.push(`${el.tagName.toLowerCase()}.${String(el.className)} ${Math.round(box.right)} > ${root.clientWidth}`);
    }
    return out;
  });
}

export function definePolishTests(t: SuiteBuilder, harness: () => WebviewHarness): void {
  let page: ChatPage | undefined;
  const open = async (theme: 'light' | 'dark', width: number): Promise<ChatPage> => {
    page = await harness().open({ theme, viewport: { width, height: 640 } });
    return page;
  };
  t.afterEach(async () => {
    if (!page) return;
    const closing = page;
    page = undefined;
    await closeAndCheck(closing);
  });
  const shoot = async (p: ChatPage, name: string): Promise<void> => {
    await fsp.mkdir(SCREENSHOTS, { recursive: true });
    await p.page.evaluate('document.fonts.ready');
    await p.page.screenshot({ path: path.join(SCREENSHOTS, `polish-${name}.png`) });
  };

  t.it('at 220 and 300 px nothing makes the whole chat scroll sideways', async () => {
    for (const width of WIDTHS)
      for (const theme of THEMES) {
        const p = await open(theme, width);
        // An empty chat first (its example prompts), then one with a wide answer and an attachment.
        await p.push(snapshotMessage(snapshot({ conversationId: undefined, messages: [] })));
        const empty = await sideways(p);
        await p.push(
          snapshotMessage(
            snapshot({
              messages: [userMessage('u1', 'Sort users by age, then name'), assistantMessage('a1', WIDE_ANSWER)],
              attachments: [
                {
                  id: 'f1',
                  label: 'src/some/deeply/nested/folder/withAVeryLongFileName.ts',
                  chars: 12_345,
                  truncated: false,
                },
              ],
            }),
          ),
        );
        await p.page.locator('.msg[data-id="a1"] table').last().waitFor();
        const wide = [...empty.map((e) => `empty chat: ${e}`), ...(await sideways(p))];
        await p.page.locator('.msg[data-id="a1"]').evaluate((el) => el.scrollIntoView({ block: 'end' }));
        await shoot(p, `wide-${width}-${theme}`);
        assert.deepEqual(wide, [], `at ${width} px, ${theme}`);
        await closeAndCheck(p);
        page = undefined;
      }
  });

  t.it("an answer's Copy and Regenerate never cover its text (hovered, or the last one scrolled through)", async () => {
    const long = Array.from({ length: 40 }, (_, i) => `Line ${i + 1} of a long answer that fills the whole width.`);
    const p = await open('dark', 300);
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [
            userMessage('u1', 'First'),
            assistantMessage('a1', 'A short answer whose last line runs all the way to the right edge of the view'),
            userMessage('u2', 'Second'),
            assistantMessage('a2', long.join('\n\n')),
          ],
        }),
      ),
    );
    /** Text lines of a message that its toolbar covers. */
    const covered = (id: string) =>
      p.page.locator(`.msg[data-id="${id}"]`).evaluate((msg) => {
        const bar = msg.querySelector(':scope > .msg-actions')?.getBoundingClientRect();
        if (!bar) return ['no toolbar'];
        const out: string[] = [];
        const walker = document.createTreeWalker(msg, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          if (!n.textContent?.trim() || n.parentElement?.closest('.msg-actions')) continue;
          const range = document.createRange();
          range.selectNodeContents(n);
          for (const r of Array.from(range.getClientRects()))
            if (r.left < bar.right && r.right > bar.left && r.top < bar.bottom && r.bottom > bar.top)
              out.push(n.textContent.trim().slice(0, 40));
        }
        return out;
      });
    await p.page.locator('.msg[data-id="a1"]').hover();
    const hovered = await covered('a1');
    // The last answer's end below the view: its toolbar must not float over the lines being read.
    await p.page
      .locator('.msg[data-id="a2"] p')
      .nth(10)
      .evaluate((el) => el.scrollIntoView({ block: 'end' }));
    await p.page.mouse.move(150, 300);
    await shoot(p, 'answer-actions');
    assert.deepEqual({ hovered, scrolled: await covered('a2') }, { hovered: [], scrolled: [] });
  });

  t.it('Cancel beside Save & Resend is a secondary button, in both themes', async () => {
    for (const theme of THEMES) {
      const p = await open(theme, 300);
      await p.push(
        snapshotMessage(snapshot({ messages: [userMessage('u1', 'First'), assistantMessage('a1', 'Answer')] })),
      );
      await p.page.getByRole('button', { name: 'Edit and resend your last message' }).click();
      const save = p.page.getByRole('button', { name: 'Save & Resend' });
      const cancel = p.page.getByRole('button', { name: 'Cancel' });
      const background = (l: typeof save) => l.evaluate((el) => getComputedStyle(el).backgroundColor);
      const secondary = await p.page.evaluate(() => {
        const probe = document.createElement('div');
        probe.style.background = 'var(--vscode-button-secondaryBackground)';
        document.body.append(probe);
        const color = getComputedStyle(probe).backgroundColor;
        probe.remove();
        return color;
      });
      await shoot(p, `edit-300-${theme}`);
      assert.notEqual(await background(cancel), await background(save), `${theme}: Cancel is not primary`);
      assert.equal(await background(cancel), secondary, `${theme}: Cancel has the secondary button colour`);
      await closeAndCheck(p);
      page = undefined;
    }
  });

  t.it('the dots of an answer still arriving are big and never fade below half', async () => {
    for (const theme of THEMES) {
      const p = await open(theme, 300);
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [userMessage('u1', 'Go'), assistantMessage('a1', 'Sorting by two keys', { status: 'streaming' })],
            busy: true,
          }),
        ),
      );
      const dot = p.page.locator('.stream-mark > span').first();
      await dot.waitFor();
      const { size, faintest } = await dot.evaluate((el) => {
        const sheetRules = Array.from(document.styleSheets).flatMap((s) => Array.from(s.cssRules));
        const frames = sheetRules.find(
          (r): r is CSSKeyframesRule => r instanceof CSSKeyframesRule && r.name === 'stream-pulse',
        );
        const opacities = Array.from(frames?.cssRules ?? []).map((r) => Number((r as CSSKeyframeRule).style.opacity));
        return { size: el.getBoundingClientRect().width, faintest: Math.min(...opacities) };
      });
      await shoot(p, `streaming-300-${theme}`);
      assert.ok(size >= 6, `the dots are ${size} px`);
      assert.ok(faintest >= 0.5, `the dots fade to ${faintest}`);
      await closeAndCheck(p);
      page = undefined;
    }
  });

  t.it('the length-limit hint links to the setting it names, at 220 px, light and dark', async () => {
    for (const theme of THEMES) {
      const p = await open(theme, 220);
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [
              userMessage('u1', 'Write a long story'),
              assistantMessage('a1', 'Once upon a time', { finishReason: 'length' }),
            ],
          }),
        ),
      );
      const link = p.page.getByRole('button', { name: 'modelGateway.chat.maxTokens' });
      await link.waitFor();
      assert.match(
        await p.page.locator('.msg[data-id="a1"] .status-hint').innerText(),
        /^Continue asks for the rest; the setting modelGateway\.chat\.maxTokens raises the limit\.$/,
      );
      await shoot(p, `length-limit-220-${theme}`);
      await link.click();
      assert.deepEqual(
        (await p.posted()).filter((m) => (m as { type: string }).type === 'openSetting'),
        [{ type: 'openSetting', id: 'modelGateway.chat.maxTokens' }],
      );
      assert.deepEqual(await sideways(p), [], 'the hint wraps at 220 px');
      await closeAndCheck(p);
      page = undefined;
    }
  });
}
