/**
 * The chat webview in Chromium (accessibility and looks). Accessible names and roles, and the
 * light and dark themes (screenshots).
 */
import assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { SuiteBuilder } from './chatView.webtest';
import { chatPages, SCREENSHOTS } from './chatPages';
import { assistantMessage, RICH_ANSWER, snapshot, snapshotMessage, userMessage } from './fixtures';
import type { WebviewHarness } from './harness';

export function defineLookTests(s: SuiteBuilder, harness: () => WebviewHarness): void {
  const { open, forget } = chatPages(s, harness);
  s.it(
    'the list is a polite log, a streaming answer is busy, controls are named buttons with a visible focus',
    async () => {
      const p = await open();
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [userMessage('u1', 'Q'), assistantMessage('a1', 'A', { status: 'streaming' })],
            busy: true,
          }),
        ),
      );
      const page = p.page;
      const log = page.getByRole('log');
      assert.equal(await log.getAttribute('aria-live'), 'polite');
      assert.equal(await page.locator('[role="log"] .msg[data-id="a1"]').getAttribute('aria-busy'), 'true');
      const unnamed = await page.evaluate<number>(
        `Array.from(document.querySelectorAll('button')).filter((b) => !(b.getAttribute('aria-label') || b.textContent.trim())).length`,
      );
      assert.equal(unnamed, 0);
      assert.equal(await page.locator('[onclick], [onkeydown], [onload]').count(), 0);
      await page.locator('body').click({ position: { x: 2, y: 2 } });
      await page.keyboard.press('Tab');
      const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
      assert.notEqual(outline, 'none', 'keyboard focus is visible');
    },
  );

  s.it('renders in the light and the dark theme (screenshots in test-results/webview)', async () => {
    await fsp.mkdir(SCREENSHOTS, { recursive: true });
    for (const theme of ['light', 'dark'] as const) {
      const p = await open({ theme, viewport: { width: 460, height: 1100 } });
      await p.push(
        snapshotMessage(
          snapshot({
            messages: [
              userMessage('u1', 'How do I sort users by age in TypeScript?', {
                attachments: [{ label: 'users.ts', chars: 1234, truncated: false }],
              }),
              assistantMessage('a1', RICH_ANSWER, {
                reasoning: 'The user wants a **comparator**.',
                usage: { inputTokens: 1200, outputTokens: 345 },
              }),
              userMessage('u2', 'And with a remote image?'),
              assistantMessage('a2', 'Here: ![chart](https://images.example.test/chart.png)\n\nThen the stream broke', {
                status: 'cut',
                error: { kind: 'network', message: 'The connection to the gateway dropped.' },
              }),
            ],
            attachments: [{ id: 'att1', label: 'selection.ts', chars: 320, truncated: false }],
            notice: { message: 'The model list is out of date.', action: 'refreshModels' },
          }),
        ),
      );
      await p.page.evaluate('document.fonts.ready');
      await p.page.screenshot({ path: path.join(SCREENSHOTS, `chat-${theme}.png`), fullPage: false });
      await p.close();
      forget();
    }
  });
}
