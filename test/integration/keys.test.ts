import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ConnectionReport } from '../../src/core/connection';
import type { AskResult } from '../../src/host/chat/ask';
import type { VideoTaskSummary } from '../../src/host/media/videoActions';
import { DEMO_KEY, GatewayDouble, TEAM_KEY, VIP_ONLY_MODEL } from '../gateway';
import { run, setSetting } from './support';

/**
 * Several keys in a real extension host: every request of a model goes with the key that lists it
 * (or the one picked for it), a video task stays with the key that submitted it, Check Connection
 * reports each key, and a removed key strands its conversations like a model that is gone.
 */
describe('Several API keys in a real extension host', function () {
  let gw: GatewayDouble;
  const WAIT_MS = 30_000;
  const who = (auth: string | undefined) =>
    auth === `Bearer ${TEAM_KEY}` ? 'team' : auth === `Bearer ${DEMO_KEY}` ? 'default' : 'none';
  const chatKeys = () =>
    gw.log.filter((e) => e.path === '/v1/chat/completions').map((e) => who(e.headers.authorization));

  before(async () => {
    gw = new GatewayDouble({ videoTiming: { manual: true } });
    await gw.start();
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    await setSetting('video.pollSeconds', 1);
    await run('clearApiKey', { all: true });
    await run('setApiKey', DEMO_KEY);
    assert.deepEqual(await run('addApiKey', { name: 'team-claude', key: TEAM_KEY }), {
      added: true,
      name: 'team-claude',
      masked: `••••${TEAM_KEY.slice(-4)}`,
    });
    await run('refreshModels');
  });
  after(async () => {
    await setSetting('video.pollSeconds', undefined);
    await run('clearApiKey', { all: true });
    await gw.stop();
  });
  beforeEach(() => gw.clearLog());

  it('asks each model with the key that lists it, and with the key picked for a model both list', async () => {
    const team = await run<AskResult>('ask', { prompt: 'only the team key may ask me', model: VIP_ONLY_MODEL });
    assert.equal(team.status, 'done', JSON.stringify(team.error));
    const both = await run<AskResult>('ask', { prompt: 'both keys may ask me', model: 'gpt-4o-mini' });
    assert.equal(both.status, 'done', JSON.stringify(both.error));
    assert.deepEqual(chatKeys(), ['team', 'default'], 'a model both keys list goes with the first key');

    assert.deepEqual(await run('useKeyForModel', { model: 'gpt-4o-mini', key: 'team-claude' }), {
      model: 'gpt-4o-mini',
      key: 'team-claude',
    });
    gw.clearLog();
    assert.equal(
      (await run<AskResult>('ask', { prompt: 'now with the team key', model: 'gpt-4o-mini' })).status,
      'done',
    );
    assert.deepEqual(chatKeys(), ['team']);
    await run('useKeyForModel', { model: 'gpt-4o-mini', key: null });
    await run('refreshModels');
    gw.clearLog();
    assert.equal((await run<AskResult>('ask', { prompt: 'the first key again', model: 'gpt-4o-mini' })).status, 'done');
    assert.deepEqual(chatKeys(), ['default']);
  });

  it('submits, polls and downloads a video task with the key picked for its model', async () => {
    await run('useKeyForModel', { model: 'wan2.5-t2v-preview', key: 'team-claude' });
    const submitted = await run<VideoTaskSummary>('generateVideo', { prompt: 'A fox runs through snow' });
    const id = submitted.taskId ?? '';
    gw.advanceVideo(id, 'SUCCESS');
    const end = Date.now() + WAIT_MS;
    let task: VideoTaskSummary | undefined;
    while (!(task && (task.phase === 'succeeded' || task.phase === 'failed'))) {
      if (Date.now() > end) throw new Error(`the task did not end: ${JSON.stringify(task)}`);
      await new Promise((r) => setTimeout(r, 100));
      task = (await run<VideoTaskSummary[]>('listVideoTasks')).find((t) => t.taskId === id);
    }
    assert.equal(task.phase, 'succeeded', JSON.stringify(task.error));
    const video = gw.log.filter((e) => e.path.startsWith('/v1/video'));
    assert.ok(video.length >= 2, gw.log.map((e) => e.path).join(', '));
    assert.deepEqual([...new Set(video.map((e) => who(e.headers.authorization)))], ['team']);
    await run('useKeyForModel', { model: 'wan2.5-t2v-preview', key: null });
  });

  it('Check Connection reports each key by name, masked, with its own list and quota', async () => {
    const report = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.deepEqual(
      report.keys?.map((k) => [k.name, k.masked, k.accepted]),
      [
        ['default', `••••${DEMO_KEY.slice(-4)}`, true],
        ['team-claude', `••••${TEAM_KEY.slice(-4)}`, true],
      ],
    );
    assert.equal(report.keys?.[1]?.models, 4);
    assert.ok(!JSON.stringify(report).includes(TEAM_KEY));
  });

  it('a removed key strands its conversation like a model that is gone', async () => {
    const first = await run<AskResult>('ask', { prompt: 'on the team model', model: VIP_ONLY_MODEL });
    assert.equal(first.status, 'done');
    assert.deepEqual(await run('removeApiKey', 'team-claude'), { removed: true });
    await run('refreshModels');
    gw.clearLog();
    await assert.rejects(
      Promise.resolve(
        vscode.commands.executeCommand('modelGateway.ask', {
          prompt: 'still there?',
          conversationId: first.conversationId,
        }),
      ),
      new RegExp(`Pick the model to continue with: ${VIP_ONLY_MODEL} is not available with this API key`),
    );
    assert.deepEqual(chatKeys(), [], 'nothing went with another key');
    await run('addApiKey', { name: 'team-claude', key: TEAM_KEY });
    await run('refreshModels');
  });
});
