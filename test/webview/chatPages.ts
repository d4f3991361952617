/**
 * What the chat webview's feature files share: a chat page per test (closed and checked after it),
 * the host-bound messages of a type, and where screenshots go.
 */
import * as path from 'node:path';
import type { WebviewMessage } from '../../src/shared/protocol';
import type { SuiteBuilder } from './chatView.webtest';
import { closeAndCheck, type ChatPage, type WebviewHarness } from './harness';

export const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'test-results', 'webview');

export interface ChatPages {
  /** A chat page for this test; it is closed, and checked for page errors, after the test. */
  open(options?: Parameters<WebviewHarness['open']>[0]): Promise<ChatPage>;
  /** For a test that closed its page itself. */
  forget(): void;
}

/** Registers the after-each that closes the page a test of `t` opened. */
export function chatPages(t: SuiteBuilder, harness: () => WebviewHarness): ChatPages {
  let page: ChatPage | undefined;
  t.afterEach(async () => {
    if (page) {
      const closing = page;
      page = undefined;
      await closeAndCheck(closing);
    }
  });
  return {
    open: async (options) => {
      page = await harness().open(options);
      return page;
    },
    forget: () => {
      page = undefined;
    },
  };
}

export function posts<T extends WebviewMessage['type']>(
  messages: WebviewMessage[],
  type: T,
): Extract<WebviewMessage, { type: T }>[] {
  return messages.filter((m): m is Extract<WebviewMessage, { type: T }> => m.type === type);
}

/** Sends without their random ids, to compare with what is expected. */
export function withoutSendIds(
  sends: Array<Extract<WebviewMessage, { type: 'send' }>>,
): Array<Omit<Extract<WebviewMessage, { type: 'send' }>, 'sendId'>> {
  return sends.map(({ sendId: _sendId, ...rest }) => rest);
}

/** In the page: the message at the top of the chat's viewport, and where its top is in it. */
export const TOP_MESSAGE = `(() => { const list = document.querySelector('.messages'); const r = list.getBoundingClientRect(); const el = document.elementFromPoint(r.left + 40, r.top + 4)?.closest('.msg'); return el ? { id: el.dataset.id, top: el.getBoundingClientRect().top - r.top } : null; })()`;
