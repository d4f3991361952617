/**
 * The chat's first use: the models the key may use, the watching of the store, and the latest
 * conversation shown. Activation reads no file and makes no network call; this runs when a chat
 * view shows or a chat command runs.
 */
import { CLAIM_HEARTBEAT_MS, type ClaimState, type ConversationClaims } from '../../core/chat/store/claims';
import { loadModelsOnFirstUse } from '../setup';
import type { ChatBase, Shown } from './sessions';

/** What loading needs from the chat controller. */
export interface LoadHost extends ChatBase {
  readonly claims: Pick<ConversationClaims, 'state'>;
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
      if (shownId && sessions.answerIn(shownId) && (e.ids === 'all' || e.ids.includes(shownId))) return;
      host.refreshView();
    }),
  );
  subscriptions.push(watchOtherWindowsAnswer(host));
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

/**
 * An answer another window writes into the shown conversation ends without a write when that window
 * dies or hangs: the view is read again as soon as the conversation's claim turns free, so that the
 * answer shows as cut then (the store tells from the claim), not when something else changes.
 */
function watchOtherWindowsAnswer(host: LoadHost): { dispose(): void } {
  let last: { id: string; state: ClaimState } | undefined;
  const timer = setInterval(() => {
    const id = host.shown.id;
    if (!id || host.sessions.answerIn(id)) return;
    void host.claims.state(id).then(
      (state) => {
        if (last?.id === id && last.state === 'elsewhere' && state === 'free') host.refreshView();
        last = { id, state };
      },
      () => undefined,
    );
  }, CLAIM_HEARTBEAT_MS);
  // Never keeps a closing extension host alive.
  timer.unref();
  return { dispose: () => clearInterval(timer) };
}
