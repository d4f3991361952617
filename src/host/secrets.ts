import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { maskKey } from '../core/config';
import { GatewayError } from '../core/errors';
import {
  emptyKeyList,
  freeKeyName,
  keyNameProblem,
  LEGACY_KEY_ID,
  moveKey,
  parseKeyList,
  withoutKey,
  type KeyEntry,
  type KeyList,
} from '../core/keys';
import { SharedJsonFile } from '../core/sharedState';
import { words } from '../shared/words';

/** Where versions with a single key kept it; the first named key keeps it there (see secretId). */
const LEGACY_SECRET_ID = 'modelGateway.apiKey';
const SECRET_PREFIX = 'modelGateway.apiKey.';

/**
 * The legacy key's secret stays under the old id, so a window still running a version with one key
 * keeps working with it; every other key has its own id.
 */
function secretId(keyId: string): string {
  return keyId === LEGACY_KEY_ID ? LEGACY_SECRET_ID : `${SECRET_PREFIX}${keyId}`;
}

/** A named key with its masked form (`••••` and the last four characters): never the key itself. */
export interface KeyShown extends KeyEntry {
  masked: string;
}

/**
 * The API keys live only in SecretStorage. This is the one place that reads or writes them; the
 * rest of the extension asks for one at the moment of a request and never stores or logs it. Their
 * names, order and the per-model choices are in a small file shared by the profile's windows.
 */
export class KeyStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];
  private readonly doc: SharedJsonFile<KeyList>;
  /**
   * Whether a key is set, as last read; forgotten at every change. VS Code's chat asks it each time
   * it lists the models (the Language Models editor, the model picker), and a SecretStorage read
   * is a round trip to the workbench that took 60-350 ms on a busy machine.
   */
  private present: Promise<boolean> | undefined;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    globalStorage: string,
  ) {
    this.doc = new SharedJsonFile(path.join(globalStorage, 'keys.json'), parseKeyList, emptyKeyList);
    // Another window of the same profile may set or remove a key too.
    this.subscriptions = [
      secrets.onDidChange((e) => {
        if (e.key === LEGACY_SECRET_ID || e.key.startsWith(SECRET_PREFIX)) this.changed.fire();
      }),
      this.changed.event(() => (this.present = undefined)),
    ];
  }

  /**
   * The keys in the user's order. A key stored under the old id that the list does not name (this
   * version's first start, or a version with one key set it since) is taken in as the first named
   * key, "default", with nothing for the user to do.
   */
  async list(): Promise<KeyEntry[]> {
    return (await this.document()).keys;
  }

  /** The keys with their masked form, in order; a key whose secret is gone (removed elsewhere) is left out. */
  async shown(): Promise<KeyShown[]> {
    const out: KeyShown[] = [];
    for (const key of await this.list()) {
      const secret = await this.secret(key.id);
      if (secret !== undefined) out.push({ ...key, masked: maskKey(secret) });
    }
    return out;
  }

  /** The model → key choices the user made. */
  async modelChoices(): Promise<Record<string, string>> {
    return (await this.document()).modelKeys;
  }

  async secret(keyId: string): Promise<string | undefined> {
    return Promise.resolve(this.secrets.get(secretId(keyId)));
  }

  /** The first key's secret. */
  async get(): Promise<string | undefined> {
    const first = (await this.list())[0];
    return first ? this.secret(first.id) : undefined;
  }

  has(): Promise<boolean> {
    if (this.present) return this.present;
    const reading = this.get().then((key) => key !== undefined);
    this.present = reading;
    // A failed read is not remembered: the next call reads again.
    reading.catch(() => {
      if (this.present === reading) this.present = undefined;
    });
    return reading;
  }

  /** The first key, masked. */
  async masked(): Promise<string | undefined> {
    const key = await this.get();
    return key === undefined ? undefined : maskKey(key);
  }

  /**
   * Adds a key under `name` (validated: unique, see core/keys.ts). The first key ever added takes
   * the old id, so versions with one key see it too. Returns the new key's entry.
   */
  async add(name: string, secret: string): Promise<KeyEntry> {
    let entry: KeyEntry | undefined;
    await this.doc.update((current) => {
      const problem = keyNameProblem(name, current.keys);
      if (problem) throw new GatewayError('badRequest', problem);
      const id = current.keys.some((k) => k.id === LEGACY_KEY_ID) ? randomUUID() : LEGACY_KEY_ID;
      entry = { id, name: name.trim() };
      return { ...current, keys: [...current.keys, entry] };
    });
    await this.secrets.store(secretId((entry as KeyEntry).id), secret);
    this.changed.fire();
    return entry as KeyEntry;
  }

  /** Replaces the secret of an existing key; with no key at all, adds it as "default". */
  async set(secret: string, keyId?: string): Promise<KeyEntry> {
    const keys = await this.list();
    const target = keys.find((k) => k.id === keyId) ?? (keyId === undefined ? keys[0] : undefined);
    if (!target) {
      if (keyId !== undefined) throw new GatewayError('badRequest', words('That key was removed in the meantime.'));
      return this.add(freeKeyName('default', keys), secret);
    }
    await this.secrets.store(secretId(target.id), secret);
    this.changed.fire();
    return target;
  }

  async rename(keyId: string, name: string): Promise<void> {
    await this.doc.update((current) => {
      const problem = keyNameProblem(name, current.keys, keyId);
      if (problem) throw new GatewayError('badRequest', problem);
      return { ...current, keys: current.keys.map((k) => (k.id === keyId ? { ...k, name: name.trim() } : k)) };
    });
    this.changed.fire();
  }

  async move(keyId: string, delta: -1 | 1): Promise<void> {
    await this.doc.update((current) => moveKey(current, keyId, delta));
    this.changed.fire();
  }

  /** Forgets the key: its secret, its entry and the model choices that named it. */
  async remove(keyId: string): Promise<void> {
    // The secret first: an entry without its secret is skipped, an old-id secret without its entry would be taken in again.
    await this.secrets.delete(secretId(keyId));
    await this.doc.update((current) => withoutKey(current, keyId));
    this.changed.fire();
  }

  /** Removes every key. */
  async clear(): Promise<void> {
    for (const key of await this.list()) await this.remove(key.id);
    // A key a version with one key stored after this list was read.
    await this.secrets.delete(LEGACY_SECRET_ID);
    this.changed.fire();
  }

  /** Calls `modelId` with `keyId` from now on; undefined goes back to the first key that lists it. */
  async chooseForModel(modelId: string, keyId: string | undefined): Promise<void> {
    await this.doc.update((current) => {
      const modelKeys = { ...current.modelKeys };
      if (keyId === undefined) delete modelKeys[modelId];
      else modelKeys[modelId] = keyId;
      return { ...current, modelKeys };
    });
    this.changed.fire();
  }

  private async document(): Promise<KeyList> {
    const doc = await this.doc.read();
    if (doc.keys.some((k) => k.id === LEGACY_KEY_ID) || (await this.secrets.get(LEGACY_SECRET_ID)) === undefined)
      return doc;
    return this.doc.update((current) => {
      if (current.keys.some((k) => k.id === LEGACY_KEY_ID)) return current;
      return { ...current, keys: [{ id: LEGACY_KEY_ID, name: freeKeyName('default', current.keys) }, ...current.keys] };
    });
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
  }
}
