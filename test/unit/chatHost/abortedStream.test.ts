/**
 * An answer this window aborted (Stop, or the conversation deleted in another window) ends as
 * "stopped" even when the abort reaches the stream as a cut connection rather than a cancellation:
 * which one arrives depends on where the body was when it was aborted (seen on a busy machine).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChatEvent } from '../../../src/core/chat/events';
import { ConversationStore } from '../../../src/core/chat/conversationStore';
import { type StoredMessage } from '../../../src/core/chat/store/log';
import { GatewayError } from '../../../src/core/errors';
import { AnswerSession, ChatSessions } from '../../../src/host/chat/sessions';
import { streamAnswer } from '../../../src/host/chat/streaming';

describe('Chat: an answer aborted here', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'mg-chat-aborted-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function answerEndingWith(error: GatewayError, abortFirst: boolean): Promise<StoredMessage> {
    const store = new ConversationStore(path.join(dir, 'conversations'), { watch: 'poll' });
    const c = await store.create();
    const message: StoredMessage = { id: 'a', role: 'assistant', text: '', status: 'streaming', createdAt: 1 };
    await store.append(c.id, message);
    const session = new AnswerSession({ key: c.id, id: c.id, meta: {} });
    session.message = message;
    async function* events(): AsyncGenerator<ChatEvent[]> {
      yield [{ type: 'textDelta', text: 'Part of it' }];
      if (abortFirst) session.abort.abort();
      yield [{ type: 'error', error }];
    }
    const final = await streamAnswer(session, c.id, events(), {
      store,
      sessions: new ChatSessions(),
      onProgress: () => undefined,
      onUnsaved: () => undefined,
      onCheckpointFailed: () => undefined,
    });
    store.dispose();
    return final;
  }

  it('is stopped when the abort arrives as a cut connection', async () => {
    const final = await answerEndingWith(
      new GatewayError('network', 'The connection closed in the middle of the answer.'),
      true,
    );
    assert.equal(final.status, 'stopped');
    assert.equal(final.error, undefined, 'no error is shown for a stop');
    assert.equal(final.text, 'Part of it');
  });

  it('is cut, with its error, when the connection fails without an abort of ours', async () => {
    const final = await answerEndingWith(
      new GatewayError('network', 'The connection closed in the middle of the answer.'),
      false,
    );
    assert.equal(final.status, 'cut');
    assert.equal(final.error?.kind, 'network');
  });
});
