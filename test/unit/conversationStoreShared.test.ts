import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { constants, promises as fsp } from 'node:fs';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import { type StoredMessage } from '../../src/core/chat/store/log';
import { sha256Hex } from '../../src/core/chat/images';
import { FileLock } from '../../src/core/chat/store/lock';
import { until } from '../support/until';
import type { FreezeResult } from './fixtures/storeFreezeWorker';
import type { SoakResult } from './fixtures/storeSoakWorker';

/** Two instances on one folder stand for two VS Code windows of one profile. */
const user = (id: string, text = `text of ${id}`, images?: StoredMessage['images']): StoredMessage => ({
  id,
  role: 'user',
  text,
  status: 'done',
  createdAt: 1,
  ...(images ? { images } : {}),
});

function runWorker(
  dir: string,
  name: string,
  rounds: number,
  shared: string,
): Promise<{
  kept: Array<{ id: string; title: string; texts: string[] }>;
  deleted: string[];
  sharedIds: string[];
  heard: number;
}> {
  return runFixture('storeWorker.ts', dir, name, rounds, shared);
}

/** Runs a fixture script in a process of its own and returns what its last line says (JSON). */
function runFixture<T>(script: string, dir: string, name: string, rounds: number, shared: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'fixtures', script), dir, name, String(rounds), shared],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{'))
        reject(new Error(`worker ${name} failed (exit ${code}): ${err.slice(-2000)}`));
      else resolve(JSON.parse(last) as T);
    });
  });
}

/**
 * A watcher takes its first look at the folder a moment after the first listener: until it has,
 * a change is part of what it starts from. Changes a conversation until the listener has heard one.
 */
async function watching(other: ConversationStore, heard: () => boolean): Promise<void> {
  const c = await other.create({ title: 'warm-up' });
  let n = 0;
  await until(async () => {
    if (heard()) return true;
    await other.setMeta(c.id, { model: `m${n++}` });
    return heard();
  }, 'the watcher to start');
}

