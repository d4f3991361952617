import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { AskResult } from '../../src/host/chat/ask';
import type { VideoTaskSummary } from '../../src/host/media/videoActions';
import { DEFAULT_GROUPS, DEFAULT_MODELS, GatewayDouble, type ModelSpec } from '../gateway';
import { until as waitUntil } from '../support/until';
import { run, setSetting } from './support';

/** A key whose gateway lets it run two requests at once (new-api's per-token MaxConcurrency). */
const BUSY_KEY = 'sk-BusyKeyOfTheDoubleWithConcurrency2';
const LIMIT = 2;
/** An OpenAI-style video model, as new-api lists a Sora channel's models: `openai-video` only. */
const SORA: ModelSpec = {
  id: 'sora-2',
  owned_by: 'openai',
  supported_endpoint_types: ['openai-video'],
  priceUsd: 0.1,
  name: 'Sora 2',
  video: { sizes: ['1280x720'], durations: [4, 8] },
};
/** How long a condition may take to hold on a busy machine (polled; an idle machine never waits it out). */
const WAIT_MS = 60_000;

const until = (check: () => boolean | Promise<boolean>, what: string): Promise<void> => waitUntil(check, what, WAIT_MS);

describe('Limits the gateway enforces, in a real extension host', function () {
  this.timeout(180_000);
  let gw: GatewayDouble;
  let confirmBefore: boolean | undefined;
  const posts = (p: string) => gw.log.filter((e) => e.method === 'POST' && e.path === p);

  before(async () => {
    gw = new GatewayDouble({
      videoTiming: { manual: true },
      models: [...DEFAULT_MODELS, SORA],
      groups: { ...DEFAULT_GROUPS, default: [...(DEFAULT_GROUPS.default ?? []), SORA.id] },
    });
    gw.addKey({ key: BUSY_KEY, group: 'default', quotaUsd: 100, maxConcurrency: LIMIT });
    await gw.start();
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    await setSetting('video.pollSeconds', 1);
    confirmBefore = vscode.workspace
      .getConfiguration('modelGateway.tools')
      .inspect<boolean>('confirmBilledCalls')?.globalValue;
    await setSetting('tools.confirmBilledCalls', false);
    await run('setApiKey', BUSY_KEY);
    await run('refreshModels');
  });
  after(async () => {
    await setSetting('video.pollSeconds', undefined);
    await setSetting('tools.confirmBilledCalls', confirmBefore);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await run('clearApiKey', { all: true });
    await gw.stop();
  });
  beforeEach(() => gw.clearLog());

  it('a burst from the sidebar chat and an agent tool with one key all succeed, never more than the limit at the gateway', async () => {
    const hold = gw.holdRelays();
    try {
      // One answer per conversation: each ask goes into a conversation of its own (a new chat each).
      const asks: Array<Promise<AskResult>> = [];
      for (const i of [1, 2]) {
        await vscode.commands.executeCommand('modelGateway.newChat');
        asks.push(run<AskResult>('ask', { prompt: `burst answer ${i}`, model: 'gpt-4o-mini' }));
        await until(() => gw.concurrency(BUSY_KEY).inFlight === i, `answer ${i} to reach the gateway`);
      }
      // The agent tool comes third, over the limit; the price question is off so nothing waits for a click.
      const tool = vscode.lm.invokeTool('modelGateway_generateImage', {
        input: { prompt: 'A lighthouse at dusk', model: 'gpt-image-1', size: '1024x1024' },
        toolInvocationToken: undefined,
      });
      await until(
        () => gw.concurrency(BUSY_KEY).refused >= 1 && gw.concurrency(BUSY_KEY).inFlight === LIMIT,
        'the gateway to refuse the third request',
      );
      hold.release();
      for (const answer of await Promise.all(asks)) assert.equal(answer.status, 'done', JSON.stringify(answer.error));
      const image = await tool;
      assert.ok(image.content.length > 0);
    } finally {
      hold.release();
    }
    const figures = gw.concurrency(BUSY_KEY);
    assert.ok(figures.peak <= LIMIT, `never more than ${LIMIT} at once (peak ${figures.peak})`);
  });

  it('submits an openai-video model to POST /v1/videos as a form, polls it there and saves the video', async () => {
    const pending = run<VideoTaskSummary>('generateVideo', {
      prompt: 'A calico cat playing the piano',
      model: SORA.id,
      size: '1280x720',
      duration: 4,
      wait: true,
    });
    await until(() => posts('/v1/videos').some((e) => e.status === 200), 'the submission');
    const taskId = posts('/v1/videos').find((e) => e.status === 200)?.media?.taskId ?? '';
    gw.advanceVideo(taskId, 'SUCCESS');
    const done = await pending;
    assert.equal(done.phase, 'succeeded', JSON.stringify(done));
    assert.deepEqual(posts('/v1/videos')[0]?.media?.form, {
      model: SORA.id,
      prompt: 'A calico cat playing the piano',
      seconds: '4',
      size: '1280x720',
    });
    assert.equal(posts('/v1/video/generations').length, 0);
    assert.ok(
      gw.log.some((e) => e.method === 'GET' && e.path === `/v1/videos/${taskId}`),
      "polled on OpenAI's route",
    );
  });
});
