import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { titleFrom, toMarkdown, toView } from '../../src/core/chat/conversationForms';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import { type StoredMessage } from '../../src/core/chat/store/log';
import { type StoreProblem } from '../../src/core/chat/store/core';
import { writeFileAtomic } from '../../src/core/atomicFile';

const user = (id: string, text = `text of ${id}`): StoredMessage => ({
  id,
  role: 'user',
  text,
  status: 'done',
  createdAt: 1,
});
const answer = (id: string, text: string, status: StoredMessage['status'] = 'done'): StoredMessage => ({
  id,
  role: 'assistant',
  text,
  status,
  createdAt: 2,
});

/** A conversation in the format before logs (one JSON file each plus index.json), written as that code did. */
function writeOldFormat(dir: string, id: string, title: string, messages: StoredMessage[], updatedAt = 1000): void {
  writeFileSync(
    path.join(dir, `${id}.json`),
    JSON.stringify({ id, title, createdAt: 1, updatedAt, model: 'gpt-5', messages }),
  );
}

/** Until the clock has passed `after` (a time taken from Date.now, as the store stamps records). */
async function clockPast(after: number): Promise<void> {
  while (Date.now() <= after) await new Promise((resolve) => setTimeout(resolve, 1));
}

function manyMessages(count: number): StoredMessage[] {
  return Array.from({ length: count }, (_, i) =>
    i % 2 ? answer(`m${i}`, `Answer number ${i}: ${'lorem ipsum '.repeat(8)}`) : user(`m${i}`, `Question number ${i}?`),
  );
}

