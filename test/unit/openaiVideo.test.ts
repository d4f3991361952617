import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isGatewayError } from '../../src/core/errors';
import type { HttpClient } from '../../src/core/http';
import { checkMp4File } from '../../src/core/media/mediaFiles';
import { submitVideo, videoApiFor } from '../../src/core/media/video';
import { VideoTaskManager, type TaskStore } from '../../src/core/media/videoTaskManager';
import type { PollPolicy } from '../../src/core/media/videoTaskStates';
import { mergeModels } from '../../src/core/models/classify';
import { fetchKeyModels } from '../../src/core/models/keyModels';
import { DEFAULT_GROUPS, DEFAULT_MODELS, DEMO_KEY, drawImage, GatewayDouble, type ModelSpec } from '../gateway';
import { clientFor, TEST_TIMEOUTS } from '../support/client';

/** An OpenAI-style video model, as new-api lists a Sora channel's models: `openai-video` only. */
const SORA: ModelSpec = {
  id: 'sora-2',
  owned_by: 'openai',
  supported_endpoint_types: ['openai-video'],
  priceUsd: 0.1,
  name: 'Sora 2',
  video: { sizes: ['1280x720'], durations: [4, 8] },
};

const memoryStore = (): TaskStore => {
  let value: unknown;
  return { load: () => value, save: async (t) => void (value = JSON.parse(JSON.stringify(t))) };
};

const POLICY = (): PollPolicy => ({ baseMs: 20, maxPollMs: 0, maxErrors: 3 });

