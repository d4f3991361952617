import assert from 'node:assert/strict';
import { ChatSessions, draft, type Shown } from '../../../src/host/chat/sessions';
import { ShownConversations } from '../../../src/host/chat/shownConversations';

const stored = (id: string): Shown => ({ key: id, id, meta: { id } });

describe('ChatSessions: one answer per conversation, held by its object', () => {
  it('claims synchronously: a second claim of the same conversation is refused, another conversation is not', () => {
    const sessions = new ChatSessions();
    const c1 = stored('c1');
    const a = sessions.claim(c1);
    assert.ok(a);
    assert.equal(c1.answer, a, 'the conversation holds its answer');
    assert.equal(sessions.claim(c1), undefined);
    assert.equal(sessions.claim(stored('c1')), undefined, 'another object naming the same conversation is refused too');
    assert.ok(sessions.claim(stored('c2')), 'another conversation may stream at the same time');
    sessions.release(a);
    assert.equal(c1.answer, undefined);
    assert.ok(sessions.claim(c1), 'free again once released');
  });

  it('a new chat claimed before it is stored is found by its id once stored, and refuses a second claim throughout', () => {
    const sessions = new ChatSessions();
    const chat = draft();
    const s = sessions.claim(chat);
    assert.ok(s);
    assert.equal(s.conversationId, undefined);
    assert.equal(sessions.claim(chat), undefined);
    // What the answer runner does once the conversation is created.
    chat.key = 'c9';
    chat.id = 'c9';
    assert.equal(s.conversationId, 'c9');
    assert.equal(sessions.answerIn('c9'), s);
    assert.equal(sessions.conversation('c9'), chat);
    assert.equal(sessions.claim(stored('c9')), undefined);
    assert.deepEqual(sessions.all(), [s]);
    sessions.release(s);
    assert.equal(sessions.answerIn('c9'), undefined);
    assert.deepEqual(sessions.all(), []);
  });

  it('a release of an ended session leaves a later answer in the same conversation alone', () => {
    const sessions = new ChatSessions();
    const c1 = stored('c1');
    const first = sessions.claim(c1);
    assert.ok(first);
    sessions.release(first);
    const second = sessions.claim(c1);
    assert.ok(second);
    sessions.release(first);
    assert.equal(c1.answer, second);
    assert.equal(sessions.answerIn('c1'), second);
  });

  it('a delete stops the answer, waits for it and its writes, and no answer may start meanwhile', async () => {
    const sessions = new ChatSessions();
    const s = sessions.claim(stored('c1'));
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
      assert.equal(sessions.claim(stored('c1')), undefined, 'no new answer while deleting');
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

describe('ShownConversations: one object per conversation, answered or shown', () => {
  const noStore = { open: () => Promise.resolve(undefined) };

  it('a new chat answered after the view forgot it is the object the view gets when it shows it by id', () => {
    const sessions = new ChatSessions();
    const conversations = new ShownConversations(noStore, () => undefined, sessions);
    const chat = conversations.current;
    const session = sessions.claim(chat);
    assert.ok(session);
    // The view starts more new chats than it keeps (it keeps a few), then the first is stored.
    for (let i = 0; i < 12; i++) conversations.show(draft());
    chat.key = 'c1';
    chat.id = 'c1';
    const shown = conversations.show(stored('c1'));
    assert.equal(shown, chat, 'the answering object, not a new one');
    assert.equal(shown.answer, session);
    assert.equal(conversations.targetNow('c1'), chat);
    assert.equal(sessions.claim(shown), undefined, 'a second send there is refused');
  });

  it('names a stored conversation by one object whichever way the view reaches it', () => {
    const sessions = new ChatSessions();
    const conversations = new ShownConversations(noStore, () => undefined, sessions);
    const byIntent = conversations.targetNow('c2');
    assert.ok(byIntent);
    assert.equal(conversations.show(stored('c2')), byIntent);
    assert.equal(conversations.targetNow('c2'), byIntent);
  });
});