describe('conversation store shared by windows', function () {
  this.timeout(120_000);
  let dir: string;
  const stores: ConversationStore[] = [];
  const open = (options: ConstructorParameters<typeof ConversationStore>[1] = {}) => {
    const store = new ConversationStore(dir, options);
    stores.push(store);
    return store;
  };
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'conv-shared-'));
  });
  afterEach(() => {
    for (const s of stores.splice(0)) s.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('interleaved creates, renames, deletes and appends from two instances lose nothing', async () => {
    const a = open();
    const b = open();
    const shared = await a.create({ title: 'Shared' });
    const work = async (store: ConversationStore, name: string) => {
      const kept: string[] = [];
      for (let i = 0; i < 15; i++) {
        const c = await store.create({ title: `${name}${i}` });
        await store.append(c.id, user(`${name}-${i}`));
        await store.append(shared.id, user(`${name}-s${i}`));
        await store.setMeta(c.id, { title: `${name}${i} renamed` });
        if (i % 4 === 3) await store.delete(c.id);
        else kept.push(`${name}${i} renamed`);
      }
      return kept;
    };
    const [keptA, keptB] = await Promise.all([work(a, 'a'), work(b, 'b')]);
    const expected = [...keptA, ...keptB, 'Shared'].sort();
    assert.deepEqual((await a.list()).map((c) => c.title).sort(), expected);
    assert.deepEqual((await b.list()).map((c) => c.title).sort(), expected);
    const messages = (await b.load(shared.id))!.messages.map((m) => m.id);
    assert.equal(messages.length, 30);
    assert.deepEqual(
      messages.filter((id) => id.startsWith('a-')),
      Array.from({ length: 15 }, (_, i) => `a-s${i}`),
    );
    assert.deepEqual(
      messages.filter((id) => id.startsWith('b-')),
      Array.from({ length: 15 }, (_, i) => `b-s${i}`),
    );
    assert.equal((await a.list()).find((c) => c.id === shared.id)?.messageCount, 30);
  });

  it('two processes hammering one folder lose nothing and resurrect nothing', async () => {
    const setup = open();
    const shared = await setup.create({ title: 'Shared' });
    const rounds = 12;
    const [one, two] = await Promise.all([
      runWorker(dir, 'one', rounds, shared.id),
      runWorker(dir, 'two', rounds, shared.id),
    ]);
    const store = open();
    const list = await store.list();
    const byId = new Map(list.map((c) => [c.id, c]));
    for (const kept of [...one.kept, ...two.kept]) {
      assert.equal(byId.get(kept.id)?.title, kept.title);
      assert.deepEqual(
        (await store.load(kept.id))?.messages.map((m) => m.text),
        kept.texts,
      );
    }
    for (const id of [...one.deleted, ...two.deleted]) assert.equal(byId.has(id), false, `deleted ${id} is not listed`);
    assert.equal(list.length, one.kept.length + two.kept.length + 1);
    const sharedMessages = (await store.load(shared.id))!.messages.map((m) => m.id);
    assert.deepEqual(
      sharedMessages.filter((id) => id.startsWith('one-')),
      one.sharedIds,
    );
    assert.deepEqual(
      sharedMessages.filter((id) => id.startsWith('two-')),
      two.sharedIds,
    );
    assert.equal(sharedMessages.length, 2 * rounds);
    // Each worker also listened (and exited all the same: the watcher keeps no process alive).
    assert.ok(one.heard > 0 && two.heard > 0, `heard ${one.heard} and ${two.heard} changes`);
    assert.ok(
      readdirSync(dir).every((n) => !n.endsWith('.tmp') && !n.includes('.lock')),
      readdirSync(dir).join(', '),
    );
  });

  it('soak: three processes writing, deleting, pruning and writing records of a future shape lose nothing and resurrect nothing', async () => {
    const setup = open();
    const shared = await setup.create({ title: 'Shared' });
    const rounds = 6;
    const names = ['one', 'two', 'three'];
    const results = await Promise.all(
      names.map((name) => runFixture<SoakResult>('storeSoakWorker.ts', dir, name, rounds, shared.id)),
    );
    const problems: string[] = [];
    const store = open({ imageGraceMs: 60 * 60 * 1000, onProblem: (p) => problems.push(p.message) });
    const list = await store.list();
    const byId = new Map(list.map((c) => [c.id, c]));
    const logText = (id: string) => readFileSync(path.join(dir, `${id}.log`), 'utf8');
    const note = (text: string) => `"note":"${text}"`;
    for (const result of results) {
      for (const kept of result.kept) {
        assert.equal(byId.get(kept.id)?.title, kept.title);
        assert.deepEqual(
          (await store.load(kept.id))?.messages.map((m) => m.text),
          kept.texts,
        );
        for (const n of kept.future)
          assert.ok(logText(kept.id).includes(note(n)), `the future record ${n} is still on disk`);
      }
      for (const id of result.deleted) {
        assert.equal(byId.has(id), false, `deleted ${id} is not listed`);
        assert.ok(!existsSync(path.join(dir, `${id}.log`)), `deleted ${id} has no log`);
      }
    }
    assert.equal(list.length, results.reduce((n, r) => n + r.kept.length, 0) + 1);
    const sharedMessages = (await store.load(shared.id))!.messages.map((m) => m.id);
    for (const [i, result] of results.entries()) {
      assert.deepEqual(
        sharedMessages.filter((id) => id.startsWith(`${names[i]}-`)),
        result.sharedIds,
      );
      for (const n of result.sharedFuture)
        assert.ok(logText(shared.id).includes(note(n)), `the future record ${n} is still in the shared log`);
    }
    assert.equal(sharedMessages.length, names.length * rounds);
    // Every image a kept conversation refers to is there; every other one (old by now) goes with one more prune.
    await store.pruneImages();
    assert.deepEqual(
      readdirSync(path.join(dir, 'images')).sort(),
      results.flatMap((r) => r.images.map((id) => `${id}.png`)).sort(),
    );
    assert.ok(
      readdirSync(dir).every((n) => !n.endsWith('.tmp') && !n.includes('.lock') && !n.includes('.damaged')),
      readdirSync(dir).join(', '),
    );
    assert.ok(
      problems.every((p) => /newer version/.test(p)),
      problems.join('\n'),
    );
  });

  it('soak: a process frozen (SIGSTOP) past the lease just before its write loses nothing of the others and writes nothing when it resumes', async function () {
    if (process.platform === 'win32') this.skip();
    const leaseMs = 1500;
    const setup = open({ lockStaleMs: leaseMs });
    const c = await setup.create({ title: 'Shared' });
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'fixtures', 'storeFreezeWorker.ts'), dir, c.id, String(leaseMs)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await until(() => out.includes('frozen\n') || child.exitCode !== null, 'the worker to freeze');
    assert.ok(out.includes('frozen'), err);
    // Another window writes while the frozen one holds the lock: it takes it over once it saw it unchanged for the lease.
    const other = open({ lockStaleMs: leaseMs });
    assert.equal(await other.append(c.id, user('other-1')), true);
    assert.equal(await other.append(c.id, user('other-2')), true);
    child.kill('SIGCONT');
    assert.equal(await exited, 0, err);
    const result = JSON.parse(out.trim().split('\n').pop() ?? '') as FreezeResult;
    assert.equal(result.outcomes['frozen-0'], true);
    assert.equal(result.outcomes['frozen-1'], 'leaseLost', 'the frozen process learns that its lease was lost');
    assert.equal(result.outcomes['frozen-2'], true, 'and carries on with a fresh lease');
    const ids = (await open().load(c.id))?.messages.map((m) => m.id);
    assert.deepEqual(ids, ['frozen-0', 'other-1', 'other-2', 'frozen-2'], 'nothing lost, nothing of the stale write');
    assert.ok(!readFileSync(path.join(dir, `${c.id}.log`), 'utf8').includes('"frozen-1"'));
  });

  it('tells each instance of the other one’s changes', async () => {
    const a = open({ watchIntervalMs: 500 });
    const b = open({ watchIntervalMs: 500 });
    const seen: string[] = [];
    const subscription = a.onDidChange((e) => {
      if (e.ids !== 'all') seen.push(...e.ids);
    });
    await watching(b, () => seen.length > 0);
    seen.length = 0;
    const c = await b.create({ title: 'From b' });
    await until(() => seen.includes(c.id), 'a to hear of b’s new conversation');
    assert.deepEqual((await a.list()).map((s) => s.title).sort(), ['From b', 'warm-up']);
    await b.append(c.id, { id: 'ans', role: 'assistant', text: '', status: 'streaming', createdAt: 1 });
    await until(() => seen.includes(c.id), 'a to hear of b’s append');
    seen.length = 0;
    await b.checkpoint(c.id, 'ans', { text: 'x' });
    await until(() => seen.includes(c.id), 'a to hear of b’s checkpoint');
    seen.length = 0;
    await b.delete(c.id);
    await until(() => seen.includes(c.id), 'a to hear of b’s delete');
    assert.deepEqual(
      (await a.list()).map((s) => s.title),
      ['warm-up'],
    );
    subscription.dispose();
  });

  it('tells of other windows’ changes by polling alone where fs.watch is not available', async () => {
    const a = open({ watch: 'poll', watchIntervalMs: 200 });
    const b = open();
    const changes: string[][] = [];
    const subscription = a.onDidChange((e) => changes.push(e.ids === 'all' ? ['all'] : e.ids));
    await watching(b, () => changes.length > 0);
    const c = await b.create({ title: 'Polled' });
    await until(() => changes.some((ids) => ids.includes(c.id)), 'the poll to notice the new conversation');
    changes.length = 0;
    await b.setMeta(c.id, { title: 'Renamed' });
    await until(() => changes.some((ids) => ids.includes(c.id)), 'the poll to notice the rename');
    subscription.dispose();
  });

  it('a deleted conversation stays deleted: later writes from any instance write nothing', async () => {
    const a = open();
    const b = open();
    const c = await a.create({ title: 'Doomed' });
    await a.append(c.id, { id: 'ans', role: 'assistant', text: '', status: 'streaming', createdAt: 1 });
    await b.delete(c.id);
    const before = readdirSync(dir).sort();
    for (const store of [a, b]) {
      assert.equal(await store.append(c.id, user('late')), false);
      assert.equal(await store.checkpoint(c.id, 'ans', { text: 'late text' }), false);
      assert.equal(
        await store.update(c.id, { id: 'ans', role: 'assistant', text: 'final', status: 'done', createdAt: 1 }),
        false,
      );
      assert.equal(await store.setMeta(c.id, { title: 'Back from the dead' }), false);
      assert.equal(await store.truncateFrom(c.id, 'ans'), false);
    }
    assert.deepEqual(readdirSync(dir).sort(), before);
    assert.equal(await open().open(c.id), undefined);
    assert.deepEqual(await a.list(), []);
  });

  it('prune keeps images any conversation refers to (also one the other window created after) and recent ones', async () => {
    const a = open({ imageGraceMs: 60 * 60 * 1000 });
    const b = open({ imageGraceMs: 60 * 60 * 1000 });
    const bytes = (n: number) => Buffer.from(`not really an image ${n}`);
    const ids = [1, 2, 3, 4].map((n) => sha256Hex(bytes(n)));
    for (const n of [1, 2, 3, 4]) await a.images.put(bytes(n), 'image/png');
    const ref = (id: string) => ({ id, name: 'x.png', mediaType: 'image/png' as const, bytes: 1 });
    const inA = await a.create();
    await a.append(inA.id, user('u', 'one', [ref(ids[0]!)]));
    await a.list();
    // Created by the other window after this one listed: still counted.
    const inB = await b.create();
    await b.append(inB.id, user('u', 'two', [ref(ids[1]!)]));
    // Image 3 was attached long ago and is used by nothing; image 4 is unused but recent (pending elsewhere).
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    for (const id of [ids[0]!, ids[1]!, ids[2]!]) utimesSync(path.join(dir, 'images', `${id}.png`), old, old);
    assert.equal(await a.pruneImages(), 1);
    const left = readdirSync(path.join(dir, 'images')).sort();
    assert.deepEqual(left, [ids[0], ids[1], ids[3]].map((id) => `${id}.png`).sort());
    // Putting an image again refreshes its time, so a pending attachment in another window survives.
    utimesSync(path.join(dir, 'images', `${ids[3]}.png`), old, old);
    await b.images.put(bytes(4), 'image/png');
    assert.ok(Date.now() - statSync(path.join(dir, 'images', `${ids[3]}.png`)).mtimeMs < 60_000);
    assert.equal(await a.pruneImages(), 0);
  });

  it('prune reads the store without the lock: another window writes meanwhile, and an image it refers to is kept', async function () {
    if (process.platform === 'win32') this.skip();
    const a = open({ imageGraceMs: 0 });
    const b = open({ imageGraceMs: 0 });
    const kept = sha256Hex(Buffer.from('attached while pruning'));
    const keptToo = sha256Hex(Buffer.from('attached in a new chat while pruning'));
    const orphan = sha256Hex(Buffer.from('used by nothing'));
    await a.images.put(Buffer.from('attached while pruning'), 'image/png');
    await a.images.put(Buffer.from('attached in a new chat while pruning'), 'image/png');
    await a.images.put(Buffer.from('used by nothing'), 'image/png');
    const c = await b.create({ title: 'Busy' });
    // A log that is a named pipe: reading it waits until the test lets it end, which holds the
    // prune in the middle of reading the store (as a slow disk or a large store would).
    const fifo = path.join(dir, '00000000-slow.log');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
    const pruning = a.pruneImages();
    let writer: Awaited<ReturnType<typeof fsp.open>> | undefined;
    try {
      // The pipe's writing end opens without waiting only once the prune has opened it to read.
      await until(async () => {
        writer = await fsp.open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
        return writer !== undefined;
      }, 'the prune to be reading the store');
      let appended = false;
      const ref = (id: string) => [{ id, name: 'k.png', mediaType: 'image/png' as const, bytes: 1 }];
      const append = (async () => {
        appended = await b.append(c.id, user('late', 'look', ref(kept)));
        // A conversation made after the prune listed the folder, too long to be read under the
        // lock: the prune lets the lock go, reads it, and only then removes anything.
        const made = await b.create({ title: 'New while pruning' });
        appended = appended && (await b.append(made.id, user('new', `look too ${'.'.repeat(300_000)}`, ref(keptToo))));
      })();
      await until(() => appended, 'the other window to write while the prune reads');
      await append;
    } finally {
      rmSync(fifo, { force: true });
      await writer?.close();
    }
    assert.equal(await pruning, 1);
    assert.deepEqual(readdirSync(path.join(dir, 'images')).sort(), [`${kept}.png`, `${keptToo}.png`].sort());
    assert.ok(!readdirSync(path.join(dir, 'images')).includes(`${orphan}.png`));
  });

  it('prune removes nothing when a file of the store cannot be read', async () => {
    const a = open({ imageGraceMs: 0 });
    await a.images.put(Buffer.from('orphan'), 'image/png');
    await a.create();
    // A name that cannot be read as a file (reading it fails with EISDIR), even for root.
    const stuck = path.join(dir, 'stuck.log');
    mkdirSync(stuck);
    const problems: string[] = [];
    const b = open({ imageGraceMs: 0, onProblem: (p) => problems.push(p.message) });
    assert.equal(await b.pruneImages(), 0);
    assert.equal(readdirSync(path.join(dir, 'images')).length, 1);
    assert.match(problems[0] ?? '', /not cleaned up: stuck\.log could not be read/);
    rmSync(stuck, { recursive: true });
    assert.equal(await b.pruneImages(), 1);
  });

  it('the lock is exclusive across instances and a dead window’s lock is taken over', async () => {
    const file = path.join(dir, 'test.lock');
    const one = new FileLock(file, { staleMs: 60_000 });
    const two = new FileLock(file, { staleMs: 60_000 });
    let inside = 0;
    let most = 0;
    const section = async () => {
      inside++;
      most = Math.max(most, inside);
      await new Promise((resolve) => setImmediate(resolve));
      inside--;
    };
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).run(section)));
    assert.equal(most, 1);
    // A lock file left by a process that died long ago.
    writeFileSync(file, '999999 0 dead');
    const long = new Date(Date.now() - 120_000);
    utimesSync(file, long, long);
    assert.equal(await two.run(async () => 'taken'), 'taken');
    assert.deepEqual(readdirSync(dir), []);
    // A fresh lock of a process that no longer exists on this machine: taken over without waiting `staleMs`.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    writeFileSync(file, `${gone} ${os.hostname()} ${Date.now()} dead`);
    const recent = new Date(Date.now() - 5_000);
    utimesSync(file, recent, recent);
    assert.equal(
      await new FileLock(file, { staleMs: 10 * 60_000, timeoutMs: 60_000 }).run(async () => 'taken'),
      'taken',
    );
    // A live owner's lock is respected: waiting for it times out.
    writeFileSync(file, `${process.pid} ${os.hostname()} ${Date.now()} alive`);
    await assert.rejects(
      new FileLock(file, { staleMs: 10 * 60_000, timeoutMs: 300 }).run(async () => 'stolen'),
      /held the chat history lock/,
    );
  });
});
