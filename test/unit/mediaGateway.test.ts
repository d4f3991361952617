import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GatewayError, isGatewayError } from '../../src/core/errors';
import type { HttpClient } from '../../src/core/http';
import { generateImages, generateImageViaResponses } from '../../src/core/media/images';
import { checkMp4File, detectImageFormat } from '../../src/core/media/mediaFiles';
import { requireListedModel, requireOuterModel } from '../../src/core/media/modelChoice';
import { queryVideo, submitVideo, videoHints } from '../../src/core/media/video';
import { downloadVideo } from '../../src/core/media/videoDownload';
import type { PollPolicy } from '../../src/core/media/videoTaskStates';
import { VideoTaskManager, type TaskStore } from '../../src/core/media/videoTaskManager';
import { mergeModels } from '../../src/core/models/classify';
import { fetchKeyModels } from '../../src/core/models/keyModels';
import type { ModelInfo } from '../../src/core/models/types';
import { DEMO_KEY, drawImage, GatewayDouble } from '../gateway';
import { clientFor, TEST_TIMEOUTS } from '../support/client';

const memoryStore = (): TaskStore => {
  let value: unknown;
  return { load: () => value, save: async (t) => void (value = JSON.parse(JSON.stringify(t))) };
};

describe('media against the double', function () {
  this.timeout(20_000);
  let gw: GatewayDouble;
  let http: HttpClient;
  let models: ModelInfo[];
  let dir: string;

  before(async () => {
    gw = new GatewayDouble({ videoTiming: { manual: true } });
    await gw.start();
    http = clientFor(gw.url, DEMO_KEY).http;
    models = mergeModels(await fetchKeyModels(http), undefined);
  });
  after(() => gw.stop());
  beforeEach(() => {
    gw.clearLog();
    gw.clearFaults();
    dir = mkdtempSync(path.join(os.tmpdir(), 'media-gw-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const posted = (p: string) => gw.log.filter((e) => e.method === 'POST' && e.path === p);

  describe('Images API', () => {
    it('sends model, prompt, n, size and response_format b64_json, and decodes each image', async () => {
      const images = await generateImages(http, { model: 'gpt-image-1', prompt: 'a red fox', n: 2, size: '1024x1024' });
      assert.equal(images.length, 2);
      for (const image of images) {
        assert.equal(image.format, 'png');
        assert.equal(image.source, 'b64_json');
        assert.equal(detectImageFormat(image.bytes), 'png');
      }
      assert.notDeepEqual(images[0]?.bytes, images[1]?.bytes);
      const [request] = posted('/v1/images/generations');
      assert.deepEqual(JSON.parse(request?.bodyText ?? '{}'), {
        model: 'gpt-image-1',
        prompt: 'a red fox',
        n: 2,
        size: '1024x1024',
        response_format: 'b64_json',
      });
      assert.equal(request?.headers.authorization, `Bearer ${DEMO_KEY}`);
    });

    it('saves JPEG and WebP answers as what they are, whatever was asked', async () => {
      const jpeg = drawImage('j', 32, 32, 'jpeg').toString('base64');
      const webp = drawImage('w', 32, 32, 'webp').toString('base64');
      gw.inject({
        match: { path: '/v1/images/generations' },
        times: 1,
        action: {
          type: 'status',
          status: 200,
          body: JSON.stringify({ data: [{ b64_json: jpeg }, { b64_json: webp }] }),
          headers: { 'content-type': 'application/json' },
        },
      });
      const images = await generateImages(http, { model: 'gpt-image-1', prompt: 'formats', n: 2, size: '1024x1024' });
      assert.deepEqual(
        images.map((i) => i.format),
        ['jpeg', 'webp'],
      );
    });

    it('downloads an item that carries a url instead, without the key, and checks what arrived', async () => {
      const url = gw.hostFile('/results/fox.webp', drawImage('fox', 40, 30, 'webp'), 'image/webp');
      gw.inject({
        match: { path: '/v1/images/generations' },
        times: 1,
        action: {
          type: 'status',
          status: 200,
          body: JSON.stringify({ created: 1, data: [{ url, b64_json: '', revised_prompt: '' }] }),
          headers: { 'content-type': 'application/json' },
        },
      });
      const [image] = await generateImages(http, { model: 'gpt-image-1', prompt: 'fox', n: 1, size: '1024x1024' });
      assert.equal(image?.format, 'webp');
      assert.equal(image?.source, 'url');
      const fetched = gw.log.find((e) => e.path === '/results/fox.webp');
      assert.ok(fetched, 'the link was fetched');
      assert.equal(fetched.headers.authorization, undefined, 'no key to the storage host');

      const page = gw.hostFile(
        '/results/expired.png',
        '<html><head><title>Link expired</title></head></html>',
        'text/html',
      );
      gw.inject({
        match: { path: '/v1/images/generations' },
        times: 1,
        action: { type: 'status', status: 200, body: JSON.stringify({ data: [{ url: page }] }) },
      });
      await assert.rejects(
        generateImages(http, { model: 'gpt-image-1', prompt: 'fox', n: 1, size: '1024x1024' }),
        (e: unknown) =>
          isGatewayError(e, 'protocol') &&
          /not a PNG, JPEG or WebP image: it is an HTML page .*Link expired/.test(e.message),
      );
    });

    it('refuses an abbreviated model id before sending, suggesting the real one', () => {
      assert.throws(
        () => requireListedModel('gpt-image', models, 'image'),
        (e: unknown) =>
          isGatewayError(e, 'badRequest') &&
          /"gpt-image" is not a model id listed for this key/.test(e.message) &&
          /abbreviated/.test(e.message) &&
          /Did you mean gpt-image-1/.test(e.message),
      );
      assert.throws(
        () => requireListedModel('GPT-Image-1', models, 'image'),
        /case-sensitive: did you mean gpt-image-1/,
      );
      assert.throws(
        () => requireListedModel('gpt-5', models, 'image'),
        /gpt-5 is a language \(chat\) model, not a image model/,
      );
      assert.equal(requireListedModel('gpt-image-1', models, 'image').id, 'gpt-image-1');
      assert.equal(gw.log.length, 0, 'nothing was sent');
    });

    it('sends a size written as people write it (1024 × 1024) in the Images API form, 1024x1024', async () => {
      const images = await generateImages(http, { model: 'gpt-image-1', prompt: 'a fox', n: 1, size: '1024 × 1024' });
      assert.equal(images.length, 1);
      assert.equal(JSON.parse(posted('/v1/images/generations').at(-1)?.bodyText ?? '{}').size, '1024x1024');
    });

    it('refuses a size that is not a width and a height before sending, and reports the gateway refusing one', async () => {
      await assert.rejects(
        generateImages(http, { model: 'gpt-image-1', prompt: 'x', n: 1, size: 'square' }),
        /not a width and a height/,
      );
      assert.equal(gw.log.length, 0);
      await assert.rejects(
        generateImages(http, { model: 'gpt-image-1', prompt: 'x', n: 1, size: '640x480' }),
        (e: unknown) => isGatewayError(e, 'badRequest') && /640x480/.test(e.message),
      );
    });

    it('reports a moderation block as the gateway words it', async () => {
      await assert.rejects(
        generateImages(http, { model: 'gpt-image-1', prompt: '[[moderation]] a fight', n: 1, size: '1024x1024' }),
        (e: unknown) => isGatewayError(e, 'badRequest') && /safety system/.test(e.message),
      );
    });

    it('waits for slow image generation as long as the long timeout allows, and can be cancelled', async () => {
      assert.ok(TEST_TIMEOUTS.firstByteMs < 2500 && TEST_TIMEOUTS.longMs > 2500);
      const [image] = await generateImages(http, {
        model: 'gpt-image-1',
        prompt: '[[slow:2500]] patience',
        n: 1,
        size: '1024x1024',
      });
      assert.equal(image?.format, 'png', 'longer than the first-byte limit, within the long one');
      const abort = new AbortController();
      setTimeout(() => abort.abort(), 200);
      await assert.rejects(
        generateImages(http, {
          model: 'gpt-image-1',
          prompt: '[[slow:5000]] never mind',
          n: 1,
          size: '1024x1024',
          signal: abort.signal,
        }),
        (e: unknown) => isGatewayError(e, 'cancelled'),
      );
    });
  });

  describe('Responses with the image tool', () => {
    it('sends a language model outside and the image model in the tool, and decodes the result', async () => {
      const result = await generateImageViaResponses(http, {
        outerModel: 'gpt-5',
        imageModel: 'gpt-image-1',
        prompt: 'draw a lighthouse',
        stream: false,
      });
      assert.equal(result.images.length, 1);
      assert.equal(result.images[0]?.format, 'png');
      const body = JSON.parse(posted('/v1/responses')[0]?.bodyText ?? '{}');
      assert.equal(body.model, 'gpt-5');
      assert.equal(body.stream, false);
      assert.deepEqual(body.tools, [{ type: 'image_generation', action: 'generate', model: 'gpt-image-1' }]);
      assert.equal(body.tool_choice, 'auto');
      assert.deepEqual(body.input, [{ role: 'user', content: [{ type: 'input_text', text: 'draw a lighthouse' }] }]);
    });

    it('streams partial images as they arrive, then the final result', async () => {
      const partials: number[] = [];
      const result = await generateImageViaResponses(http, {
        outerModel: 'gpt-5',
        imageModel: 'gpt-image-1',
        prompt: 'a streamed lighthouse',
        stream: true,
        partialImages: 2,
        onPartial: (p) => partials.push(p.index),
      });
      assert.deepEqual(partials, [0, 1]);
      assert.equal(result.images[0]?.format, 'png');
      const body = JSON.parse(posted('/v1/responses')[0]?.bodyText ?? '{}');
      assert.equal(body.stream, true);
      assert.deepEqual(body.tools, [
        { type: 'image_generation', action: 'generate', model: 'gpt-image-1', partial_images: 2 },
      ]);
    });

    it('refuses an image model as the outer model with the explanation, and a model without the Responses protocol', () => {
      assert.throws(
        () => requireOuterModel('gpt-image-1', models),
        (e: unknown) =>
          isGatewayError(e, 'badRequest') &&
          /gpt-image-1 is an image model and cannot be the outer model/.test(e.message) &&
          /image_generation tool/.test(e.message),
      );
      assert.throws(() => requireOuterModel('claude-sonnet-4-5', models), /does not speak the Responses protocol/);
      assert.equal(requireOuterModel('gpt-5', models).id, 'gpt-5');
      assert.equal(gw.log.length, 0);
    });
  });

  describe('video tasks', () => {
    const wan = { model: 'wan2.5-t2v-preview', prompt: 'a fox runs through snow', size: '832*480', duration: 5 };

    it('has the verified defaults for the Wan-type model', () => {
      const hints = videoHints(models.find((m) => m.id === 'wan2.5-t2v-preview'));
      assert.equal(hints.defaultSize, '832*480');
      assert.equal(hints.defaultDuration, 5);
    });

    it('submits with the asterisk size and duration, polls each status, and downloads a playable MP4 without the key', async () => {
      const id = await submitVideo(http, undefined, wan);
      assert.match(id, /^task_/);
      assert.deepEqual(JSON.parse(posted('/v1/video/generations')[0]?.bodyText ?? '{}'), wan);
      const seen: string[] = [];
      let status = await queryVideo(http, undefined, id);
      seen.push(`${status.status} ${status.progress}`);
      while (status.status !== 'SUCCESS') {
        gw.tickVideo();
        status = await queryVideo(http, undefined, id);
        seen.push(`${status.status} ${status.progress}`);
      }
      assert.deepEqual(seen, ['NOT_START 0', 'SUBMITTED 10', 'QUEUED 20', 'IN_PROGRESS 30', 'SUCCESS 100']);
      assert.ok(status.videoUrl?.startsWith(gw.cdnUrl), status.videoUrl);
      const file = await downloadVideo(http, undefined, status.videoUrl ?? '', { dir, baseName: 'fox-1' });
      assert.equal(path.basename(file), 'fox-1.mp4');
      assert.equal((await checkMp4File(file)).ok, true);
      assert.ok(gw.cdnLog.length > 0);
      for (const e of gw.cdnLog) assert.equal(e.headers.authorization, undefined, 'no Authorization to the CDN');
      assert.ok(
        gw.log.filter((e) => e.origin === 'gateway').every((e) => e.headers.authorization === `Bearer ${DEMO_KEY}`),
      );
    });

    it('sends a size written as people write it (832 × 480) in the video endpoint form, 832*480', async () => {
      const id = await submitVideo(http, undefined, { ...wan, size: '832 × 480' });
      assert.match(id, /^task_/);
      assert.equal(JSON.parse(posted('/v1/video/generations').at(-1)?.bodyText ?? '{}').size, '832*480');
    });

    it('reports a size the model rejects, naming it, and never tries another', async () => {
      await assert.rejects(
        submitVideo(http, undefined, { ...wan, size: '1280*720' }),
        (e: unknown) =>
          isGatewayError(e, 'badRequest') &&
          /does not accept the size 1280 × 720/.test(e.message) &&
          /Nothing was retried/.test(e.message),
      );
      assert.equal(posted('/v1/video/generations').length, 1, 'one submit, no retry with other sizes');
      await assert.rejects(submitVideo(http, undefined, { ...wan, size: '832 by 480' }), /not a width and a height/);
      assert.equal(posted('/v1/video/generations').length, 1, 'a malformed size is refused before sending');
    });

    const run = async (prompt: string, advance = true) => {
      const manager = new VideoTaskManager({
        http: () => http,
        store: memoryStore(),
        policy: (): PollPolicy => ({ baseMs: 20, maxPollMs: 0, maxErrors: 3 }),
      });
      await manager.start();
      const task = await manager.submit({ ...wan, prompt, outputDir: dir });
      if (advance) gw.advanceVideo(task.taskId ?? '', prompt.includes('[[fail]]') ? 'FAILURE' : 'SUCCESS');
      const done = await manager.wait(task.localId);
      await manager.dispose();
      return done;
    };

    it('runs a task to a saved file with the manager', async () => {
      const done = await run('a calm lake');
      assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
      assert.match(path.basename(done.file ?? ''), /^\d{8}-\d{6}-a-calm-lake-1\.mp4$/);
      assert.equal((await checkMp4File(done.file ?? '')).ok, true);
    });

    it('shows the reason of a failed task and does not resubmit it', async () => {
      const done = await run('[[fail]] a storm');
      assert.equal(done.phase, 'failed');
      assert.equal(done.error?.stage, 'task');
      assert.match(done.error?.message ?? '', /DataInspectionFailed|inappropriate/);
      assert.equal(posted('/v1/video/generations').length, 1);
    });

    it('fails clearly when the link has expired, and keeps no file', async () => {
      const done = await run('[[expire:0]] a sunset');
      assert.equal(done.phase, 'failed');
      assert.equal(done.error?.stage, 'download');
      assert.match(done.error?.message ?? '', /HTTP 403/);
      assert.match(done.error?.message ?? '', /expired/);
      assert.deepEqual(
        readdirSync(dir).filter((f) => !f.startsWith('.')),
        [],
      );
      assert.ok(gw.cdnLog.every((e) => e.headers.authorization === undefined));
    });

    for (const [marker, words] of [
      ['[[html]]', /HTML page/],
      ['[[xml]]', /XML document .*AccessDenied/],
      ['[[truncated]]', /no "moov" box/],
    ] as const) {
      it(`does not count a ${marker} download as a video`, async () => {
        const done = await run(`${marker} a river`);
        assert.equal(done.phase, 'failed');
        assert.equal(done.error?.stage, 'check');
        assert.match(done.error?.message ?? '', words);
        assert.deepEqual(readdirSync(dir), [], 'nothing was kept');
      });
    }

    it('retries the download of a task whose link failed, without resubmitting it', async () => {
      const manager = new VideoTaskManager({
        http: () => http,
        store: memoryStore(),
        policy: () => ({ baseMs: 20, maxPollMs: 0, maxErrors: 3 }),
      });
      await manager.start();
      const task = await manager.submit({ ...wan, outputDir: dir });
      gw.advanceVideo(task.taskId ?? '', 'SUCCESS');
      gw.inject({ match: { origin: 'cdn' }, times: 1, action: { type: 'status', status: 503, body: 'busy' } });
      const failed = await manager.wait(task.localId);
      assert.equal(failed.error?.stage, 'download');
      manager.resume(task.localId);
      const done = await manager.wait(task.localId);
      assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
      assert.equal(posted('/v1/video/generations').length, 1);
      await manager.dispose();
    });
  });
});

describe('video task queries in each shape a gateway answers', function () {
  this.timeout(20_000);
  let gw: GatewayDouble;
  let http: HttpClient;
  let dir: string;
  const wan = { model: 'wan2.5-t2v-preview', size: '832*480', duration: 5 };

  before(async () => {
    gw = new GatewayDouble({ videoTiming: { manual: true } });
    await gw.start();
    http = clientFor(gw.url, DEMO_KEY).http;
  });
  after(() => gw.stop());
  beforeEach(() => {
    gw.clearLog();
    gw.clearFaults();
    dir = mkdtempSync(path.join(os.tmpdir(), 'media-shapes-'));
  });
  afterEach(() => {
    gw.setVideoQuery('task');
    rmSync(dir, { recursive: true, force: true });
  });

  const run = async (prompt: string, to: 'SUCCESS' | 'FAILURE' = 'SUCCESS') => {
    const manager = new VideoTaskManager({
      http: () => http,
      store: memoryStore(),
      policy: (): PollPolicy => ({ baseMs: 20, maxPollMs: 0, maxErrors: 3 }),
    });
    await manager.start();
    const task = await manager.submit({ ...wan, prompt, outputDir: dir });
    gw.advanceVideo(task.taskId ?? '', to);
    const done = await manager.wait(task.localId);
    await manager.dispose();
    return done;
  };
  const gets = (prefix: string) =>
    gw.log.filter((e) => e.origin === 'gateway' && e.method === 'GET' && e.path.startsWith(prefix));

  it('short shape: reads queued/processing/succeeded and fetches the gateway-served video with the key', async () => {
    gw.setVideoQuery('short');
    const id = await submitVideo(http, undefined, { ...wan, prompt: 'a paper boat' });
    const seen: string[] = [];
    let status = await queryVideo(http, undefined, id);
    seen.push(`${status.rawStatus}→${status.status}`);
    while (status.status !== 'SUCCESS') {
      gw.tickVideo();
      status = await queryVideo(http, undefined, id);
      if (!seen.at(-1)?.startsWith(`${status.rawStatus}→`)) seen.push(`${status.rawStatus}→${status.status}`);
    }
    assert.deepEqual(seen, ['processing→IN_PROGRESS', 'queued→QUEUED', 'processing→IN_PROGRESS', 'succeeded→SUCCESS']);
    assert.equal(status.videoUrl, `${gw.url}/v1/videos/${id}/content`);
    const file = await downloadVideo(http, undefined, status.videoUrl ?? '', { dir, baseName: 'boat' });
    assert.equal((await checkMp4File(file)).ok, true);
    const [content] = gets(`/v1/videos/${id}/content`);
    assert.equal(
      content?.headers.authorization,
      `Bearer ${DEMO_KEY}`,
      'the gateway-served video is fetched with the key',
    );
    assert.equal(gw.cdnLog.length, 0, 'the client never went to the upstream link');
  });

  it('short shape: a link written with a wrong server address is fetched from the configured gateway, never sent the key elsewhere', async () => {
    gw.setVideoQuery('short', 'http://localhost:3000');
    const done = await run('a kite');
    assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
    assert.match(done.videoUrl ?? '', /^http:\/\/localhost:3000\/v1\/videos\//);
    assert.equal((await checkMp4File(done.file ?? '')).ok, true);
    assert.equal(gets(`/v1/videos/${done.taskId}/content`).length, 1);
  });

  it('short shape: a failed task is a clear failure even though the gateway gives no reason', async () => {
    gw.setVideoQuery('short');
    const done = await run('a storm', 'FAILURE');
    assert.equal(done.phase, 'failed');
    assert.equal(done.error?.stage, 'task');
    assert.match(done.error?.message ?? '', /failed without a reason/);
    assert.deepEqual(readdirSync(dir), []);
  });

  it("OpenAI's video API only: moves to GET /v1/videos/{id} once, reads integer progress, downloads /content with the key", async () => {
    gw.setVideoQuery('openai');
    const id = await submitVideo(http, undefined, { ...wan, prompt: 'a lighthouse' });
    const first = await queryVideo(http, undefined, id);
    assert.deepEqual(
      { status: first.status, progress: first.progress, route: first.route },
      { status: 'QUEUED', progress: 0, route: 'videos' },
    );
    gw.advanceVideo(id, 'IN_PROGRESS');
    const running = await queryVideo(http, undefined, id, undefined, 'videos');
    assert.deepEqual([running.rawStatus, running.progress], ['in_progress', 30]);
    const done = await run('a lighthouse at dusk');
    assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
    assert.equal(done.queryRoute, 'videos');
    assert.equal(done.videoUrl, `${gw.url}/v1/videos/${done.taskId}/content`);
    assert.equal((await checkMp4File(done.file ?? '')).ok, true);
    assert.equal(
      gets(`/v1/video/generations/${done.taskId}`).length,
      1,
      'the spec route is asked once, then never again',
    );
    assert.ok(gets(`/v1/videos/${done.taskId}`).every((e) => e.headers.authorization === `Bearer ${DEMO_KEY}`));
    assert.equal(gw.cdnLog.length, 0);
  });

  it("OpenAI's video object with a link: the CDN link is downloaded without the key", async () => {
    const id = await submitVideo(http, undefined, { ...wan, prompt: 'a meadow' });
    gw.advanceVideo(id, 'SUCCESS');
    const status = await queryVideo(http, undefined, id, undefined, 'videos');
    assert.equal(status.status, 'SUCCESS');
    assert.ok(status.videoUrl?.startsWith(gw.cdnUrl), status.videoUrl);
    await downloadVideo(http, undefined, status.videoUrl ?? '', { dir, baseName: 'meadow' });
    assert.ok(gw.cdnLog.length > 0);
    for (const e of gw.cdnLog) assert.equal(e.headers.authorization, undefined);
  });

  it("OpenAI's video object: a failed task shows error.message and nothing is saved", async () => {
    gw.setVideoQuery('openai');
    const done = await run('[[fail]] a volcano', 'FAILURE');
    assert.equal(done.phase, 'failed');
    assert.match(done.error?.message ?? '', /DataInspectionFailed/);
    assert.deepEqual(readdirSync(dir), []);
  });

  it("the gateway's content route refuses an unfinished task in OpenAI's error shape", async () => {
    const id = await submitVideo(http, undefined, { ...wan, prompt: 'a cloud' });
    await assert.rejects(
      downloadVideo(http, undefined, `${gw.url}/v1/videos/${id}/content`, { dir, baseName: 'cloud' }),
      (e: unknown) => isGatewayError(e) && /HTTP 400/.test(e.message),
    );
    assert.deepEqual(
      readdirSync(dir).filter((f) => !f.startsWith('.')),
      [],
    );
  });
});

describe('a video task on compressed gateway timing', function () {
  this.timeout(20_000);
  let gw: GatewayDouble;
  before(async () => {
    gw = new GatewayDouble({ videoTiming: { stepMs: 60, pollMs: 40 } });
    await gw.start();
  });
  after(() => gw.stop());

  it('reaches SUCCESS on its own and is saved, polling at the given rhythm', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'media-timed-'));
    try {
      const statuses: string[] = [];
      const manager = new VideoTaskManager({
        http: () => clientFor(gw.url, DEMO_KEY).http,
        store: memoryStore(),
        policy: () => ({ baseMs: 50, maxPollMs: 0, maxErrors: 3 }),
      });
      manager.onDidChange((t) => {
        if (t?.remoteStatus && statuses.at(-1) !== t.remoteStatus) statuses.push(t.remoteStatus);
      });
      await manager.start();
      const task = await manager.submit({
        model: 'wan2.5-t2v-preview',
        prompt: 'time-lapse of clouds',
        size: '832*480',
        duration: 5,
        outputDir: dir,
      });
      const done = await manager.wait(task.localId);
      assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
      assert.equal(statuses.at(-1), 'SUCCESS');
      assert.ok(statuses.length >= 2, statuses.join());
      await manager.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('does not accept an error as an id', async () => {
    await assert.rejects(
      submitVideo(clientFor(gw.url, DEMO_KEY).http, undefined, {
        model: 'wan2.5-t2v-preview',
        prompt: '',
        size: '832*480',
        duration: 5,
      }),
      (e: unknown) => e instanceof GatewayError && /prompt is empty/.test(e.message),
    );
  });
});
