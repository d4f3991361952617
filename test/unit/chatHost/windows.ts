/**
 * Chat controllers as VS Code windows for tests: each has its own store instance on one shared
 * folder (as every window of a profile does), a view port that records posts, and services whose
 * base address and models a test may change. fakeVscode.ts must be imported first.
 */
import * as path from 'node:path';
import { ConversationStore } from '../../../src/core/chat/conversationStore';
import type { HostMessage } from '../../../src/shared/protocol';
import { ChatController } from '../../../src/host/chat/chatController';
import type { HttpClient } from '../../../src/core/http';
import type { ClaimOptions } from '../../../src/core/chat/store/claims';
import { CHAT_MODEL, chatServices, NO_EVENT } from '../../support/chatServices';

export interface TestWindow {
  chat: ChatController;
  store: ConversationStore;
  posts: HostMessage[];
  /** The registry's chat models (a test may empty it or add to it). */
  models: Array<Record<string, unknown>>;
  /** The base address the settings give (empty: not set). */
  setBaseUrl(url: string): void;
  dispose(): void;
}

/** A window on `storageDir` (its `conversations` folder is the store). */
export function openWindow(
  storageDir: string,
  gatewayUrl: string,
  http: HttpClient,
  claims: Omit<ClaimOptions, 'onLost'> = {},
): TestWindow {
  const store = new ConversationStore(path.join(storageDir, 'conversations'), { watch: 'poll' });
  const models: Array<Record<string, unknown>> = [{ ...CHAT_MODEL }];
  const registry = {
    snapshot: { updatedAt: Date.now(), models },
    onDidChange: NO_EVENT,
    refresh: async () => undefined,
  };
  const services = chatServices({ storageDir, baseUrl: gatewayUrl, http, registry });
  let baseUrl = gatewayUrl;
  (services as { settings: () => object }).settings = () => ({ baseUrl, catalogUrl: '' });
  const chat = new ChatController(services, store, claims);
  const posts: HostMessage[] = [];
  chat.attach({ post: (m) => posts.push(m), isLive: () => true, reload: () => undefined });
  return {
    chat,
    store,
    posts,
    models,
    setBaseUrl: (url) => (baseUrl = url),
    dispose: () => {
      chat.dispose();
      store.dispose();
    },
  };
}
