/**
 * Every outcome of a store write told as it happened: once a conversation's log write is durable,
 * the change happened, whatever becomes of its metadata file (readers rebuild that from the log).
 */
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import { type StoreProblem } from '../../src/core/chat/store/core';
import { type StoredMessage } from '../../src/core/chat/store/log';
import { StoreCore } from '../../src/core/chat/store/core';

const user = (id: string): StoredMessage => ({ id, role: 'user', text: `text of ${id}`, status: 'done', createdAt: 1 });

describe('store write outcomes', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'store-outcomes-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a metadata write that fails after the log write is a metadata problem, never "nothing was changed"', async () => {
    const problems: StoreProblem[] = [];
    const store = new ConversationStore(dir, { watch: 'poll', onProblem: (p) => problems.push(p) });
    try {
      const c = await store.create({ title: 'kept' });
      // The next metadata write fails (a full disk, a virus scanner holding the file).
      const writeMeta = StoreCore.prototype.writeMeta;
      StoreCore.prototype.writeMeta = () => Promise.reject(new Error('ENOSPC: no space left on device'));
      let appended: boolean;
      try {
        appended = await store.append(c.id, user('q1'));
      } finally {
        StoreCore.prototype.writeMeta = writeMeta;
      }
      assert.equal(appended, true, 'the message is stored');
      assert.ok(readFileSync(path.join(dir, `${c.id}.log`), 'utf8').includes('"q1"'));
      assert.ok(
        problems.some((p) => p.kind === 'io' && /was saved, but its details file could not be updated/.test(p.message)),
        JSON.stringify(problems),
      );
      // The log wins: the metadata file is rebuilt from it, with the message counted.
      assert.deepEqual(
        (await store.load(c.id))?.messages.map((m) => m.id),
        ['q1'],
      );
      assert.equal((await store.list()).find((s) => s.id === c.id)?.messageCount, 1);
    } finally {
      store.dispose();
    }
  });
});
