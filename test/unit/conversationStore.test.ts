import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConversationStore, titleFrom, toMarkdown, toView } from '../../src/core/chat/conversationStore';
import { isGatewayError } from '../../src/core/errors';

describe('conversation store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'conv-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('saves, lists newest first, loads, renames and deletes', async () => {
    const store = new ConversationStore(dir);
    const a = store.create('First');
    a.messages.push({ id: 'u1', role: 'user', text: 'hi', status: 'done', createdAt: 1 });
    a.updatedAt = 1000;
    await store.save(a);
    const b = store.create('Second');
    b.updatedAt = 2000;
    await store.save(b);
    assert.deepEqual((await store.list()).map((c) => c.title), ['Second', 'First']);
    assert.deepEqual((await store.load(a.id))?.messages.map((m) => m.text), ['hi']);
    a.title = 'Renamed';
    await store.save(a);
    const fresh = new ConversationStore(dir);
    assert.deepEqual((await fresh.list()).map((c) => c.title).sort(), ['Renamed', 'Second']);
    await fresh.delete(b.id);
    assert.deepEqual((await fresh.list()).map((c) => c.title), ['Renamed']);
    assert.equal(await fresh.load(b.id), undefined);
  });

  it('marks an answer left streaming by a reload as cut, keeping its text', async () => {
    const store = new ConversationStore(dir);
    const c = store.create('x');
    c.messages.push({ id: 'a1', role: 'assistant', text: 'half an ans', status: 'streaming', createdAt: 1 });
    await store.save(c);
    const loaded = await new ConversationStore(dir).load(c.id);
    assert.equal(loaded?.messages[0]?.status, 'cut');
    assert.equal(loaded?.messages[0]?.text, 'half an ans');
    assert.match(loaded?.messages[0]?.error?.message ?? '', /interrupted/);
  });

  it('rebuilds a damaged index from the conversation files', async () => {
    const store = new ConversationStore(dir);
    const c = store.create('Survivor');
    await store.save(c);
    writeFileSync(path.join(dir, 'index.json'), '{broken');
    assert.deepEqual((await new ConversationStore(dir).list()).map((s) => s.title), ['Survivor']);
  });

  it('serialises concurrent saves and leaves no temporary files', async () => {
    const store = new ConversationStore(dir);
    const convs = Array.from({ length: 20 }, (_, i) => store.create(`c${i}`));
    await Promise.all(convs.map((c) => store.save(c)));
    assert.equal((await new ConversationStore(dir).list()).length, 20);
    assert.ok(readdirSync(dir).every((f) => !f.endsWith('.tmp')));
  });

  it('reports a damaged conversation file as a readable error', async () => {
    const store = new ConversationStore(dir);
    const c = store.create('x');
    await store.save(c);
    writeFileSync(path.join(dir, `${c.id}.json`), '{"id":1}');
    await assert.rejects(store.load(c.id), (e: unknown) => isGatewayError(e, 'protocol'));
  });

  it('refuses ids that could escape the folder', async () => {
    const store = new ConversationStore(dir);
    assert.equal(await store.load('../x'), undefined);
    await assert.rejects(store.delete('../x'), /Invalid conversation id/);
    await assert.rejects(store.save({ ...store.create('x'), id: '../../evil' }), /Invalid conversation id/);
  });

  it('exports Markdown with attachments, reasoning and cut answers, and views without context', () => {
    const md = toMarkdown({
      id: 'x',
      title: 'Trip',
      createdAt: 0,
      updatedAt: 0,
      messages: [
        { id: 'u', role: 'user', text: 'Plan it', status: 'done', createdAt: 0, attachments: [{ label: 'notes.md', chars: 10, truncated: true }], context: 'secret context' },
        { id: 'a', role: 'assistant', text: 'Day 1…', reasoning: 'think', status: 'cut', model: 'gpt-5', error: { kind: 'timeout', message: 'idle' }, createdAt: 0 },
      ],
    });
    assert.match(md, /^# Trip/);
    assert.match(md, /> Attached: notes\.md \(cut to fit\)/);
    assert.match(md, /## gpt-5/);
    assert.match(md, /<summary>Thinking<\/summary>/);
    assert.match(md, /_\(cut off: idle\)_/);
    assert.equal(toView({ id: 'u', role: 'user', text: 't', status: 'done', createdAt: 0, context: 'c' }).hasOwnProperty('context'), false);
  });

  it('makes titles from the first line', () => {
    assert.equal(titleFrom('  Hello world\nmore'), 'Hello world');
    assert.equal(titleFrom(''), 'New chat');
    assert.equal(titleFrom('x'.repeat(100)).length, 58);
  });
});