describe('conversation store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'conv-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates, appends, lists newest first, opens the end, renames and deletes', async () => {
    const store = new ConversationStore(dir);
    const a = await store.create({ title: 'First', model: 'gpt-5' });
    assert.equal(await store.append(a.id, user('u1', 'hi')), true);
    const b = await store.create({ title: 'Second' });
    await store.setMeta(b.id, { updatedAt: a.updatedAt + 10_000 });
    assert.deepEqual(
      (await store.list()).map((c) => [c.title, c.messageCount]),
      [
        ['Second', 0],
        ['First', 1],
      ],
    );
    const page = await store.open(a.id);
    assert.deepEqual(
      page?.messages.map((m) => m.text),
      ['hi'],
    );
    assert.equal(page?.total, 1);
    assert.equal(page?.meta.model, 'gpt-5');
    assert.equal(await store.setMeta(a.id, { title: 'Renamed', protocolOverride: 'messages' }), true);
    const fresh = new ConversationStore(dir);
    assert.deepEqual((await fresh.list()).map((c) => c.title).sort(), ['Renamed', 'Second']);
    assert.equal((await fresh.open(a.id))?.meta.protocolOverride, 'messages');
    await fresh.setMeta(a.id, { protocolOverride: undefined });
    assert.equal((await store.open(a.id))?.meta.protocolOverride, undefined, 'a key given as undefined is cleared');
    await fresh.delete(b.id);
    assert.deepEqual(
      (await store.list()).map((c) => c.title),
      ['Renamed'],
    );
    assert.equal(await store.open(b.id), undefined);
    assert.equal(await store.load(b.id), undefined);
  });

  it('moves updatedAt on append, update and setMeta, and not on a checkpoint', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    const stamp = async () => (await store.open(c.id))!.meta.updatedAt;
    const tick = clockPast;
    let last = await stamp();
    for (const step of [
      () => store.append(c.id, answer('a', '', 'streaming')),
      () => store.update(c.id, answer('a', 'done')),
      () => store.setMeta(c.id, { title: 'x' }),
    ]) {
      await tick(last);
      await step();
      const now = await stamp();
      assert.ok(now > last, 'updatedAt moved');
      last = now;
    }
    await tick(last);
    await store.checkpoint(c.id, 'a', { text: '!' });
    assert.equal(await stamp(), last);
  });

  it('streams by checkpoints of new text only, then replaces the answer with its final state', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    await store.append(c.id, user('u'));
    await store.append(c.id, answer('a', '', 'streaming'));
    await store.checkpoint(c.id, 'a', { text: 'Hel', reasoning: 'thinking ' });
    await store.checkpoint(c.id, 'a', { text: 'lo', reasoning: 'more' });
    await store.checkpoint(c.id, 'a', {});
    let m = (await store.open(c.id))!.messages[1]!;
    assert.deepEqual([m.text, m.reasoning, m.status], ['Hello', 'thinking more', 'streaming']);
    await store.update(c.id, {
      ...answer('a', 'Hello, world.'),
      reasoning: 'thinking more',
      usage: { outputTokens: 3 },
    });
    await store.checkpoint(c.id, 'other', { text: 'ignored: no such message' });
    m = (await new ConversationStore(dir).load(c.id))!.messages[1]!;
    assert.deepEqual([m.text, m.status, m.usage?.outputTokens], ['Hello, world.', 'done', 3]);
    assert.equal(
      await store.update(c.id, answer('nope', 'x')),
      false,
      'updating a message that is not there writes nothing',
    );
  });

  it('a failed checkpoint leaves no hole: later pieces are refused until the answer is written whole', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    await store.append(c.id, user('u'));
    await store.append(c.id, { ...answer('a', '', 'streaming'), reasoning: '' });
    assert.equal(await store.checkpoint(c.id, 'a', { text: 'One ', reasoning: 'think ' }), true);
    // The next piece's write fails (a full disk): nothing of it reaches the file.
    const probe = await fsp.open(path.join(dir, `${c.id}.log`), 'r');
    const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown> };
    await probe.close();
    const write = proto.write;
    let failed = 0;
    proto.write = function (this: unknown, ...args: unknown[]) {
      if (Buffer.isBuffer(args[0]) && args[0].includes('"k":"c"') && !failed++)
        return Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }));
      return write.apply(this, args);
    };
    try {
      await assert.rejects(store.checkpoint(c.id, 'a', { text: 'two ', reasoning: 'hard ' }), /ENOSPC/);
    } finally {
      proto.write = write;
    }
    assert.equal(failed, 1);
    assert.equal(await store.checkpoint(c.id, 'a', { text: 'three', reasoning: 'er' }), false, 'refused after the gap');
    let m = (await new ConversationStore(dir).open(c.id))!.messages[1]!;
    assert.deepEqual([m.text, m.reasoning], ['One ', 'think '], 'never "One three"');
    // The final state is written whole; checkpoints of a continued answer go on from it.
    await store.update(c.id, { ...answer('a', 'One two three', 'streaming'), reasoning: 'think harder' });
    assert.equal(await store.checkpoint(c.id, 'a', { text: '!' }), true);
    m = (await new ConversationStore(dir).open(c.id))!.messages[1]!;
    assert.deepEqual([m.text, m.reasoning], ['One two three!', 'think harder']);
  });

  it('joins a checkpoint only where it continues the text: nothing after a gap in the file is joined', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    const line = (r: object) => `${JSON.stringify({ at: 1, ...r })}\n`;
    appendFileSync(
      path.join(dir, `${c.id}.log`),
      [
        line({ k: 'a', i: 0, m: { id: 'r', role: 'assistant', text: 'Base', status: 'streaming', createdAt: 1 } }),
        line({ k: 'c', id: 'r', t: ' one', o: 4, r: 'why', ro: 0 }),
        // " two" (o: 8) was never written: the next text piece starts at 12.
        line({ k: 'c', id: 'r', t: ' three', o: 12, r: ' so', ro: 3 }),
        line({ k: 'c', id: 'r', t: ' four', o: 18 }),
      ].join(''),
    );
    const m = (await new ConversationStore(dir).open(c.id))!.messages[0]!;
    assert.deepEqual([m.text, m.reasoning], ['Base one', 'why so']);
  });

  it('reads records longer than a read chunk, and many short ones across chunk edges', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    const long = 'é'.repeat(150_000);
    await store.append(c.id, user('u1', long));
    for (let i = 0; i < 300; i++) await store.checkpoint(c.id, 'u1', { text: `${i % 10}`.repeat(500) });
    await store.append(c.id, user('u2', 'after'));
    const expected = long + Array.from({ length: 300 }, (_, i) => `${i % 10}`.repeat(500)).join('');
    const fresh = new ConversationStore(dir);
    assert.equal((await fresh.open(c.id, { limit: 2 }))?.messages[0]?.text, expected);
    assert.deepEqual(
      (await fresh.open(c.id, { limit: 1 }))?.messages.map((m) => m.text),
      ['after'],
    );
  });

  it('truncates from a message (regenerate) and appends after it', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    for (const m of [user('u1'), answer('a1', 'one'), user('u2'), answer('a2', 'two')]) await store.append(c.id, m);
    assert.equal(await store.truncateFrom(c.id, 'a2'), true);
    await store.append(c.id, answer('a2b', 'two again'));
    await store.checkpoint(c.id, 'a2', { text: 'a late delta for the removed answer' });
    assert.equal(await store.truncateFrom(c.id, 'a2'), false, 'already removed');
    const loaded = await new ConversationStore(dir).load(c.id);
    assert.deepEqual(
      loaded?.messages.map((m) => m.text),
      ['text of u1', 'one', 'text of u2', 'two again'],
    );
    assert.equal((await store.list())[0]?.messageCount, 4);
    await store.truncateFrom(c.id, 'u1');
    assert.deepEqual((await store.open(c.id))?.messages, []);
    assert.equal((await store.open(c.id))?.total, 0);
  });

  /** Makes the FileHandle write of a buffer `matching` fail once with ENOSPC (after writing `partial` of its bytes); returns how many failed. */
  async function failWriteOnce(matching: string, partial = 0): Promise<{ failed: () => number; restore: () => void }> {
    const probe = await fsp.open(path.join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<{ bytesWritten: number }> };
    await probe.close();
    const write = proto.write;
    let failed = 0;
    proto.write = async function (this: unknown, ...args: unknown[]) {
      const [buffer, offset, length, position] = args as [Buffer, number, number, number];
      if (Buffer.isBuffer(buffer) && buffer.includes(matching) && !failed++) {
        if (partial) await write.apply(this, [buffer, offset, partial, position]);
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      }
      return write.apply(this, [buffer, offset, length, position]);
    };
    return { failed: () => failed, restore: () => (proto.write = write) };
  }

  it('replaces messages from one on (retry, edit) in one write, which counts whole or not at all', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    for (const m of [user('u1'), answer('a1', 'one'), { ...user('n1', 'a notice'), role: 'notice' as const }])
      await store.append(c.id, m);
    const before = await store.load(c.id);
    // The write of the replacement fails after some of its bytes reached the disk.
    const fault = await failWriteOnce('edited question', 40);
    try {
      await assert.rejects(
        store.replaceFrom(c.id, 'u1', [user('u1b', 'edited question'), answer('a1b', '', 'streaming')]),
        /ENOSPC/,
      );
    } finally {
      fault.restore();
    }
    assert.equal(fault.failed(), 1);
    assert.deepEqual(await new ConversationStore(dir).load(c.id), before, 'the old messages are all still there');
    // Replacing works afterwards, and a notice kept after the replaced answer stays.
    assert.equal(
      await store.replaceFrom(c.id, 'a1', [
        { ...user('n1', 'a notice'), role: 'notice' },
        answer('a1c', 'again', 'streaming'),
      ]),
      true,
    );
    assert.equal(await store.checkpoint(c.id, 'a1c', { text: '!' }), true);
    const loaded = await new ConversationStore(dir).load(c.id);
    assert.deepEqual(
      loaded?.messages.map((m) => m.text),
      ['text of u1', 'a notice', 'again!'],
    );
    assert.equal((await new ConversationStore(dir).list())[0]?.messageCount, 3);
    assert.equal(
      await store.replaceFrom(c.id, 'a1', [answer('x', 'x')]),
      false,
      'a message that is gone is not replaced',
    );
    assert.equal(await store.append(c.id, user('u2')), true);
    assert.deepEqual(
      (await new ConversationStore(dir).load(c.id))?.messages.map((m) => m.id),
      ['u1', 'n1', 'a1c', 'u2'],
    );
  });

  it('a replacement cut short by a crash counts for nothing, for readers and later writers', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    for (const m of [user('u1'), answer('a1', 'one')]) await store.append(c.id, m);
    await store.replaceFrom(c.id, 'u1', [user('u1b', 'edited'), answer('a1b', '', 'streaming')]);
    const file = path.join(dir, `${c.id}.log`);
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    // The crash: the batch's first line reached the file, its last did not (nor the torn end of it).
    writeFileSync(file, `${lines.slice(0, -1).join('\n')}\n${(lines.at(-1) ?? '').slice(0, 20)}`);
    const expected = ['text of u1', 'one'];
    assert.deepEqual(
      (await new ConversationStore(dir).load(c.id))?.messages.map((m) => m.text),
      expected,
    );
    assert.equal((await new ConversationStore(dir).list())[0]?.messageCount, 2);
    // A later write (which cuts the torn end off) leaves the unfinished batch out too.
    assert.equal(await store.append(c.id, user('u2')), true);
    assert.deepEqual(
      (await new ConversationStore(dir).load(c.id))?.messages.map((m) => m.text),
      [...expected, 'text of u2'],
    );
  });

  it('writes the rest of a record the disk took only part of', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    const probe = await fsp.open(path.join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<{ bytesWritten: number }> };
    await probe.close();
    const write = proto.write;
    let short = 0;
    proto.write = function (this: unknown, ...args: unknown[]) {
      const [buffer, offset, length, position] = args as [Buffer, number, number, number];
      // A short write: the disk takes 10 bytes of the record, the rest must follow.
      if (Buffer.isBuffer(buffer) && buffer.includes('a short one') && offset === 0 && length > 10 && !short++)
        return write.apply(this, [buffer, offset, 10, position]);
      return write.apply(this, args);
    };
    try {
      assert.equal(await store.append(c.id, user('u1', 'a short one')), true);
    } finally {
      proto.write = write;
    }
    assert.equal(short, 1);
    assert.deepEqual(
      (await new ConversationStore(dir).load(c.id))?.messages.map((m) => m.text),
      ['a short one'],
    );
  });

  it('replays a log from its end: newest record per position, removals hide older records, checkpoints join their message', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create({ title: 'Replay' });
    const line = (r: object) => `${JSON.stringify({ at: 1, ...r })}\n`;
    const a = (i: number, id: string, text: string, status = 'done') =>
      line({ k: 'a', i, m: { id, role: 'assistant', text, status, createdAt: 1 } });
    appendFileSync(
      path.join(dir, `${c.id}.log`),
      [
        a(0, 'q', 'question'),
        a(1, 'r', ''),
        line({ k: 'c', id: 'r', t: 'first ' }),
        line({ k: 'c', id: 'r', t: 'try' }),
        line({ k: 'x', i: 1 }),
        line({ k: 'c', id: 'r', t: ' (late delta of the removed answer)' }),
        a(1, 'r', 'Second'),
        line({ k: 'c', id: 'r', t: ' try', r: 'why' }),
        a(2, 's', 'x', 'streaming'),
        line({ k: 'u', i: 2, m: { id: 's', role: 'assistant', text: 'final', status: 'done', createdAt: 1 } }),
        line({ k: 'c', id: 'gone', t: 'for no message' }),
        line({ k: 'm', meta: { id: c.id, title: 'From the log', createdAt: 1, updatedAt: 1 } }),
      ].join(''),
    );
    rmSync(path.join(dir, `${c.id}.meta.json`));
    const loaded = await new ConversationStore(dir).load(c.id);
    assert.deepEqual(
      loaded?.messages.map((m) => [m.id, m.text, m.reasoning]),
      [
        ['q', 'question', undefined],
        ['r', 'Second try', 'why'],
        ['s', 'final', undefined],
      ],
    );
    assert.equal(loaded?.title, 'From the log');
    const page = await new ConversationStore(dir).open(c.id, { limit: 1 });
    assert.deepEqual([page?.total, page?.messages.map((m) => m.text)], [3, ['final']]);
  });

  it('reports an answer left streaming as cut only once nothing was written to it for a while', async () => {
    const live = new ConversationStore(dir, { streamingStaleMs: 60_000 });
    const c = await live.create();
    await live.append(c.id, answer('a1', '', 'streaming'));
    await live.checkpoint(c.id, 'a1', { text: 'half an ans' });
    assert.equal((await live.open(c.id))?.messages[0]?.status, 'streaming', 'another window may still be writing it');
    const later = new ConversationStore(dir, { streamingStaleMs: 0 });
    // Stale at 0 ms means: last written at an earlier millisecond than the read (the checkpoint
    // was stamped at or before now).
    await clockPast(Date.now());
    const loaded = await later.load(c.id);
    assert.equal(loaded?.messages[0]?.status, 'cut');
    assert.equal(loaded?.messages[0]?.text, 'half an ans');
    assert.match(loaded?.messages[0]?.error?.message ?? '', /interrupted/);
  });

  it('opens the last messages of a 2,000-message conversation reading a bounded number of bytes', async () => {
    writeOldFormat(dir, 'long', 'Long', manyMessages(2000));
    const store = new ConversationStore(dir);
    await store.list();
    const logBytes = statSync(path.join(dir, 'long.log')).size;
    const before = store.io.bytesRead;
    const page = await store.open('long', { limit: 20 });
    const read = store.io.bytesRead - before;
    assert.equal(page?.total, 2000);
    assert.deepEqual(
      page?.messages.map((m) => m.id),
      Array.from({ length: 20 }, (_, i) => `m${1980 + i}`),
    );
    // One read chunk of 64 KiB at most for 20 short messages, against a log of ~400 KB.
    assert.ok(logBytes > 300_000, `log is ${logBytes} bytes`);
    assert.ok(read <= 64 * 1024, `read ${read} bytes of ${logBytes}`);
    const all = await store.load('long');
    assert.equal(all?.messages.length, 2000);
    assert.equal(all?.messages[1999]?.id, 'm1999');
  });

  it('appends and checkpoints with the same bytes written and read at message 20 and 2,000', async () => {
    writeOldFormat(dir, 'short', 'Short', manyMessages(20));
    writeOldFormat(dir, 'long', 'Long', manyMessages(2000));
    const store = new ConversationStore(dir);
    await store.list();
    const cost = async (id: string) => {
      const w0 = store.io.bytesWritten;
      const r0 = store.io.bytesRead;
      const size0 = statSync(path.join(dir, `${id}.log`)).size;
      await store.append(id, answer('new', '', 'streaming'));
      await store.checkpoint(id, 'new', { text: 'twelve chars' });
      await store.checkpoint(id, 'new', { text: 'twelve chars' });
      return {
        written: store.io.bytesWritten - w0,
        read: store.io.bytesRead - r0,
        growth: statSync(path.join(dir, `${id}.log`)).size - size0,
      };
    };
    const short = await cost('short');
    const long = await cost('long');
    // The same bytes, but for the message's position: "2000" has two digits more than "20".
    assert.equal(long.written - short.written, 2);
    assert.equal(long.growth - short.growth, 2);
    assert.equal(long.growth, long.written, 'the log grows by exactly what was written');
    assert.ok(long.read <= 64 * 1024, `append read ${long.read} bytes`);
    // A checkpoint writes its delta plus a small fixed envelope, not the answer so far.
    const w0 = store.io.bytesWritten;
    await store.checkpoint('long', 'new', { text: 'x'.repeat(1000) });
    const checkpoint = store.io.bytesWritten - w0;
    assert.ok(checkpoint > 1000 && checkpoint < 1100, `checkpoint wrote ${checkpoint} bytes`);
  });

  it('ignores a torn last line left by a crash, and the next write cuts it off', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create({ title: 'Torn' });
    await store.append(c.id, user('u1'));
    appendFileSync(path.join(dir, `${c.id}.log`), '{"k":"a","at":1,"i":1,"m":{"id":"u2","role":"us');
    const problems: StoreProblem[] = [];
    const fresh = new ConversationStore(dir, { onProblem: (p) => problems.push(p) });
    assert.deepEqual(
      (await fresh.open(c.id))?.messages.map((m) => m.id),
      ['u1'],
    );
    assert.equal(await fresh.append(c.id, user('u3')), true);
    assert.deepEqual(
      (await fresh.load(c.id))?.messages.map((m) => m.id),
      ['u1', 'u3'],
    );
    assert.deepEqual(problems, []);
  });

  it('drops without a word the empty log of a create cut short by a crash', async () => {
    writeFileSync(path.join(dir, 'c0ffee.log'), '{"k":"m","at":1,"meta":{"id":"c0f');
    const problems: StoreProblem[] = [];
    const store = new ConversationStore(dir, { onProblem: (p) => problems.push(p) });
    assert.deepEqual(await store.list(), []);
    assert.deepEqual(problems, []);
    assert.ok(!existsSync(path.join(dir, 'c0ffee.log')));
  });

  it('sets aside a log not one line of which is a record, says so, and keeps working (also after a reload)', async () => {
    const problems: StoreProblem[] = [];
    const store = new ConversationStore(dir, { onProblem: (p) => problems.push(p) });
    const good = await store.create({ title: 'Good' });
    const bad = await store.create({ title: 'Bad' });
    await store.append(bad.id, user('u1'));
    await store.append(good.id, user('g1'));
    const log = path.join(dir, `${bad.id}.log`);
    writeFileSync(log, 'this is no log\n\u0000\u0001garbage\n');
    assert.equal(await store.open(bad.id), undefined);
    assert.equal(problems.length, 1);
    assert.equal(problems[0]?.kind, 'damaged');
    assert.equal(problems[0]?.id, bad.id);
    assert.match(problems[0]?.message ?? '', /"Bad" could not be read .* set aside as .*\.damaged-/);
    const aside = problems[0]?.setAsideAs ?? '';
    assert.ok(existsSync(path.join(dir, aside)), 'the damaged file is kept');
    assert.ok(readFileSync(path.join(dir, aside), 'utf8').includes('this is no log'));
    assert.deepEqual(
      (await store.list()).map((c) => c.title),
      ['Good'],
    );
    assert.equal(await store.append(bad.id, user('u2')), false);
    assert.equal(await store.append(good.id, user('g2')), true);
    const reloaded = new ConversationStore(dir, { onProblem: (p) => problems.push(p) });
    assert.deepEqual(
      (await reloaded.list()).map((c) => c.title),
      ['Good'],
    );
    assert.deepEqual(
      (await reloaded.load(good.id))?.messages.map((m) => m.id),
      ['g1', 'g2'],
    );
    assert.equal(problems.length, 1, 'reported once');
  });

  it('a record this version cannot read costs that record, not the conversation, and stays in the file', async () => {
    const problems: StoreProblem[] = [];
    const store = new ConversationStore(dir, { onProblem: (p) => problems.push(p) });
    const c = await store.create({ title: 'From the future' });
    await store.append(c.id, user('u1'));
    const log = path.join(dir, `${c.id}.log`);
    const future = [
      // A status, a role and a record kind a newer version added; a field value it added to an enum;
      // a record that is not JSON; a record of a known kind with a bad field (a bug).
      {
        k: 'a',
        at: 5,
        i: 1,
        m: { id: 'a1', role: 'assistant', text: 'an answer', status: 'queued', finishReason: 'pondered', createdAt: 2 },
      },
      { k: 'a', at: 6, i: 2, m: { id: 't1', role: 'tool', text: 'a tool result', status: 'done', createdAt: 3 } },
      { k: 'pin', at: 7, id: 'a1' },
      {
        k: 'm',
        at: 8,
        meta: { id: c.id, title: 'From the future', createdAt: 1, updatedAt: 8, protocolOverride: 'quantum' },
      },
      { k: 'x', at: 9, i: 'three' },
    ].map((r) => JSON.stringify(r));
    appendFileSync(log, `${future.slice(0, 3).join('\n')}\nnot json at all\n${future.slice(3).join('\n')}\n`);
    const fresh = new ConversationStore(dir, { onProblem: (p) => problems.push(p) });
    assert.deepEqual(
      (await fresh.list()).map((s) => s.title),
      ['From the future'],
    );
    const page = await fresh.open(c.id);
    assert.ok(page, 'the conversation is still there');
    assert.deepEqual(
      page.messages.map((m) => [m.id, m.status, m.finishReason]),
      [
        ['u1', 'done', undefined],
        ['a1', 'unknown', undefined],
      ],
    );
    assert.equal(page.total, 3, 'the message this version cannot show still holds its place');
    assert.equal(problems.length, 1, 'said once');
    assert.match(problems[0]?.message ?? '', /newer version .* kept in its file/);
    // Writing goes on after them, and leaves them as they are.
    assert.equal(await fresh.append(c.id, user('u2')), true);
    assert.deepEqual(
      (await fresh.open(c.id))?.messages.map((m) => m.id),
      ['u1', 'a1', 'u2'],
    );
    const text = readFileSync(log, 'utf8');
    for (const line of [...future, 'not json at all']) assert.ok(text.includes(`${line}\n`), `kept: ${line}`);
    await fresh.open(c.id);
    assert.equal(problems.length, 1, 'still said once');
  });

  it('a metadata file with a value a newer version added is read, not set aside', async () => {
    const problems: StoreProblem[] = [];
    const store = new ConversationStore(dir, { onProblem: (p) => problems.push(p) });
    const c = await store.create({ title: 'Newer' });
    const file = path.join(dir, `${c.id}.meta.json`);
    const meta = JSON.parse(readFileSync(file, 'utf8')) as { meta: Record<string, unknown> };
    meta.meta.protocolOverride = 'quantum';
    writeFileSync(file, JSON.stringify(meta));
    assert.deepEqual(
      (await new ConversationStore(dir, { onProblem: (p) => problems.push(p) }).list()).map((s) => s.title),
      ['Newer'],
    );
    assert.deepEqual(problems, []);
    assert.ok(readFileSync(file, 'utf8').includes('quantum'), 'not rewritten');
  });

  it('refuses a record this version may not write before anything reaches the file', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    await store.append(c.id, user('u1'));
    const log = path.join(dir, `${c.id}.log`);
    const before = readFileSync(log);
    const bad = [
      { ...user('u2'), role: 'system' },
      { ...user('u2'), status: 'unknown' },
      { ...user('u2'), createdAt: 'yesterday' },
    ] as unknown as StoredMessage[];
    for (const m of bad) await assert.rejects(store.append(c.id, m), /refused before anything was saved/);
    await assert.rejects(store.update(c.id, { ...user('u1'), status: 'unknown' }), /status this version does not know/);
    await assert.rejects(
      store.setMeta(c.id, { protocolOverride: 'quantum' as never }),
      /refused before anything was saved/,
    );
    assert.deepEqual(readFileSync(log), before);
    assert.deepEqual(
      (await store.load(c.id))?.messages.map((m) => m.id),
      ['u1'],
    );
    const files = readdirSync(dir).sort();
    await assert.rejects(store.create({ protocolOverride: 'quantum' as never }), /refused before anything was saved/);
    assert.deepEqual(readdirSync(dir).sort(), files, 'no conversation made');
  });

  it('reads the summary cache as its schema does: unknown keys left out, a wrong entry refusing the whole cache', async () => {
    const store = new ConversationStore(dir);
    await store.create({ title: 'A' });
    await store.create({ title: 'B' });
    const listed = await store.list();
    const file = path.join(dir, '.index', 'summaries.json');
    const cache = JSON.parse(readFileSync(file, 'utf8')) as {
      entries: Array<Record<string, unknown> & { summary: Record<string, unknown> }>;
    };
    for (const e of cache.entries) {
      Object.assign(e, { extra: 1 });
      Object.assign(e.summary, { extra: true });
    }
    writeFileSync(file, JSON.stringify({ ...cache, extra: 'x' }));
    const reader = new ConversationStore(dir);
    assert.deepEqual(await reader.list(), listed, 'the same summaries, without the unknown keys');
    assert.equal(reader.io.metaChecks, 2, 'each entry checked against its files');
    // A summary the schema refuses (a count that is text): the cache is not used, the files are read.
    (cache.entries[0] as { summary: Record<string, unknown> }).summary.messageCount = '0';
    writeFileSync(file, JSON.stringify(cache));
    const again = new ConversationStore(dir);
    assert.deepEqual(await again.list(), listed);
  });

  it('lists from the summary cache only what is unchanged on disk', async () => {
    const store = new ConversationStore(dir);
    const a = await store.create({ title: 'A' });
    const b = await store.create({ title: 'B' });
    await store.list();
    assert.ok(existsSync(path.join(dir, '.index', 'summaries.json')));
    // Changed after the cache was written, by another window: the cache entry no longer matches.
    await new ConversationStore(dir).setMeta(a.id, { title: 'A renamed' });
    await new ConversationStore(dir).append(b.id, user('u'));
    assert.deepEqual((await new ConversationStore(dir).list()).map((c) => [c.title, c.messageCount]).sort(), [
      ['A renamed', 0],
      ['B', 1],
    ]);
    // A cache that claims what the files do not say is not believed.
    const cache = readFileSync(path.join(dir, '.index', 'summaries.json'), 'utf8');
    writeFileSync(
      path.join(dir, '.index', 'summaries.json'),
      cache.replaceAll('A renamed', 'Forged').replace(/"stamp":"[^"]*"/g, '"stamp":"0:0:0"'),
    );
    assert.deepEqual((await new ConversationStore(dir).list()).map((c) => c.title).sort(), ['A renamed', 'B']);
    writeFileSync(path.join(dir, '.index', 'summaries.json'), '{broken');
    assert.deepEqual((await new ConversationStore(dir).list()).map((c) => c.title).sort(), ['A renamed', 'B']);
  });

  it('lists an unchanged folder without checking each file, and still sees every change another window makes', async () => {
    const settle = { folderSettleMs: 50 };
    // Until the folder's last change lies the settle time in the past, by the folder's own times
    // (the rule the store applies), however coarse the file system's clock and however busy the machine.
    const wait = async () => {
      const stat = statSync(dir);
      await clockPast(Math.max(stat.mtimeMs, stat.ctimeMs) + settle.folderSettleMs);
    };
    const writer = new ConversationStore(dir, settle);
    const a = await writer.create({ title: 'A' });
    const b = await writer.create({ title: 'B' });
    await writer.append(a.id, user('a1'));
    const rows = async (store: ConversationStore) => (await store.list()).map((c) => [c.title, c.messageCount]).sort();
    await wait();
    // A reloaded window checks every file once (the folder had settled), and says so in the cache.
    const first = new ConversationStore(dir, settle);
    assert.deepEqual(await rows(first), [
      ['A', 1],
      ['B', 0],
    ]);
    assert.equal(first.io.metaChecks, 2);
    // The next one trusts the unchanged folder: no file is looked at.
    const reader = new ConversationStore(dir, settle);
    assert.deepEqual(await rows(reader), [
      ['A', 1],
      ['B', 0],
    ]);
    assert.equal(reader.io.metaChecks, 0);
    // Another window appends, renames, deletes and creates: each shows at once in the next list.
    const other = new ConversationStore(dir, settle);
    await other.append(b.id, user('b1'));
    assert.deepEqual(await rows(reader), [
      ['A', 1],
      ['B', 1],
    ]);
    await wait();
    await reader.list(); // settled again
    const checks = reader.io.metaChecks;
    await reader.list();
    assert.equal(reader.io.metaChecks, checks, 'trusted again once settled');
    await other.setMeta(a.id, { title: 'A renamed' });
    assert.deepEqual(await rows(reader), [
      ['A renamed', 1],
      ['B', 1],
    ]);
    await wait();
    await reader.list();
    await other.delete(a.id);
    await other.create({ title: 'C' });
    assert.deepEqual(await rows(reader), [
      ['B', 1],
      ['C', 0],
    ]);
    // A folder changed while it was checked is not trusted: the next list checks again.
    await wait();
    const racing = new ConversationStore(dir, settle);
    const listing = racing.list();
    await other.append(b.id, user('b2'));
    await listing;
    assert.deepEqual(await rows(racing), [
      ['B', 2],
      ['C', 0],
    ]);
    // A damaged cache costs checks, never a wrong list.
    writeFileSync(path.join(dir, '.index', 'summaries.json'), '{broken');
    const fresh = new ConversationStore(dir, settle);
    assert.deepEqual(await rows(fresh), [
      ['B', 2],
      ['C', 0],
    ]);
    assert.equal(fresh.io.metaChecks, 2);
  });

  it('rebuilds a missing or damaged metadata file from the log', async () => {
    const problems: StoreProblem[] = [];
    const store = new ConversationStore(dir, { onProblem: (p) => problems.push(p) });
    const c = await store.create({ title: 'Kept' });
    await store.append(c.id, user('u1'));
    await store.setMeta(c.id, { title: 'Kept, renamed' });
    await store.append(c.id, user('u2'));
    writeFileSync(path.join(dir, `${c.id}.meta.json`), 'garbage');
    const fresh = new ConversationStore(dir, { onProblem: (p) => problems.push(p) });
    assert.deepEqual(
      (await fresh.list()).map((s) => [s.title, s.messageCount]),
      [['Kept, renamed', 2]],
    );
    assert.equal(problems.length, 1);
    assert.match(problems[0]?.message ?? '', /rebuilt/);
    rmSync(path.join(dir, `${c.id}.meta.json`));
    assert.equal((await new ConversationStore(dir).open(c.id))?.meta.title, 'Kept, renamed');
    assert.equal(problems.length, 1, 'a missing metadata file is no problem to report');
  });

  it('where the metadata file and the log disagree, the log wins', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create({ title: 'Old title', model: 'old-model' });
    await store.append(c.id, user('u1'));
    const file = path.join(dir, `${c.id}.meta.json`);
    const behind = readFileSync(file, 'utf8');
    await store.setMeta(c.id, { title: 'New title', model: 'new-model' });
    await store.append(c.id, user('u2'));
    await store.append(c.id, { ...answer('a', '', 'streaming') });
    await store.checkpoint(c.id, 'a', { text: 'partial' });
    const truth = (await store.list())[0];
    assert.equal(truth?.messageCount, 3);
    const expect = async (what: string) => {
      const fresh = new ConversationStore(dir);
      assert.deepEqual((await fresh.list())[0], truth, `${what}: the list`);
      const page = await fresh.open(c.id);
      assert.deepEqual(
        [page?.meta.title, page?.meta.model, page?.meta.updatedAt, page?.total],
        ['New title', 'new-model', truth?.updatedAt, 3],
        `${what}: the conversation`,
      );
    };
    // As if the window died between writing the log and its metadata file.
    writeFileSync(file, behind);
    await expect('a metadata file behind its log');
    // A metadata file of an older version (no log size) that says something else.
    writeFileSync(
      file,
      JSON.stringify({
        v: 1,
        meta: { id: c.id, title: 'Wrong', model: 'wrong-model', createdAt: 1, updatedAt: 5 },
        messageCount: 99,
      }),
    );
    await expect('a metadata file that does not say when it was written');
    // Writes start from the log too: a rename keeps the log's model, and the count goes on from 3.
    writeFileSync(file, behind);
    await store.setMeta(c.id, { title: 'Renamed' });
    await store.append(c.id, user('u3'));
    const page = await new ConversationStore(dir).open(c.id);
    assert.deepEqual([page?.meta.title, page?.meta.model, page?.total], ['Renamed', 'new-model', 4]);
    assert.equal((await new ConversationStore(dir).list())[0]?.messageCount, 4);
  });

  it('migrates conversations of the format before logs, including a damaged file and a missing index', async () => {
    const messages = [user('u1', 'hello'), { ...answer('a1', 'half'), status: 'streaming' as const }];
    writeOldFormat(dir, 'c1', 'One', messages, 5000);
    writeOldFormat(dir, 'c2', 'Two', [user('x')], 6000);
    writeFileSync(path.join(dir, 'c3.json'), '{"id":"c3","title":');
    // No index.json: it may have been lost; the files alone count.
    const problems: StoreProblem[] = [];
    const store = new ConversationStore(dir, { onProblem: (p) => problems.push(p) });
    assert.deepEqual(
      (await store.list()).map((c) => [c.id, c.title, c.messageCount]),
      [
        ['c2', 'Two', 1],
        ['c1', 'One', 2],
      ],
    );
    const one = await store.load('c1');
    assert.deepEqual(
      one?.messages.map((m) => m.text),
      ['hello', 'half'],
    );
    assert.equal(one?.messages[1]?.status, 'cut', 'an answer streaming in the old file was interrupted long ago');
    assert.equal(one?.model, 'gpt-5');
    assert.equal(problems.length, 1);
    assert.equal(problems[0]?.kind, 'damaged');
    assert.ok(existsSync(path.join(dir, problems[0]?.setAsideAs ?? '')));
    const names = readdirSync(dir);
    assert.ok(
      !names.includes('c1.json') && !names.includes('c2.json') && !names.includes('index.json'),
      names.join(', '),
    );
  });

  it('finishes a migration cut short (new log written, old file still there) without duplicating', async () => {
    writeOldFormat(dir, 'c1', 'One', [user('u1')]);
    writeFileSync(
      path.join(dir, 'index.json'),
      JSON.stringify({ version: 1, conversations: [{ id: 'c1', title: 'One', updatedAt: 1000, messageCount: 1 }] }),
    );
    const first = new ConversationStore(dir);
    await first.list();
    await first.append('c1', user('u2'));
    // As if the process died after writing the log but before removing the old file.
    writeOldFormat(dir, 'c1', 'One', [user('u1')]);
    const store = new ConversationStore(dir);
    assert.deepEqual(
      (await store.list()).map((c) => c.messageCount),
      [2],
      'the newer log and metadata win',
    );
    assert.deepEqual(
      (await store.load('c1'))?.messages.map((m) => m.id),
      ['u1', 'u2'],
    );
    // And with the metadata file lost too, it is rebuilt from the log.
    writeOldFormat(dir, 'c1', 'One', [user('u1')]);
    rmSync(path.join(dir, 'c1.meta.json'));
    assert.deepEqual(
      (await new ConversationStore(dir).list()).map((c) => c.messageCount),
      [2],
    );
    assert.deepEqual(
      readdirSync(dir)
        .filter((n) => n.startsWith('c1'))
        .sort(),
      ['c1.log', 'c1.meta.json'],
    );
  });

  it('compacts a log whose dead records dominate, keeping every message', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    await store.append(c.id, user('u'));
    const chunk = 'y'.repeat(50_000);
    // Regenerated answers: each streamed (dead checkpoints), then removed (dead) but the last.
    for (let round = 0; round < 12; round++) {
      if (round) await store.truncateFrom(c.id, 'a');
      await store.append(c.id, answer('a', '', 'streaming'));
      for (let i = 0; i < 3; i++) await store.checkpoint(c.id, 'a', { text: chunk });
      await store.update(c.id, answer('a', `final ${round}`));
    }
    const log = path.join(dir, `${c.id}.log`);
    const before = statSync(log).size;
    assert.ok(before > 1024 * 1024);
    assert.deepEqual(
      (await store.load(c.id))?.messages.map((m) => m.text),
      ['text of u', 'final 11'],
    );
    const after = statSync(log).size;
    assert.ok(after < 2000, `compacted from ${before} to ${after} bytes`);
    assert.deepEqual(
      (await new ConversationStore(dir).load(c.id))?.messages.map((m) => m.text),
      ['text of u', 'final 11'],
    );
    await store.append(c.id, user('u2'));
    assert.equal((await store.open(c.id))?.total, 3);
  });

  it('never compacts a log that holds a record this version cannot read', async () => {
    const store = new ConversationStore(dir);
    const c = await store.create();
    await store.append(c.id, user('u'));
    const log = path.join(dir, `${c.id}.log`);
    const future = JSON.stringify({ k: 'pin', at: 3, id: 'u', note: 'a newer version wrote this' });
    appendFileSync(log, `${future}\n`);
    const chunk = 'y'.repeat(50_000);
    for (let round = 0; round < 12; round++) {
      if (round) await store.truncateFrom(c.id, 'a');
      await store.append(c.id, answer('a', '', 'streaming'));
      for (let i = 0; i < 3; i++) await store.checkpoint(c.id, 'a', { text: chunk });
      await store.update(c.id, answer('a', `final ${round}`));
    }
    const before = statSync(log).size;
    assert.deepEqual(
      (await store.load(c.id))?.messages.map((m) => m.text),
      ['text of u', 'final 11'],
    );
    assert.equal(statSync(log).size, before, 'not rewritten');
    assert.ok(readFileSync(log, 'utf8').includes(future));
  });

  it('refuses ids that could escape the folder', async () => {
    const store = new ConversationStore(dir);
    await assert.rejects(store.open('../x'), /Invalid conversation id/);
    await assert.rejects(store.delete('../x'), /Invalid conversation id/);
    await assert.rejects(store.append('../../evil', user('u')), /Invalid conversation id/);
  });

  it('writeFileAtomic never overwrites when asked not to, and leaves no temporary files', async () => {
    const file = path.join(dir, 'out.txt');
    await writeFileAtomic(file, 'first', { overwrite: false });
    await assert.rejects(writeFileAtomic(file, 'second', { overwrite: false }), /already exists/);
    assert.equal(readFileSync(file, 'utf8'), 'first');
    await writeFileAtomic(file, 'third', { overwrite: true });
    assert.equal(readFileSync(file, 'utf8'), 'third');
    assert.deepEqual(readdirSync(dir), ['out.txt']);
  });

  it('exports Markdown with attachments, reasoning and cut answers, and views without context', () => {
    const md = toMarkdown({
      id: 'x',
      title: 'Trip',
      createdAt: 0,
      updatedAt: 0,
      messages: [
        {
          id: 'u',
          role: 'user',
          text: 'Plan it',
          status: 'done',
          createdAt: 0,
          attachments: [{ label: 'notes.md', chars: 10, truncated: true }],
          context: 'secret context',
        },
        {
          id: 'a',
          role: 'assistant',
          text: 'Day 1…',
          reasoning: 'think',
          status: 'cut',
          model: 'gpt-5',
          error: { kind: 'timeout', message: 'idle' },
          createdAt: 0,
        },
      ],
    });
    assert.match(md, /^# Trip/);
    assert.match(md, /> Attached: notes\.md \(cut to fit\)/);
    assert.match(md, /## gpt-5/);
    assert.match(md, /<summary>Thinking<\/summary>/);
    assert.match(md, /_\(cut off: idle\)_/);
    assert.equal(
      toView({ id: 'u', role: 'user', text: 't', status: 'done', createdAt: 0, context: 'c' }).hasOwnProperty(
        'context',
      ),
      false,
    );
  });

  it('makes titles from the first line', () => {
    assert.equal(titleFrom('  Hello world\nmore'), 'Hello world');
    assert.equal(titleFrom(''), 'New chat');
    assert.equal(titleFrom('x'.repeat(100)).length, 58);
  });
});
