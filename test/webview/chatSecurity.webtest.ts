/** The chat webview in Chromium (security). Hostile text: XSS payloads in answers and questions, javascript: links. */
import assert from 'node:assert/strict';
import type { SuiteBuilder } from './chatView.webtest';
import { chatPages, posts } from './chatPages';
import { assistantMessage, snapshot, snapshotMessage, userMessage } from './fixtures';
import type { WebviewHarness } from './harness';

export function defineSecurityTests(s: SuiteBuilder, harness: () => WebviewHarness): void {
  const { open } = chatPages(s, harness);
  const PAYLOADS = [
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '[x](javascript:alert(1))',
    '[y](JaVaScRiPt:alert(2))',
    '[z](&#106;avascript:alert(3))',
    '[v](vbscript:msgbox(1))',
    '[d](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
    '<javascript:alert(4)>',
    '![i](javascript:alert(5))',
    '<a href="javascript:alert(6)">raw link</a>',
    '<svg onload=alert(7)></svg>',
    '<iframe src="javascript:alert(8)"></iframe>',
    '<style>body { display: none }</style>',
    '<div style="background:url(javascript:alert(9))">styled</div>',
    '[t](https://example.com "x\\" onmouseover=\\"alert(10)")',
    '<details open ontoggle=alert(11)>',
    '```html\n<script>alert(12)</script>\n```',
  ];

  s.it('XSS payloads in answers and questions do not execute and javascript: links are not clickable', async () => {
    const p = await open();
    const markdown = PAYLOADS.join('\n\n');
    await p.push(
      snapshotMessage(
        snapshot({
          messages: [userMessage('u1', PAYLOADS.join('\n')), assistantMessage('a1', markdown, { reasoning: markdown })],
        }),
      ),
    );
    const page = p.page;
    // Hover and click everything in the answer and the reasoning, including the text of the would-be links.
    await page.locator('.msg[data-id="a1"] summary').click();
    for (const el of await page.locator('.msg-body a, .msg-body p, .reasoning-body a').all()) {
      await el.hover();
      await el.click({ force: true });
    }
    await p.frames(3);
    const dom = await page.evaluate<{
      dangerous: number;
      handlers: number;
      styles: number;
      badLinks: number;
      links: string[];
    }>(`(() => {
      const list = document.querySelector('.messages');
      const all = Array.from(list.querySelectorAll('*'));
      return {
        // The app's own icons are SVG inside its icon buttons (markdown cannot make a button).
        dangerous: list.querySelectorAll('script, iframe, object, embed, svg:not(.icon-btn > svg.icon), style, form, input:not([type]), details:not(.reasoning)').length,
        handlers: all.filter((el) => Array.from(el.attributes).some((a) => a.name.startsWith('on'))).length,
        styles: all.filter((el) => el.hasAttribute('style')).length,
        badLinks: all.filter((el) => /^\\s*(javascript|vbscript|data):/i.test(el.getAttribute('href') || el.getAttribute('src') || '')).length,
        links: Array.from(list.querySelectorAll('.msg-body a[href]')).map((a) => a.getAttribute('href')),
      };
    })()`);
    assert.deepEqual(dom, { dangerous: 0, handlers: 0, styles: 0, badLinks: 0, links: ['https://example.com'] });
    assert.deepEqual(await p.alerts(), []);
    assert.deepEqual(p.dialogs, []);
    const opened = posts(await p.posted(), 'openLink').map((m) => m.url);
    assert.ok(
      opened.every((u) => u === 'https://example.com/'),
      `only the https link may be opened: ${opened.join(', ')}`,
    );
    assert.match(
      await page.locator('.msg-body').innerText(),
      /<script>alert\(1\)<\/script>/,
      'raw HTML is shown as text',
    );
    assert.match(
      await page.locator('.msg-body').innerText(),
      /\[x\]\(javascript:alert\(1\)\)/,
      'a javascript: link stays plain text',
    );
  });
}
