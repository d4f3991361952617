import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { GenerateImageResult } from '../../src/host/media/imageRunner';
import type { VideoTaskSummary } from '../../src/host/media/videoActions';
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { run, setSetting } from './support';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** How long a condition may take to hold on a busy machine (polled; an idle machine never waits it out). */
const WAIT_MS = 60_000;

describe('Media Studio in a real extension host', function () {
  // A video test waits for several poll rounds of the extension; on busy cores each can be slow.
  this.timeout(180_000);
  let gw: GatewayDouble;
  const workspace = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  const posts = (p: string) => gw.log.filter((e) => e.method === 'POST' && e.path === p);

  before(async () => {
    // Manual timing: a task moves only when the test says so, so "a reload in the middle" is exact.
    gw = new GatewayDouble({ videoTiming: { manual: true } });
    await gw.start();
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    await setSetting('video.pollSeconds', 1);
    await run('setApiKey', DEMO_KEY);
    await run('refreshModels');
  });
  after(async () => {
    await setSetting('video.pollSeconds', undefined);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await run('clearApiKey', { all: true });
    await gw.stop();
  });
  beforeEach(() => {
    gw.clearLog();
    gw.clearFaults();
  });

  /** Polls the task list until `check` holds for the task. */
  async function until(
    taskId: string,
    check: (t: VideoTaskSummary) => boolean,
    what: string,
  ): Promise<VideoTaskSummary> {
    const end = Date.now() + WAIT_MS;
    for (;;) {
      const task = (await run<VideoTaskSummary[]>('listVideoTasks')).find(
        (t) => t.taskId === taskId || t.localId === taskId,
      );
      if (task && check(task)) return task;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(task)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('generates an image over the Images API and saves it in the workspace', async () => {
    const result = await run<GenerateImageResult>('generateImage', {
      prompt: 'A red fox in the snow',
      model: 'gpt-image-1',
      size: '1024x1024',
      n: 2,
    });
    assert.equal(result.route, 'images');
    assert.equal(result.files.length, 2);
    for (const [i, p] of result.paths.entries()) {
      assert.ok(p.startsWith(path.join(workspace(), 'generated', 'images')), p);
      assert.match(path.basename(p), new RegExp(`^\\d{8}-\\d{6}-a-red-fox-in-the-snow-${i + 1}\\.png$`));
      assert.deepEqual(readFileSync(p).subarray(0, 8), PNG);
      assert.equal(result.files[i], vscode.Uri.file(p).toString());
    }
    const body = JSON.parse(posts('/v1/images/generations')[0]?.bodyText ?? '{}');
    assert.deepEqual(body, {
      model: 'gpt-image-1',
      prompt: 'A red fox in the snow',
      n: 2,
      size: '1024x1024',
      response_format: 'b64_json',
    });
  });

  it('generates an image through the Responses protocol with the image tool, streamed', async () => {
    const result = await run<GenerateImageResult>('generateImage', {
      prompt: 'A lighthouse at dusk',
      route: 'responses',
      model: 'gpt-image-1',
      outerModel: 'gpt-5',
      stream: true,
    });
    assert.equal(result.route, 'responses');
    assert.equal(result.outerModel, 'gpt-5');
    assert.equal(result.paths.length, 1);
    assert.deepEqual(readFileSync(result.paths[0] ?? '').subarray(0, 8), PNG);
    const body = JSON.parse(posts('/v1/responses')[0]?.bodyText ?? '{}');
    assert.equal(body.model, 'gpt-5');
    assert.equal(body.stream, true);
    assert.equal(body.tool_choice, 'auto');
    assert.deepEqual(body.tools[0].type, 'image_generation');
    assert.deepEqual([body.tools[0].action, body.tools[0].model], ['generate', 'gpt-image-1']);
  });

  it('"Generate with This Model" (the Models view) opens the studio on the model\'s tab with it chosen; a chat model is refused', async () => {
    assert.deepEqual(await run('generateWithModel', { model: { id: 'wan2.5-t2v-preview' } }), {
      opened: true,
      tab: 'video',
      model: 'wan2.5-t2v-preview',
    });
    assert.deepEqual(await run('generateWithModel', 'gpt-image-1'), {
      opened: true,
      tab: 'images',
      model: 'gpt-image-1',
    });
    // The studio offers the chosen model next: a generation without a model uses it.
    const result = await run<GenerateImageResult>('generateImage', { prompt: 'A kite over the sea' });
    assert.equal(result.model, 'gpt-image-1');
    await assert.rejects(
      Promise.resolve(vscode.commands.executeCommand('modelGateway.generateWithModel', 'gpt-4o-mini')),
      /gpt-4o-mini is not an image or video model this key may use/,
    );
  });

  it('refuses an image model as the outer model and an abbreviated id before sending', async () => {
    await assert.rejects(
      Promise.resolve(
        vscode.commands.executeCommand('modelGateway.generateImage', {
          prompt: 'x',
          route: 'responses',
          model: 'gpt-image-1',
          outerModel: 'gpt-image-1',
        }),
      ),
      /image model and cannot be the outer model/,
    );
    await assert.rejects(
      Promise.resolve(
        vscode.commands.executeCommand('modelGateway.generateImage', { prompt: 'x', model: 'gpt-image' }),
      ),
      /Did you mean gpt-image-1/,
    );
    assert.equal(gw.log.filter((e) => e.method === 'POST').length, 0, 'nothing was sent');
  });

  it('runs a video task to a saved, playable file, with no key sent to the CDN', async () => {
    const submitted = await run<VideoTaskSummary>('generateVideo', { prompt: 'A fox runs through snow' });
    assert.match(submitted.taskId ?? '', /^task_/);
    assert.deepEqual(
      [submitted.model, submitted.size, submitted.duration],
      ['wan2.5-t2v-preview', '832*480', 5],
      'the verified Wan defaults',
    );
    assert.deepEqual(JSON.parse(posts('/v1/video/generations')[0]?.bodyText ?? '{}'), {
      model: 'wan2.5-t2v-preview',
      prompt: 'A fox runs through snow',
      size: '832*480',
      duration: 5,
    });
    const id = submitted.taskId ?? '';
    gw.advanceVideo(id, 'QUEUED');
    const queued = await until(id, (t) => t.remoteStatus === 'QUEUED', 'QUEUED');
    assert.equal(queued.progress, 20);
    gw.advanceVideo(id, 'SUCCESS');
    const done = await until(id, (t) => t.phase === 'succeeded' || t.phase === 'failed', 'the end');
    assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
    assert.ok(done.path?.startsWith(path.join(workspace(), 'generated', 'videos')), done.path);
    assert.equal(
      readFileSync(done.path ?? '')
        .subarray(4, 8)
        .toString('latin1'),
      'ftyp',
    );
    assert.ok(gw.cdnLog.length > 0 && gw.cdnLog.every((e) => e.headers.authorization === undefined));
  });

  for (const shape of ['short', 'openai'] as const) {
    it(`runs a video task to a saved file when task queries answer in the ${shape} shape, the gateway-served video fetched with the key`, async () => {
      gw.setVideoQuery(shape);
      try {
        const submitted = await run<VideoTaskSummary>('generateVideo', { prompt: `A heron over a pond (${shape})` });
        const id = submitted.taskId ?? '';
        gw.advanceVideo(id, 'IN_PROGRESS');
        await until(id, (t) => t.remoteStatus === 'IN_PROGRESS', 'IN_PROGRESS');
        gw.advanceVideo(id, 'SUCCESS');
        const done = await until(id, (t) => t.phase === 'succeeded' || t.phase === 'failed', 'the end');
        assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
        assert.equal(
          readFileSync(done.path ?? '')
            .subarray(4, 8)
            .toString('latin1'),
          'ftyp',
        );
        const content = gw.log.filter((e) => e.path === `/v1/videos/${id}/content`);
        assert.equal(content.length, 1);
        assert.equal(content[0]?.headers.authorization, `Bearer ${DEMO_KEY}`);
        assert.equal(gw.cdnLog.length, 0, 'no upstream link was used');
        if (shape === 'openai')
          assert.ok(
            gw.log.some((e) => e.path === `/v1/videos/${id}` && e.status === 200),
            "queried on OpenAI's route",
          );
      } finally {
        gw.setVideoQuery('task');
      }
    });
  }

  it('returns the failure of a failed task with wait: true, and does not resubmit it', async () => {
    const pending = run<VideoTaskSummary>('generateVideo', { prompt: '[[fail]] A storm', wait: true });
    const id = await firstTaskId();
    gw.advanceVideo(id, 'FAILURE');
    const result = await pending;
    assert.equal(result.phase, 'failed');
    assert.match(result.error?.message ?? '', /DataInspectionFailed/);
    // Barrier instead of a pause: rebuild the task list from storage (as a window reload does) and
    // then run another task from submit to saved file. The failed task has by then been through a
    // reload and many rounds of the polling loop after its failure, which is where an automatic
    // resubmission would come from.
    const reloaded = (await run<VideoTaskSummary[]>('reloadVideoTasks')).find((t) => t.taskId === id);
    assert.equal(reloaded?.phase, 'failed', 'still failed after the task list was rebuilt from storage');
    const later = run<VideoTaskSummary>('generateVideo', { prompt: 'A calm lake', wait: true });
    const laterId = await firstTaskId((t) => t.taskId !== id);
    gw.advanceVideo(laterId, 'SUCCESS');
    assert.equal((await later).phase, 'succeeded');
    const prompts = posts('/v1/video/generations').map(
      (e) => (JSON.parse(e.bodyText ?? '{}') as { prompt?: string }).prompt,
    );
    assert.deepEqual(prompts, ['[[fail]] A storm', 'A calm lake'], 'the failed task was never resubmitted');
  });

  it('reports an expired link as a failed download', async () => {
    const pending = run<VideoTaskSummary>('generateVideo', { prompt: '[[expire:0]] A sunset', wait: true });
    gw.advanceVideo(await firstTaskId(), 'SUCCESS');
    const result = await pending;
    assert.equal(result.phase, 'failed');
    assert.equal(result.error?.stage, 'download');
    assert.match(result.error?.message ?? '', /expired/);
  });

  it('reports a size the model rejects, naming it, without trying another size', async () => {
    await assert.rejects(
      Promise.resolve(
        vscode.commands.executeCommand('modelGateway.generateVideo', { prompt: 'wide', size: '1280*720' }),
      ),
      /does not accept the size 1280 × 720/,
    );
    assert.equal(posts('/v1/video/generations').length, 1);
  });

  it('carries on after the task list is rebuilt from storage in the middle (as after a window reload)', async () => {
    const pending = run<VideoTaskSummary>('generateVideo', { prompt: 'A slow glacier', wait: true });
    const id = await firstTaskId();
    gw.advanceVideo(id, 'IN_PROGRESS');
    const before = await until(id, (t) => t.remoteStatus === 'IN_PROGRESS', 'IN_PROGRESS');
    const reloaded = await run<VideoTaskSummary[]>('reloadVideoTasks');
    const again = reloaded.find((t) => t.taskId === id);
    assert.equal(again?.localId, before.localId, 'the same task, from storage');
    assert.equal(again?.phase, 'running');
    gw.advanceVideo(id, 'SUCCESS');
    const result = await pending;
    assert.equal(result.phase, 'succeeded', JSON.stringify(result.error));
    assert.ok(result.path && existsSync(result.path));
    assert.equal(posts('/v1/video/generations').length, 1, 'resumed, not resubmitted');
  });

  it('opens the panel on a tab and lists tasks with their states', async () => {
    assert.deepEqual(await run('openMediaStudio', { tab: 'video' }), { opened: true, tab: 'video' });
    const tasks = await run<VideoTaskSummary[]>('listVideoTasks');
    assert.ok(tasks.some((t) => t.phase === 'succeeded') && tasks.some((t) => t.phase === 'failed'));
    const failed = tasks.find((t) => t.phase === 'failed');
    assert.deepEqual(await run('forgetVideoTask', { taskId: failed?.localId }), { forgotten: true });
    assert.equal(
      (await run<VideoTaskSummary[]>('listVideoTasks')).some((t) => t.localId === failed?.localId),
      false,
    );
  });

  /** The gateway's id of the task submitted last (from the double's request log), if it passes `accept`. */
  async function firstTaskId(accept: (t: VideoTaskSummary) => boolean = () => true): Promise<string> {
    const end = Date.now() + WAIT_MS;
    for (;;) {
      const tasks = await run<VideoTaskSummary[]>('listVideoTasks');
      const newest = tasks[0];
      if (newest?.taskId && posts('/v1/video/generations').length > 0 && newest.phase === 'running' && accept(newest))
        return newest.taskId;
      if (Date.now() > end) throw new Error('no task was accepted');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
});
