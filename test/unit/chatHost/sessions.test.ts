import assert from 'node:assert/strict';
import { ChatSessions, DRAFT_PREFIX } from '../../../src/host/chat/sessions';

describe('ChatSessions: one answer per conversation', () => {
  it('claims synchronously: a second claim of the same conversation is refused, another conversation is not', () => {
    const sessions = new ChatSessions();
    const a = sessions.claim('c1');
    assert.ok(a);
    assert.equal(sessions.claim('c1'), undefined);
    assert.ok(sessions.claim('c2'), 'another conversation may stream at the same time');
    sessions.release(a);
    assert.ok(sessions.claim('c1'), 'free again once released');
  });

  it('a new chat claimed under a draft key moves to its id once stored; the draft key and the id are both taken until then', () => {
    const sessions = new ChatSessions();
    const key = `${DRAFT_PREFIX}x`;
    const s = sessions.claim(key);
    assert.ok(s);
    assert.equal(s.conversationId, undefined);
    assert.equal(sessions.claim(key), undefined);
    sessions.bind(s, 'c9');
    assert.equal(s.conversationId, 'c9');
    assert.equal(sessions.get('c9'), s);
    assert.equal(sessions.get(key), undefined);
    assert.equal(sessions.claim('c9'), undefined);
  });

  it('a delete stops the answer, waits for it and its writes, and no answer may start meanwhile', async () => {
    const sessions = new ChatSessions();
    const s = sessions.claim('c1');
    assert.ok(s);
    const order: string[] = [];
    let finishWrite!: () => void;
    s.abort.signal.addEventListener('abort', () => {
      order.push('aborted');
      // The stream's last write settles a little later, then the session ends.
      void sessions.track(
        'c1',
        new Promise<void>((resolve) => {
          finishWrite = () => {
            order.push('last write done');
            resolve();
          };
        }),
      );
      setImmediate(() => {
        finishWrite();
        sessions.release(s);
      });
    });
    const deleting = sessions.whileDeleting('c1', async () => {
      order.push('deleted');
      assert.equal(sessions.claim('c1'), undefined, 'no new answer while deleting');
    });
    assert.equal(sessions.isDeleting('c1'), true);
    await deleting;
    assert.deepEqual(order, ['aborted', 'last write done', 'deleted']);
    assert.equal(sessions.isDeleting('c1'), false);
  });

  it('idle waits for every tracked write of a conversation, failed ones included', async () => {
    const sessions = new ChatSessions();
    let done = false;
    void sessions.track('c1', new Promise((resolve) => setImmediate(resolve))).then(() => (done = true));
    void sessions.track('c1', Promise.reject(new Error('disk full'))).catch(() => undefined);
    await sessions.idle('c1');
    assert.equal(done, true);
    await sessions.idle('unknown');
  });
});
