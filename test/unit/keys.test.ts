/**
 * Several named keys for one gateway, against the gateway double's demo key (group `default`) and
 * team key (group `team`): names and order, which key each request goes with, the model list read
 * per key, the quota per key, and refusals that name the key.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { streamChat, collectChat } from '../../src/core/chat/chat';
import { GatewayError } from '../../src/core/errors';
import {
  emptyKeyList,
  freeKeyName,
  keyForModel,
  keyForRequest,
  keyNameProblem,
  moveKey,
  parseKeyList,
  withoutKey,
} from '../../src/core/keys';
import { VideoTaskManager, type TaskStore } from '../../src/core/media/videoTaskManager';
import type { PollPolicy, VideoTask } from '../../src/core/media/videoTaskStates';
import { fileContent, uploadForExtract } from '../../src/core/tools/kimi';
import { ModelRegistry } from '../../src/core/models/modelRegistry';
import { fetchKeyQuota } from '../../src/core/quota';
import { DEFAULT_GROUPS, DEMO_KEY, GatewayDouble, TEAM_KEY, VIP_ONLY_MODEL } from '../gateway';
import { clientForKeys, type TestKey } from '../support/client';
import { withOpened } from '../support/openedFiles';

const DEFAULT: TestKey = { id: 'legacy', name: 'default', secret: DEMO_KEY };
const TEAM: TestKey = { id: 'k-team', name: 'team-claude', secret: TEAM_KEY };

describe('Several keys: names and order', () => {
  it('refuses empty, too long, badly formed and taken names, case-insensitively', () => {
    const keys = [{ id: 'a', name: 'default' }];
    assert.ok(keyNameProblem('  ', keys));
    assert.ok(keyNameProblem('x'.repeat(41), keys));
    assert.ok(keyNameProblem('-lead', keys));
    assert.ok(keyNameProblem('two  spaces', keys));
    assert.match(keyNameProblem('Default', keys) ?? '', /already/);
    assert.equal(keyNameProblem('Default', keys, 'a'), undefined, 'a key may keep its own name in another case');
    assert.equal(keyNameProblem('team claude.2', keys), undefined);
    assert.equal(freeKeyName('default', keys), 'default-2');
  });

  it('reads a list leniently: a bad or repeated entry is dropped, not the whole list', () => {
    const list = parseKeyList({
      keys: [
        { id: 'a', name: 'default' },
        { id: 'b', name: 'DEFAULT' },
        { id: 'a', name: 'other' },
        { id: 'c', name: '' },
        { id: 'd', name: 'team' },
      ],
      modelKeys: { m: 'd' },
    });
    assert.deepEqual(list, {
      keys: [
        { id: 'a', name: 'default' },
        { id: 'd', name: 'team' },
      ],
      modelKeys: { m: 'd' },
    });
    assert.deepEqual(parseKeyList({ keys: 'nonsense', modelKeys: 3 }), emptyKeyList());
  });

  it('reorders, and forgets the model choices of a removed key', () => {
    const list = {
      keys: [
        { id: 'a', name: 'a' },
        { id: 'b', name: 'b' },
      ],
      modelKeys: { m1: 'b', m2: 'a' },
    };
    assert.deepEqual(
      moveKey(list, 'b', -1).keys.map((k) => k.id),
      ['b', 'a'],
    );
    assert.equal(moveKey(list, 'a', -1), list, 'the first key cannot move up');
    assert.deepEqual(withoutKey(list, 'b'), { keys: [{ id: 'a', name: 'a' }], modelKeys: { m2: 'a' } });
  });

  it('calls a model with the picked key while that key lists it, else with the first that does', () => {
    assert.equal(keyForModel(['a', 'b'], undefined), 'a');
    assert.equal(keyForModel(['a', 'b'], 'b'), 'b');
    assert.equal(keyForModel(['a'], 'b'), 'a');
    assert.throws(
      () => keyForRequest([{ id: 'a', name: 'a' }], { key: 'gone' }, () => undefined),
      (e: unknown) => e instanceof GatewayError && e.kind === 'auth',
    );
  });
});

describe('Several keys against the double', function () {
  this.timeout(30_000);
  let gw: GatewayDouble;
  let keys: TestKey[];
  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
  });
  after(() => gw.stop());
  beforeEach(() => {
    keys = [DEFAULT, TEAM];
    gw.clearLog();
  });

  function setup(choices: Record<string, string> = {}) {
    const http = clientForKeys(
      gw.url,
      () => keys,
      (model) => registry.find(model)?.keyId,
    );
    const registry: ModelRegistry = new ModelRegistry({
      http: () => http,
      catalogUrl: () => '',
      store: { load: async () => undefined, save: async () => undefined },
      keys: async () => keys,
      modelChoices: async () => choices,
    });
    return { http, registry };
  }

  const authOf = (path: string) => gw.log.filter((e) => e.path.startsWith(path)).map((e) => e.headers.authorization);

  it('reads /v1/models once per key and tells which keys list each model', async () => {
    const { registry } = setup();
    const snap = await registry.refresh();
    assert.deepEqual(authOf('/v1/models').sort(), [`Bearer ${DEMO_KEY}`, `Bearer ${TEAM_KEY}`].sort());
    assert.deepEqual(
      snap.keyLists?.map((l) => [l.key.name, l.models?.length]),
      [
        ['default', DEFAULT_GROUPS.default?.length],
        ['team-claude', 4],
      ],
    );
    assert.deepEqual(registry.find(VIP_ONLY_MODEL)?.keyIds, ['k-team']);
    assert.equal(registry.find(VIP_ONLY_MODEL)?.keyId, 'k-team');
    assert.deepEqual(registry.find('gpt-4o-mini')?.keyIds, ['legacy', 'k-team']);
    assert.equal(registry.find('gpt-4o-mini')?.keyId, 'legacy', 'a model both keys list goes with the first key');
    assert.equal(registry.find('qwen-plus')?.keyIds?.length, 1);
  });

  it("sends each model's requests with the key that lists it, or the one the user picked", async () => {
    const { http, registry } = setup({ 'gpt-4o-mini': 'k-team' });
    await registry.refresh();
    gw.clearLog();
    const ask = (model: string) =>
      collectChat(
        streamChat(http, {
          model,
          protocol: 'chatCompletions',
          messages: [{ role: 'user', content: 'hi' }],
          stream: true,
        }),
      );
    const vip = await ask(VIP_ONLY_MODEL);
    assert.ok(vip.text.length > 0);
    await ask('gpt-4o-mini');
    await ask('qwen-plus');
    assert.deepEqual(authOf('/v1/chat/completions'), [
      `Bearer ${TEAM_KEY}`,
      `Bearer ${TEAM_KEY}`,
      `Bearer ${DEMO_KEY}`,
    ]);
    registry.chooseKey('gpt-4o-mini', undefined);
    gw.clearLog();
    await ask('gpt-4o-mini');
    assert.deepEqual(authOf('/v1/chat/completions'), [`Bearer ${DEMO_KEY}`]);
  });

  it("keeps one key's models when another key is refused, and names the refused key", async () => {
    keys = [DEFAULT, { ...TEAM, secret: 'sk-not-a-key-of-this-gateway-000000000000000000000' }];
    const { http, registry } = setup();
    const snap = await registry.refresh();
    assert.equal(snap.keyError, undefined);
    assert.equal(snap.keyLists?.[1]?.error?.kind, 'auth');
    assert.match(snap.keyLists?.[1]?.error?.message ?? '', /^Key "team-claude": /);
    assert.ok(registry.find('gpt-4o-mini')?.available);
    assert.equal(registry.find(VIP_ONLY_MODEL), undefined);
    await assert.rejects(http.send({ method: 'GET', url: http.endpoints.models, key: 'k-team' }), /team-claude/);
  });

  it('names no key while there is only one', async () => {
    keys = [{ ...DEFAULT, secret: 'sk-not-a-key-of-this-gateway-000000000000000000000' }];
    const { http } = setup();
    await assert.rejects(
      http.send({ method: 'GET', url: http.endpoints.models }),
      (e: unknown) => e instanceof GatewayError && !e.message.includes('default'),
    );
  });

  it('reads the quota of each key with that key', async () => {
    const { http } = setup();
    const team = await fetchKeyQuota(http, { key: 'k-team' });
    const demo = await fetchKeyQuota(http, { key: 'legacy' });
    assert.ok(team.available && demo.available);
    assert.equal(team.quota.unlimited, false);
    assert.equal(
      team.quota.remaining,
      gw.quota(TEAM_KEY).tokenUsd,
      "the team key's own US$5, less what its chats used",
    );
    assert.equal(demo.quota.unlimited, true);
    assert.ok(authOf('/').every((a) => a === `Bearer ${TEAM_KEY}` || a === `Bearer ${DEMO_KEY}`));
  });

  it('never sends a key to another origin, whichever key a request names', async () => {
    const { http } = setup();
    await http
      .send({ method: 'GET', url: `${gw.cdnUrl}/nothing`, key: 'k-team', acceptStatus: [404] })
      .catch(() => undefined);
    assert.ok(gw.cdnLog.every((e) => e.headers.authorization === undefined));
  });
});

describe('Several keys: resources stay with the key that made them', function () {
  this.timeout(30_000);
  let gw: GatewayDouble;
  let dir: string;
  const keys = [DEFAULT, TEAM];
  const fast: PollPolicy = { baseMs: 30, maxPollMs: 0, maxErrors: 3 };
  before(async () => {
    gw = new GatewayDouble({ videoTiming: { manual: true } });
    await gw.start();
  });
  after(() => gw.stop());
  beforeEach(() => {
    gw.clearLog();
    dir = mkdtempSync(path.join(os.tmpdir(), 'keys-video-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  class MemoryStore implements TaskStore {
    value: unknown;
    load() {
      return this.value === undefined ? undefined : JSON.parse(JSON.stringify(this.value));
    }
    async save(tasks: VideoTask[]) {
      this.value = JSON.parse(JSON.stringify(tasks));
    }
  }

  const gatewayAuth = () =>
    gw.log
      .filter((e) => e.origin === 'gateway')
      .map(
        (e) =>
          `${e.method} ${e.path.replace(/task_[\w-]+/, 'ID')} ${e.headers.authorization === `Bearer ${TEAM_KEY}` ? 'team' : e.headers.authorization === `Bearer ${DEMO_KEY}` ? 'default' : 'none'}`,
      );

  it('polls and downloads a video task with the key that submitted it, which its record names (never the key)', async () => {
    const http = clientForKeys(gw.url, () => keys);
    const store = new MemoryStore();
    const manager = new VideoTaskManager({
      http: () => http,
      store,
      policy: () => fast,
      keyOf: async () => ({ id: TEAM.id, name: TEAM.name }),
    });
    await manager.start();
    const task = await manager.submit({
      model: 'wan2.5-t2v-preview',
      prompt: 'a fox',
      size: '832*480',
      duration: 5,
      outputDir: dir,
    });
    assert.equal(task.keyId, 'k-team');
    assert.equal(task.keyName, 'team-claude');
    gw.advanceVideo(task.taskId ?? '', 'SUCCESS');
    const done = await manager.wait(task.localId);
    assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
    const sent = gatewayAuth();
    assert.ok(sent.length >= 2, sent.join('\n'));
    assert.ok(
      sent.every((line) => line.endsWith(' team')),
      sent.join('\n'),
    );
    assert.ok(!JSON.stringify(store.value).includes(TEAM_KEY));
    await manager.dispose();
  });

  it('polls a task stored before several keys with the first key', async () => {
    const http = clientForKeys(gw.url, () => keys);
    const first = new VideoTaskManager({ http: () => http, store: new MemoryStore(), policy: () => fast });
    await first.start();
    const task = await first.submit({
      model: 'wan2.5-t2v-preview',
      prompt: 'a cat',
      size: '832*480',
      duration: 5,
      outputDir: dir,
    });
    assert.equal(task.keyId, undefined);
    gw.advanceVideo(task.taskId ?? '', 'SUCCESS');
    assert.equal((await first.wait(task.localId)).phase, 'succeeded');
    assert.ok(
      gatewayAuth().every((line) => line.endsWith(' default')),
      gatewayAuth().join('\n'),
    );
    await first.dispose();
  });

  it('reads an uploaded Kimi file with the key that uploaded it; another key is refused', async () => {
    const http = clientForKeys(gw.url, () => keys);
    const file = path.join(dir, 'note.txt');
    writeFileSync(file, 'owned by the team key');
    const uploaded = await withOpened(file, (f) => uploadForExtract(http, TEAM.id, f));
    assert.equal(await fileContent(http, TEAM.id, uploaded.id), 'owned by the team key');
    await assert.rejects(
      fileContent(http, undefined, uploaded.id),
      (e: unknown) => e instanceof GatewayError && e.status === 404,
    );
    assert.ok(gw.kimiFiles(TEAM_KEY).some((f) => f.id === uploaded.id));
  });
});