describe("OpenAI's video API (openai-video models)", () => {
  let gw: GatewayDouble;
  let http: HttpClient;
  let dir: string;

  before(async () => {
    gw = new GatewayDouble({
      videoTiming: { manual: true },
      models: [...DEFAULT_MODELS, SORA],
      groups: { ...DEFAULT_GROUPS, default: [...(DEFAULT_GROUPS.default ?? []), SORA.id] },
    });
    await gw.start();
    // The double builds its first MP4 on demand, which a busy machine may take longer than the test default for.
    http = clientFor(gw.url, DEMO_KEY, { timeouts: { ...TEST_TIMEOUTS, firstByteMs: 20_000, idleMs: 20_000 } }).http;
  });
  after(() => gw.stop());
  beforeEach(() => {
    gw.clearLog();
    dir = mkdtempSync(path.join(os.tmpdir(), 'openai-video-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const posts = (p: string) => gw.log.filter((e) => e.method === 'POST' && e.path === p);
  const gets = (p: string) => gw.log.filter((e) => e.method === 'GET' && e.path === p);
  const run = async (prompt: string, to: 'SUCCESS' | 'FAILURE', extra: { inputReference?: string } = {}) => {
    const manager = new VideoTaskManager({ http: () => http, store: memoryStore(), policy: POLICY });
    await manager.start();
    const task = await manager.submit({
      model: SORA.id,
      prompt,
      size: '1280*720',
      duration: 4,
      api: 'openai',
      outputDir: dir,
      ...extra,
    });
    gw.advanceVideo(task.taskId ?? '', to);
    const done = await manager.wait(task.localId);
    await manager.dispose();
    return done;
  };

  it('goes by the endpoint type the key’s list gives: openai-video models on /v1/videos, the Wan-type model on the task route', async () => {
    const models = mergeModels(await fetchKeyModels(http), undefined);
    assert.equal(videoApiFor(models.find((m) => m.id === SORA.id)), 'openai');
    assert.equal(
      videoApiFor(models.find((m) => m.id === 'wan2.5-t2v-preview')),
      'task',
      'the spec verified the Wan-type model on /v1/video/generations',
    );
    assert.equal(videoApiFor({ id: 'some-video', endpointTypes: ['openai'] }), 'task');
  });

  it('submits a multipart form to POST /v1/videos, polls GET /v1/videos/{id} and downloads /content with the key', async () => {
    const done = await run('a calico cat playing the piano', 'SUCCESS');
    assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
    assert.equal((await checkMp4File(done.file ?? '')).ok, true);
    const [submit] = posts('/v1/videos');
    assert.match(String(submit?.headers['content-type']), /^multipart\/form-data; boundary=/);
    assert.deepEqual(submit?.media?.form, {
      model: SORA.id,
      prompt: 'a calico cat playing the piano',
      seconds: '4',
      size: '1280x720',
    });
    assert.equal(posts('/v1/video/generations').length, 0);
    assert.ok(gets(`/v1/videos/${done.taskId}`).length >= 1, 'polled on OpenAI’s route');
    assert.equal(gets(`/v1/video/generations/${done.taskId}`).length, 0, 'never on the task route');
    assert.equal(done.api, 'openai');
    // new-api's video object carries the upstream link in metadata.url: fetched from there, without the key.
    assert.equal(gw.cdnLog.length, 1);
    assert.equal(gw.cdnLog[0]?.headers.authorization, undefined);
  });

  it('downloads from /v1/videos/{id}/content with the key when the video object gives no link', async () => {
    gw.setVideoQuery('openai');
    try {
      const done = await run('a paper crane unfolding', 'SUCCESS');
      assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
      assert.equal(posts('/v1/videos').length, 1);
      const [content] = gets(`/v1/videos/${done.taskId}/content`);
      assert.equal(content?.headers.authorization, `Bearer ${DEMO_KEY}`);
      assert.equal((await checkMp4File(done.file ?? '')).ok, true);
    } finally {
      gw.setVideoQuery('task');
    }
  });

  it('sends the reference image as input_reference, with its type from its bytes', async () => {
    const image = path.join(dir, 'start.png');
    writeFileSync(image, drawImage('reference', 64, 36, 'png'));
    const done = await run('the scene comes alive', 'SUCCESS', { inputReference: image });
    assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
    const [submit] = posts('/v1/videos');
    assert.deepEqual(submit?.media?.inputReference, {
      filename: 'start.png',
      contentType: 'image/png',
      bytes: drawImage('reference', 64, 36, 'png').length,
    });
  });

  it('refuses a reference image that is not one before anything is sent', async () => {
    const notImage = path.join(dir, 'notes.png');
    writeFileSync(notImage, 'just some text');
    await assert.rejects(
      submitVideo(http, undefined, {
        model: SORA.id,
        prompt: 'x',
        size: '1280*720',
        duration: 4,
        api: 'openai',
        inputReference: notImage,
      }),
      (e: unknown) => isGatewayError(e, 'badRequest') && /notes\.png was not sent/.test(e.message),
    );
    await assert.rejects(
      submitVideo(http, undefined, {
        model: 'wan2.5-t2v-preview',
        prompt: 'x',
        size: '832*480',
        duration: 5,
        inputReference: notImage,
      }),
      (e: unknown) => isGatewayError(e, 'badRequest') && /takes no reference image/.test(e.message),
    );
    assert.equal(posts('/v1/videos').length + posts('/v1/video/generations').length, 0);
  });

  it('reports a failed task with the reason OpenAI’s video object gives, and keeps no file', async () => {
    const done = await run('a storm at sea', 'FAILURE');
    assert.equal(done.phase, 'failed');
    assert.equal(done.error?.stage, 'task');
    assert.equal(posts('/v1/videos').length, 1);
    assert.match(done.error?.message ?? '', /inappropriate content/);
    assert.deepEqual(readdirSync(dir), []);
    assert.equal(gets(`/v1/videos/${done.taskId}/content`).length, 0);
  });

  it('a resubmission goes to OpenAI’s API again, with the same reference image', async () => {
    const image = path.join(dir, 'again.png');
    writeFileSync(image, drawImage('again', 32, 32, 'png'));
    const manager = new VideoTaskManager({ http: () => http, store: memoryStore(), policy: POLICY });
    await manager.start();
    const first = await manager.submit({
      model: SORA.id,
      prompt: 'a second try',
      size: '1280*720',
      duration: 4,
      api: 'openai',
      inputReference: image,
      outputDir: dir,
    });
    manager.cancel(first.localId);
    const again = await manager.resubmit(first.localId);
    await manager.dispose();
    assert.equal(again.api, 'openai');
    assert.equal(posts('/v1/videos').length, 2);
    assert.equal(posts('/v1/videos')[1]?.media?.inputReference?.filename, 'again.png');
  });
});
