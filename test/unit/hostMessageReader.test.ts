import * as assert from 'node:assert/strict';
import { hostMessageReader } from '../../src/webview/chat/hostMessageReader';
import { isRecord } from '../../src/shared/isRecord';
import { hostMessageSchema, type ChatMessageView } from '../../src/shared/protocol';
import { assistantMessage, snapshot, snapshotMessage, userMessage } from '../webview/fixtures';

describe('chat view: reading host messages', () => {
  const held = new Map<string, ChatMessageView>();
  const reader = hostMessageReader((id) => held.get(id));
  beforeEach(() => held.clear());

  const parsed = (data: unknown) => {
    const result = reader.safeParse(data);
    assert.ok(result.success, 'read');
    return result.data;
  };
  const messagesOf = (data: unknown): ChatMessageView[] => {
    const message = parsed(data);
    assert.equal(message.type, 'snapshot');
    return message.type === 'snapshot' ? message.state.messages : [];
  };
  // What the host posts arrives as a copy (structured clone), never the objects the view holds.
  const posted = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

  it('reads a snapshot as the protocol does', () => {
    const message = snapshotMessage(
      snapshot({
        messages: [
          userMessage('u1', 'Hi'),
          assistantMessage('a1', 'Hello', { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } }),
        ],
      }),
    );
    const schema = hostMessageSchema.safeParse(posted(message));
    assert.ok(schema.success);
    assert.deepEqual(parsed(posted(message)), schema.data);
  });

  it('takes a message equal to one the view holds as that one, and checks one that changed', () => {
    const kept = assistantMessage('a1', 'Hello');
    const old = userMessage('u1', 'Hi');
    held.set('a1', kept).set('u1', old);
    const [u1, a1, a2] = messagesOf(
      posted(
        snapshotMessage(snapshot({ messages: [userMessage('u1', 'Hi, edited'), kept, assistantMessage('a2', 'New')] })),
      ),
    );
    assert.equal(a1, kept, 'unchanged: the object the view holds');
    assert.notEqual(u1, old);
    assert.equal(u1?.text, 'Hi, edited');
    assert.equal(a2?.text, 'New');
  });

  it('refuses a snapshot with a message that does not fit, and says which', () => {
    held.set('a1', assistantMessage('a1', 'Hello'));
    for (const bad of [
      { id: 'x', role: 'robot', text: 'Hi', status: 'done', createdAt: 1 },
      { ...assistantMessage('a1', 'Hello'), createdAt: 'yesterday' },
      'not a message',
    ]) {
      const data = posted(snapshotMessage(snapshot({ messages: [userMessage('u1', 'Hi')] }))) as {
        state: { messages: unknown[] };
      };
      data.state.messages.push(bad);
      const result = reader.safeParse(data);
      assert.equal(result.success, false, JSON.stringify(bad));
      if (!result.success)
        assert.deepEqual((result.error.issues as Array<{ path: unknown[] }>)[0]?.path.slice(0, 3), [
          'state',
          'messages',
          1,
        ]);
    }
  });

  it('refuses a snapshot whose other parts do not fit, and reads every other message as the protocol does', () => {
    const data = posted(snapshotMessage(snapshot({ messages: [userMessage('u1', 'Hi')] }))) as {
      state: Record<string, unknown>;
    };
    delete data.state.conversations;
    assert.equal(reader.safeParse(data).success, false);
    assert.equal(reader.safeParse({ type: 'snapshot', state: 'none' }).success, false);
    assert.equal(reader.safeParse({ type: 'busy', conversationId: 'c1', busy: 'yes' }).success, false);
    assert.deepEqual(parsed({ type: 'busy', conversationId: 'c1', busy: true }), {
      type: 'busy',
      conversationId: 'c1',
      busy: true,
    });
  });
});

describe('isRecord (the one "JSON object" check of host and webviews)', () => {
  it('takes objects, not null, arrays or other values', () => {
    assert.equal(isRecord({}), true);
    assert.equal(isRecord({ a: 1 }), true);
    assert.equal(isRecord(Object.create(null)), true);
    for (const v of [null, undefined, [], [1], 'x', 1, true]) assert.equal(isRecord(v), false, JSON.stringify(v));
  });
});
