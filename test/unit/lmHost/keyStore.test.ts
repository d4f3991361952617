/**
 * The named keys in the host (fakeVscode.ts): the single key of earlier versions becomes the first
 * named key with nothing to do and stays under its old secret id (so an older window still finds
 * it), names are unique, and a removed key takes its secret and its model choices with it.
 */
// First: answers `vscode` for every host module imported after it.
import '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KeyStore } from '../../../src/host/secrets';

/** VS Code's SecretStorage, in memory, with its change event. */
function secretStorage() {
  const values = new Map<string, string>();
  const listeners = new Set<(e: { key: string }) => void>();
  const fire = (key: string) => listeners.forEach((l) => l({ key }));
  return {
    values,
    get: async (key: string) => values.get(key),
    store: async (key: string, value: string) => void (values.set(key, value), fire(key)),
    delete: async (key: string) => void (values.delete(key), fire(key)),
    keys: async () => [...values.keys()],
    onDidChange: (l: (e: { key: string }) => void) => (listeners.add(l), { dispose: () => listeners.delete(l) }),
  };
}

describe('Named API keys in the host', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'keys-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const storeOf = (secrets: ReturnType<typeof secretStorage>) => new KeyStore(secrets as never, dir);

  it('takes the key of a version with one key in as "default", under its old id', async () => {
    const secrets = secretStorage();
    secrets.values.set('modelGateway.apiKey', 'sk-old-key-1234');
    const keys = storeOf(secrets);
    assert.deepEqual(await keys.list(), [{ id: 'legacy', name: 'default' }]);
    assert.equal(await keys.get(), 'sk-old-key-1234');
    assert.deepEqual(await keys.shown(), [{ id: 'legacy', name: 'default', masked: '••••1234' }]);
    const added = await keys.add('team-claude', 'sk-team-key-9876');
    assert.notEqual(added.id, 'legacy');
    assert.equal(
      secrets.values.get('modelGateway.apiKey'),
      'sk-old-key-1234',
      'an older window still reads the first key there',
    );
    assert.equal(await keys.secret(added.id), 'sk-team-key-9876');
    // Names and order only: no secret reaches the shared file.
    const file = readFileSync(path.join(dir, 'keys.json'), 'utf8');
    assert.ok(!file.includes('sk-'), file);
    keys.dispose();
  });

  it('has no key until one is set, and gives the first key set the old id', async () => {
    const secrets = secretStorage();
    const keys = storeOf(secrets);
    assert.deepEqual(await keys.list(), []);
    assert.equal(await keys.has(), false);
    const first = await keys.set('sk-first-key-0000');
    assert.deepEqual(first, { id: 'legacy', name: 'default' });
    assert.equal(secrets.values.get('modelGateway.apiKey'), 'sk-first-key-0000');
    keys.dispose();
  });

  it('refuses a name that is taken or badly formed, and keeps the list as it was', async () => {
    const keys = storeOf(secretStorage());
    await keys.add('default', 'sk-a');
    await assert.rejects(keys.add('DEFAULT', 'sk-b'), /already/);
    await assert.rejects(keys.add('', 'sk-b'));
    const team = await keys.add('team', 'sk-c');
    await assert.rejects(keys.rename(team.id, 'Default'), /already/);
    await keys.rename(team.id, 'team-claude');
    assert.deepEqual(
      (await keys.list()).map((k) => k.name),
      ['default', 'team-claude'],
    );
    keys.dispose();
  });

  it('reorders, and removes a key with its secret and its model choices', async () => {
    const secrets = secretStorage();
    const keys = storeOf(secrets);
    await keys.add('default', 'sk-a');
    const team = await keys.add('team', 'sk-c');
    await keys.chooseForModel('gpt-4o-mini', team.id);
    await keys.move(team.id, -1);
    assert.deepEqual(
      (await keys.list()).map((k) => k.name),
      ['team', 'default'],
    );
    assert.equal(await keys.get(), 'sk-c', 'the first key is the first in the order');
    await keys.remove(team.id);
    assert.deepEqual(
      (await keys.list()).map((k) => k.name),
      ['default'],
    );
    assert.deepEqual(await keys.modelChoices(), {});
    assert.ok(![...secrets.values.values()].includes('sk-c'));
    keys.dispose();
  });

  it('sees a key another window of an older version set under the old id after this one removed it', async () => {
    const secrets = secretStorage();
    const keys = storeOf(secrets);
    await keys.add('default', 'sk-a');
    await keys.add('team', 'sk-c');
    await keys.remove('legacy');
    assert.deepEqual(
      (await keys.list()).map((k) => k.name),
      ['team'],
    );
    secrets.values.set('modelGateway.apiKey', 'sk-set-by-an-old-window');
    assert.deepEqual(
      (await keys.list()).map((k) => k.name),
      ['default', 'team'],
    );
    keys.dispose();
  });

  it('reads whether a key is set once until the keys change, here or in another window', async () => {
    const secrets = secretStorage();
    let reads = 0;
    const counted = { ...secrets, get: (key: string) => (reads++, secrets.get(key)) };
    const keys = new KeyStore(counted as never, dir);
    assert.equal(await keys.has(), false);
    assert.equal(await keys.has(), false);
    const added = await keys.add('default', 'sk-a');
    assert.equal(await keys.has(), true, 'a key set here is seen at once');
    const before = reads;
    await Promise.all([keys.has(), keys.has(), keys.has()]);
    assert.equal(reads, before, 'asked again with nothing changed, SecretStorage is not read again');
    await secrets.delete(`modelGateway.apiKey${added.id === 'legacy' ? '' : `.${added.id}`}`);
    assert.equal(await keys.has(), false, 'a key removed by another window is seen at once');
    keys.dispose();
  });
});
