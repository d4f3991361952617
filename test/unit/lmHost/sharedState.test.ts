/**
 * State every VS Code window shares (the second provider's file list; refused protocols are tested
 * in chatHost/protocolSwitch.test.ts): changed under the cross-process lock, so two windows
 * changing it at once lose nothing, and taken over once from the per-window global state.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { SharedJsonFile } from '../../../src/core/sharedState';
import { KimiFileList } from '../../../src/host/tools/kimiFiles';

class Memento {
  readonly values = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, JSON.parse(JSON.stringify(value)));
  }
}

describe('state shared by windows', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'shared-state-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const window = (state = new Memento()) => ({
    globalState: state as unknown as vscode.Memento,
    globalStorageUri: { fsPath: dir } as vscode.Uri,
  });
  const file = (n: number) => ({ id: `file-${n}`, filename: `doc-${n}.pdf`, createdAt: 1_700_000_000_000 + n });

  it('two windows extracting files at once both keep every file in the list', async () => {
    const a = new KimiFileList(window());
    const b = new KimiFileList(window());
    await Promise.all(Array.from({ length: 16 }, (_, n) => (n % 2 ? a : b).add('sk-key', file(n))));
    const ids = (await a.list('sk-key')).map((f) => f.id).sort();
    assert.deepEqual(ids, Array.from({ length: 16 }, (_, n) => `file-${n}`).sort());
    assert.deepEqual(await b.list('sk-other'), [], 'the list is per key');
    assert.ok(
      !readFileSync(path.join(dir, 'kimi-files.json'), 'utf8').includes('sk-key'),
      'the key itself is never stored',
    );
  });

  it('takes over the list an older version kept in the global state, once, and drops the old copy', async () => {
    const old = new KimiFileList(window());
    await old.add('sk-key', file(1));
    const fingerprinted = JSON.parse(readFileSync(path.join(dir, 'kimi-files.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    rmSync(path.join(dir, 'kimi-files.json'));
    const state = new Memento();
    await state.update('kimi.files', fingerprinted);
    const list = new KimiFileList(window(state));
    assert.deepEqual(
      (await list.list('sk-key')).map((f) => f.id),
      ['file-1'],
    );
    assert.equal(state.get('kimi.files'), undefined);
    // A second window with a stale cached copy does not put it back over newer changes.
    await list.remove('sk-key', 'file-1');
    const stale = new Memento();
    await stale.update('kimi.files', fingerprinted);
    assert.deepEqual(await new KimiFileList(window(stale)).list('sk-key'), []);
  });

  it('a document that does not fit reads as empty and is replaced by the next change', async () => {
    const doc = new SharedJsonFile<number[]>(
      path.join(dir, 'numbers.json'),
      (raw) => (Array.isArray(raw) && raw.every((n) => typeof n === 'number') ? raw : undefined),
      () => [],
    );
    await doc.update(() => [1]);
    const other = new SharedJsonFile<string>(
      path.join(dir, 'numbers.json'),
      (raw) => (typeof raw === 'string' ? raw : undefined),
      () => 'empty',
    );
    assert.equal(await other.read(), 'empty');
    assert.deepEqual(await doc.update((n) => [...n, 2]), [1, 2]);
  });
});
