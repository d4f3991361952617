/**
 * The chat's first use: the models the key may use, the watching of the store, and the latest
 * conversation shown. Activation reads no file and makes no network call; this runs when a chat
 * view shows or a chat command runs.
 */
import { loadModelsOnFirstUse } from '../setup';
import type { ChatBase, Shown } from './sessions';

/** What loading needs from the chat controller. */
export interface LoadHost extends ChatBase {
  show(next: Shown): void;
  refreshView(): void;
}

/** Loads what the chat needs; the store's watch is added to `subscriptions` (disposed with the chat). */
export async function loadChat(host: LoadHost, subscriptions: Array<{ dispose(): void }>): Promise<void> {
  const { services, store, sessions } = host;
  await loadModelsOnFirstUse(services, 'chat');
  // Another window (or this one) changed conversations: the list follows, and the open
  // conversation too unless an answer is being written into it here (its own deltas are newer
  // than the file).
  subscriptions.push(
    store.onDidChange((e) => {
      const shownId = host.shown.id;
      if (shownId && sessions.get(shownId) && (e.ids === 'all' || e.ids.includes(shownId))) return;
      host.refreshView();
    }),
  );
  // The latest conversation is shown; one that cannot be read (set aside or failing) leaves a
  // new chat, never a chat that cannot be used.
  try {
    for (const summary of (await store.list()).slice(0, 3)) {
      const page = await store.open(summary.id, { limit: 0 });
      if (page) {
        host.show({ key: page.meta.id, id: page.meta.id, meta: page.meta });
        break;
      }
    }
  } catch (err) {
    services.log.warn(`Opening the latest conversation failed: ${String(err)}`);
  }
}
