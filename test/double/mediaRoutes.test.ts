/**
 * The media routes of the gateway double (Images API, video tasks) and its CDN origin for result
 * links, driven with plain fetch as a client would. Video tasks run with `videoTiming.manual`, so
 * they move only when a test ticks them: no sleeps, no timing assertions.
 */
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import {
  DEMO_KEY,
  GatewayDouble,
  imageSize,
  mp4Boxes,
  mp4Summary,
  PNG_SIGNATURE,
  VIDEO_STATUSES,
  VIP_KEY,
  type RequestLogEntry,
} from '../gateway';
import { QUOTA_PER_USD } from '../gateway/world';

type Json = Record<string, unknown>;

const VIDEO_MODEL = 'wan2.5-t2v-preview';
const VIDEO_PRICE_USD = 0.25;

describe('gateway double: media routes', function () {
  let gw: GatewayDouble;

  beforeEach(async () => {
    gw = new GatewayDouble({ videoTiming: { manual: true } });
    await gw.start();
  });

  afterEach(async () => {
    await gw.stop();
  });

  const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
  const post = (path: string, body: unknown, key = DEMO_KEY, signal?: AbortSignal) =>
    fetch(gw.url + path, {
      method: 'POST',
      headers: { ...auth(key), 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  const get = (path: string, key = DEMO_KEY) => fetch(gw.url + path, { headers: auth(key) });
  const json = async (res: Response) => (await res.json()) as Json;
  const bytes = async (res: Response) => Buffer.from(await res.arrayBuffer());
  const userQuota = (key = DEMO_KEY) => Math.round((gw.quota(key).userUsd ?? NaN) * QUOTA_PER_USD);
  const lastEntry = (path: string): RequestLogEntry => {
    const entry = gw.log.filter((e) => e.path === path).at(-1);
    assert.ok(entry, `a log entry for ${path}`);
    return entry;
  };
  const noAuthorizationAtCdn = () => {
    assert.ok(gw.cdnLog.length > 0, 'the CDN was asked');
    assert.ok(gw.cdnLog.every((e) => e.origin === 'cdn' && e.headers.authorization === undefined));
  };

  const images = (body: Json, key = DEMO_KEY) => post('/v1/images/generations', body, key);
  const submit = (body: Json, key = DEMO_KEY) =>
    post('/v1/video/generations', { model: VIDEO_MODEL, size: '832*480', duration: 5, ...body }, key);
  const query = async (taskId: string, key = DEMO_KEY) => {
    const res = await get(`/v1/video/generations/${taskId}`, key);
    assert.equal(res.status, 200);
    const body = await json(res);
    assert.equal(body.code, 'success');
    assert.equal(body.message, '');
    return body.data as Json;
  };
  const submitted = async (prompt: string, extra: Json = {}): Promise<string> => {
    const res = await submit({ prompt, ...extra });
    assert.equal(res.status, 200);
    return (await json(res)).id as string;
  };
  const videoUrlOf = (dto: Json) => ((dto.data as Json).output as Json).video_url as string;
  const finished = async (prompt: string): Promise<string> => {
    const id = await submitted(prompt);
    gw.advanceVideo(id, 'SUCCESS');
    return videoUrlOf(await query(id));
  };

  describe('images', () => {
    it('answers gpt-image-1 with n real PNGs of the requested size, differing per index, billed per image', async () => {
      const before = userQuota();
      const res = await images({
        model: 'gpt-image-1',
        prompt: 'a red fox in snow',
        n: 2,
        size: '1536x1024',
        response_format: 'b64_json',
      });
      assert.equal(res.status, 200);
      const body = await json(res);
      assert.equal(body.output_format, 'png');
      assert.equal(body.size, '1536x1024');
      const data = body.data as Json[];
      assert.equal(data.length, 2);
      const pngs = data.map((d) => Buffer.from(d.b64_json as string, 'base64'));
      for (const png of pngs) {
        assert.deepEqual(png.subarray(0, 8), PNG_SIGNATURE);
        assert.equal(png.toString('latin1', 12, 16), 'IHDR');
        assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [1536, 1024]);
        // The IDAT inflates to exactly height × (1 + 3 × width) bytes: a whole 8-bit RGB picture.
        const idat = png.indexOf('IDAT', 0, 'latin1');
        const raw = inflateSync(png.subarray(idat + 4, idat + 4 + png.readUInt32BE(idat - 4)));
        assert.equal(raw.length, 1024 * (1 + 3 * 1536));
      }
      assert.notDeepEqual(pngs[0], pngs[1]);

      const charged = lastEntry('/v1/images/generations').media?.chargedQuota ?? 0;
      assert.ok(charged > 0);
      assert.equal(lastEntry('/v1/images/generations').media?.images, 2);
      assert.equal(before - userQuota(), charged);
      const usage = body.usage as Json;
      assert.equal(usage.output_tokens, 2 * 1568); // medium quality (auto) at 1536x1024, per image

      // The same prompt draws the same first picture.
      const again = await json(await images({ model: 'gpt-image-1', prompt: 'a red fox in snow', size: '1536x1024' }));
      assert.deepEqual(Buffer.from((again.data as Json[])[0]?.b64_json as string, 'base64'), pngs[0]);
    });

    it('answers output_format jpeg and webp with those formats at the requested size', async () => {
      const jpeg = await json(
        await images({ model: 'gpt-image-1', prompt: 'a lighthouse', size: '1024x1536', output_format: 'jpeg' }),
      );
      assert.equal(jpeg.output_format, 'jpeg');
      const jpg = Buffer.from((jpeg.data as Json[])[0]?.b64_json as string, 'base64');
      assert.deepEqual([...jpg.subarray(0, 3)], [0xff, 0xd8, 0xff]);
      assert.deepEqual([...jpg.subarray(-2)], [0xff, 0xd9]);
      assert.deepEqual(imageSize(jpg), { width: 1024, height: 1536 });

      const webp = await json(await images({ model: 'gpt-image-1', prompt: 'a lighthouse', output_format: 'webp' }));
      const wp = Buffer.from((webp.data as Json[])[0]?.b64_json as string, 'base64');
      assert.equal(wp.toString('latin1', 0, 4), 'RIFF');
      assert.equal(wp.toString('latin1', 8, 12), 'WEBP');
      assert.equal(wp.readUInt32LE(4) + 8, wp.length);
      assert.deepEqual(imageSize(wp), { width: 1024, height: 1024 });
    });

    it('answers the Ali model with CDN links that download without Authorization, or base64 when asked', async () => {
      const res = await images({ model: 'wanx2.1-t2i-turbo', prompt: 'a paper crane', n: 2, size: '1024x768' });
      assert.equal(res.status, 200);
      const body = await json(res);
      const data = body.data as Json[];
      assert.equal(data.length, 2);
      for (const item of data) {
        assert.deepEqual(Object.keys(item).sort(), ['b64_json', 'revised_prompt', 'url']);
        assert.equal(item.b64_json, '');
        assert.match(
          item.url as string,
          /^http:\/\/127\.0\.0\.1:\d+\/images\/[0-9a-f]{32}\.png\?Expires=\d+&OSSAccessKeyId=\w+&Signature=\S+$/,
        );
        assert.ok((item.url as string).startsWith(gw.cdnUrl));
        const file = await fetch(item.url as string);
        assert.equal(file.status, 200);
        assert.equal(file.headers.get('content-type'), 'image/png');
        assert.deepEqual(imageSize(await bytes(file)), { width: 1024, height: 768 });
      }
      assert.equal(((body.metadata as Json).output as Json).task_status, 'SUCCEEDED');
      noAuthorizationAtCdn();
      assert.equal(lastEntry('/v1/images/generations').media?.chargedQuota, 2 * Math.round(0.02 * QUOTA_PER_USD));

      // A client that sends its gateway key to the CDN is refused, and the log shows the header arrived.
      const leaked = await fetch((data[0]?.url as string) ?? '', { headers: auth(DEMO_KEY) });
      assert.equal(leaked.status, 400);
      assert.match(await leaked.text(), /<Code>InvalidArgument<\/Code>/);
      assert.equal(gw.cdnLog.at(-1)?.headers.authorization, `Bearer ${DEMO_KEY}`);

      const b64 = await json(
        await images({ model: 'wanx2.1-t2i-turbo', prompt: 'a paper crane', response_format: 'b64_json' }),
      );
      const item = (b64.data as Json[])[0] ?? {};
      assert.equal(item.url, '');
      assert.deepEqual(imageSize(Buffer.from(item.b64_json as string, 'base64')), { width: 1024, height: 1024 });
    });

    it('refuses × sizes, unsupported sizes, abbreviated models and moderated prompts, charging nothing', async () => {
      const before = userQuota();
      const times = await images({ model: 'gpt-image-1', prompt: 'x', size: '1024×1024' });
      assert.equal(times.status, 500);
      const timesBody = (await json(times)).error as Json;
      assert.equal(timesBody.code, 'invalid_request');
      assert.equal(timesBody.type, 'new_api_error');
      assert.match(timesBody.message as string, /use 'x' instead of the multiplication sign '×' \(request id: \w+\)$/);

      const odd = await images({ model: 'gpt-image-1', prompt: 'x', size: '1000x1000' });
      assert.equal(odd.status, 400);
      assert.deepEqual((await json(odd)).error, {
        message: "Invalid value: '1000x1000'. Supported values are: '1024x1024', '1536x1024', '1024x1536', and 'auto'.",
        type: 'invalid_request_error',
        param: 'size',
        code: 'invalid_value',
      });

      const aliOdd = await images({ model: 'wanx2.1-t2i-turbo', prompt: 'x', size: '4096x4096' });
      assert.equal(aliOdd.status, 400);
      assert.equal(((await json(aliOdd)).error as Json).type, 'ali_error');

      const abbreviated = await images({ model: 'gpt-image', prompt: 'x' });
      assert.equal(abbreviated.status, 503);
      const noChannel = (await json(abbreviated)).error as Json;
      assert.equal(noChannel.code, 'model_not_found');
      assert.match(
        noChannel.message as string,
        /^No available channel for model gpt-image under group default \(distributor\) \(request id: \w+\)$/,
      );

      const moderated = await images({ model: 'gpt-image-1', prompt: '[[moderation]] something violent' });
      assert.equal(moderated.status, 400);
      const blocked = (await json(moderated)).error as Json;
      assert.equal(blocked.code, 'moderation_blocked');
      assert.equal(blocked.type, 'image_generation_user_error');
      assert.match(blocked.message as string, /rejected by the safety system.*safety_violations=\[violence\]/);

      assert.equal(userQuota(), before);
    });

    it('holds the answer for [[slow:MS]], and charges nothing when the client gives up', async () => {
      const path = '/v1/images/generations';
      const slow = images({ model: 'gpt-image-1', prompt: '[[slow:300]] a snail' });
      while (!gw.log.some((e) => e.path === path)) await new Promise((r) => setImmediate(r));
      assert.equal(lastEntry(path).status, 0, 'no answer head while the image is "generating"');
      const res = await slow;
      assert.equal(res.status, 200);
      assert.deepEqual(lastEntry(path).media?.markers, ['[[slow:300]]']);
      assert.equal(lastEntry(path).media?.images, 1);

      const before = userQuota();
      const abort = new AbortController();
      const cancelled = post(
        path,
        { model: 'gpt-image-1', prompt: '[[slow:60000]] a glacier' },
        DEMO_KEY,
        abort.signal,
      ).catch(() => 'aborted');
      while (gw.log.filter((e) => e.path === path).length < 2) await new Promise((r) => setImmediate(r));
      abort.abort();
      assert.equal(await cancelled, 'aborted');
      assert.equal(lastEntry(path).media?.chargedQuota, 0);
      assert.equal(userQuota(), before);
    });
  });

  describe('video', () => {
    it('walks NOT_START → SUBMITTED → QUEUED → IN_PROGRESS → SUCCESS, one status per poll tick', async () => {
      const res = await submit({ prompt: 'a cat running on grass' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-new-api-other-ratios'), '{"resolution-480P":1,"seconds":5}');
      const task = await json(res);
      assert.match(task.id as string, /^task_[A-Za-z0-9]{32}$/);
      assert.equal(task.task_id, task.id);
      assert.equal(task.object, 'video');
      assert.equal(task.model, VIDEO_MODEL);
      assert.equal(task.status, 'queued');
      assert.equal(task.progress, 0);
      const id = task.id as string;

      const seen: Array<[unknown, unknown]> = [];
      let dto = await query(id);
      seen.push([dto.status, dto.progress]);
      // Between polls the row does not change, however often it is read.
      assert.equal((await query(id)).status, 'NOT_START');
      for (let i = 0; i < 4; i++) {
        gw.tickVideo();
        dto = await query(id);
        seen.push([dto.status, dto.progress]);
      }
      assert.deepEqual(seen, [
        ['NOT_START', '0%'],
        ['SUBMITTED', '10%'],
        ['QUEUED', '20%'],
        ['IN_PROGRESS', '30%'],
        ['SUCCESS', '100%'],
      ]);
      assert.ok(seen.every(([status]) => (VIDEO_STATUSES as readonly unknown[]).includes(status)));
      assert.equal(dto.task_id, id);
      assert.equal(dto.platform, '17');
      assert.equal(dto.action, 'textGenerate');
      assert.equal(dto.fail_reason, '');
      assert.ok((dto.finish_time as number) >= (dto.start_time as number) && (dto.start_time as number) > 0);
      const upstream = dto.data as Json;
      assert.equal((upstream.output as Json).task_status, 'SUCCEEDED');
      assert.deepEqual(upstream.usage, { duration: 5, video_count: 1, SR: 480 });
      const url = videoUrlOf(dto);
      assert.equal(dto.result_url, url);
      assert.match(url, /\/videos\/[0-9a-f]{32}\.mp4\?Expires=\d+&OSSAccessKeyId=\w+&Signature=\S+$/);
      assert.ok(url.startsWith(gw.cdnUrl));

      gw.tickVideo();
      assert.equal((await query(id)).status, 'SUCCESS', 'a finished task stays finished');
    });

    it('serves the result as a real MP4 (ftyp, moov, mdat) to a client without Authorization, ranges included', async () => {
      const url = await finished('a cat running on grass');
      const res = await fetch(url);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'video/mp4');
      const mp4 = await bytes(res);
      assert.equal(Number(res.headers.get('content-length')), mp4.length);
      assert.deepEqual(
        mp4Boxes(mp4).map((b) => b.type),
        ['ftyp', 'moov', 'mdat'],
      );
      const summary = mp4Summary(mp4);
      assert.equal(summary.codec, 'avc1');
      assert.deepEqual([summary.width, summary.height, summary.durationSec, summary.frames], [832, 480, 5, 120]);
      assert.ok(summary.samplesInside);

      const part = await fetch(url, { headers: { Range: 'bytes=100-199' } });
      assert.equal(part.status, 206);
      assert.equal(part.headers.get('content-range'), `bytes 100-199/${mp4.length}`);
      assert.deepEqual(await bytes(part), mp4.subarray(100, 200));
      noAuthorizationAtCdn();
    });

    it('charges at submit by model price × seconds × resolution ratio, and records it', async () => {
      let before = userQuota();
      const id = await submitted('a quiet lake');
      const at480 = Math.round(VIDEO_PRICE_USD * 5 * QUOTA_PER_USD);
      assert.equal(before - userQuota(), at480);
      assert.deepEqual(lastEntry('/v1/video/generations').media, {
        kind: 'videoSubmit',
        model: VIDEO_MODEL,
        markers: [],
        chargedQuota: at480,
        taskId: id,
      });
      assert.equal((await query(id)).quota, at480);

      before = userQuota();
      const res = await submit({ prompt: 'a quiet lake', size: '1920*1080', duration: '10' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-new-api-other-ratios'), `{"resolution-1080P":${1 / 0.3},"seconds":10}`);
      assert.equal(before - userQuota(), Math.round((VIDEO_PRICE_USD * QUOTA_PER_USD * 10) / 0.3));
    });

    it('reports [[fail]] as FAILURE with DashScope’s reason, and refunds the charge', async () => {
      const before = userQuota();
      const id = await submitted('[[fail]] a storm at sea');
      assert.ok(userQuota() < before);
      for (let i = 0; i < 4; i++) gw.tickVideo();
      const dto = await query(id);
      assert.equal(dto.status, 'FAILURE');
      assert.equal(dto.progress, '100%');
      assert.equal(
        dto.fail_reason,
        'task failed, code: DataInspectionFailed , message: Output data may contain inappropriate content.',
      );
      assert.equal(((dto.data as Json).output as Json).task_status, 'FAILED');
      assert.equal(dto.result_url, undefined);
      assert.equal(userQuota(), before);
      assert.equal(gw.videoTask(id)?.refunded, true);
    });

    it('refuses 1280*720 for this model naming the size, and other bad submissions, charging nothing', async () => {
      const before = userQuota();
      const hd = await submit({ prompt: 'a city at night', size: '1280*720' });
      assert.equal(hd.status, 400);
      const hdBody = await json(hd);
      assert.equal(hdBody.code, 'invalid_size');
      assert.equal(hdBody.data, null);
      assert.match(hdBody.message as string, /1280\*720/);

      const x = await submit({ prompt: 'a city', size: '832x480' });
      assert.equal(x.status, 500);
      assert.deepEqual(await json(x), {
        code: 'convert_to_ali_request_failed',
        message: 'invalid size: 832x480, example: 1920*1080',
        data: null,
      });

      const noPrompt = await submit({ prompt: '' });
      assert.equal(noPrompt.status, 400);
      assert.deepEqual(await json(noPrompt), { code: 'invalid_request', message: 'prompt is required', data: null });

      const words = await submit({ prompt: 'a city', duration: 'five' });
      assert.equal(words.status, 400);
      assert.equal((await json(words)).code, 'unmarshal_task_request_failed');

      const moderated = await submit({ prompt: '[[moderation]] a city' });
      assert.equal(moderated.status, 400);
      assert.deepEqual(await json(moderated), {
        code: 'ali_api_error',
        message: 'DataInspectionFailed: Input data may contain inappropriate content.',
        data: null,
      });

      const abbreviated = await submit({ model: 'wan2.5', prompt: 'a city' });
      assert.equal(abbreviated.status, 503);
      assert.equal(((await json(abbreviated)).error as Json).code, 'model_not_found');

      assert.equal(userQuota(), before);
    });

    it('keeps tasks to the key that made them: another key gets task_not_exist', async () => {
      const id = await submitted('a private video');
      const other = await get(`/v1/video/generations/${id}`, VIP_KEY);
      assert.equal(other.status, 400);
      assert.deepEqual(await json(other), { code: 'task_not_exist', message: 'task_not_exist', data: null });
      const unknown = await get('/v1/video/generations/task_doesnotexist00000000000000000');
      assert.equal(unknown.status, 400);
      assert.equal((await json(unknown)).code, 'task_not_exist');
      assert.equal((await query(id)).status, 'NOT_START');
    });

    it('answers an expired link with 403 and OSS’s XML AccessDenied', async () => {
      const url = await finished('[[expire:0]] a melting clock');
      const res = await fetch(url);
      assert.equal(res.status, 403);
      assert.equal(res.headers.get('content-type'), 'application/xml');
      const xml = await res.text();
      assert.match(xml, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<Error>/);
      assert.match(xml, /<Code>AccessDenied<\/Code>/);
      assert.match(xml, /<Message>Request has expired\.<\/Message>/);

      const tampered = await fetch(url.replace(/Expires=\d+/, 'Expires=9999999999'));
      assert.equal(tampered.status, 403);
      assert.match(await tampered.text(), /<Code>SignatureDoesNotMatch<\/Code>/);
      noAuthorizationAtCdn();
    });

    it('serves the html, xml and truncated variants with 200 and the wrong bytes', async () => {
      const html = await fetch(await finished('[[html]] a fox'));
      assert.equal(html.status, 200);
      assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(await html.text(), /^<!DOCTYPE html>/);

      const xml = await fetch(await finished('[[xml]] a fox'));
      assert.equal(xml.status, 200);
      assert.equal(xml.headers.get('content-type'), 'application/xml');
      assert.match(await xml.text(), /<Error><Code>AccessDenied<\/Code><Message>Access Denied<\/Message>/);

      const cut = await fetch(await finished('[[truncated]] a fox'));
      assert.equal(cut.status, 200);
      assert.equal(cut.headers.get('content-type'), 'video/mp4');
      const mp4 = await bytes(cut);
      assert.deepEqual(
        mp4Boxes(mp4).map((b) => b.type),
        ['ftyp', 'mdat'],
      );
      assert.equal(mp4Summary(mp4).hasMoov, false);
    });

    it('streams a [[big:MB]] MP4 of that size', async () => {
      const res = await fetch(await finished('[[big:3]] a long flight'));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-length'), String(3 * 1024 * 1024));
      const mp4 = await bytes(res);
      assert.equal(mp4.length, 3 * 1024 * 1024);
      const summary = mp4Summary(mp4);
      assert.ok(summary.hasMoov && summary.samplesInside);
      assert.equal(summary.frames, 120);
    });

    it('leaves a [[stuck]] task IN_PROGRESS until the timeout sweep fails and refunds it', async () => {
      const id = await submitted('[[stuck]] an endless loop');
      for (let i = 0; i < 8; i++) gw.tickVideo();
      assert.equal((await query(id)).status, 'IN_PROGRESS');
      assert.throws(() => gw.advanceVideo(id, 'SUCCESS'), /cannot reach SUCCESS/);

      const sweeping = new GatewayDouble({ videoTiming: { manual: true, timeoutMinutes: 0.0001 } }); // 6 ms
      await sweeping.start();
      try {
        const res = await fetch(`${sweeping.url}/v1/video/generations`, {
          method: 'POST',
          headers: { ...auth(DEMO_KEY), 'Content-Type': 'application/json' },
          body: JSON.stringify({
            model: VIDEO_MODEL,
            prompt: '[[stuck]] an endless loop',
            size: '832*480',
            duration: 5,
          }),
        });
        const taskId = (await json(res)).id as string;
        // Until the task is past its timeout by the clock the double reads (the condition the sweep
        // checks): it was submitted before its answer arrived.
        const due = Date.now() + 0.0001 * 60_000;
        while (!(Date.now() >= due)) await new Promise((r) => setTimeout(r, 1));
        sweeping.tickVideo();
        const dto = (
          await json(await fetch(`${sweeping.url}/v1/video/generations/${taskId}`, { headers: auth(DEMO_KEY) }))
        ).data as Json;
        assert.equal(dto.status, 'FAILURE');
        assert.equal(dto.fail_reason, '任务超时（0.0001分钟）');
        assert.equal(sweeping.videoTask(taskId)?.refunded, true);
        assert.equal(sweeping.quota(DEMO_KEY).userUsd, 100);
      } finally {
        await sweeping.stop();
      }
    });

    it('moves tasks on its own with real-time timing (polling loop)', async () => {
      const live = new GatewayDouble({ videoTiming: { stepMs: 10, pollMs: 15 } });
      await live.start();
      try {
        const res = await fetch(`${live.url}/v1/video/generations`, {
          method: 'POST',
          headers: { ...auth(DEMO_KEY), 'Content-Type': 'application/json' },
          body: JSON.stringify({ model: VIDEO_MODEL, prompt: 'a sunrise', size: '624*624', duration: 5 }),
        });
        const taskId = (await json(res)).id as string;
        // Only a safety net for a broken loop: the condition decides, however busy the machine.
        const deadline = Date.now() + 15_000;
        let status = '';
        while (status !== 'SUCCESS' && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 10));
          status = (
            (await json(await fetch(`${live.url}/v1/video/generations/${taskId}`, { headers: auth(DEMO_KEY) })))
              .data as Json
          ).status as string;
        }
        assert.equal(status, 'SUCCESS');
      } finally {
        await live.stop();
      }
    });
  });

  describe('video query shapes', () => {
    it('short: the generic route answers the four lower-case words, url on its own content route, error and metadata null', async () => {
      gw.setVideoQuery('short');
      const id = await submitted('a paper boat');
      assert.deepEqual(await query(id), {
        error: null,
        format: 'mp4',
        metadata: null,
        status: 'processing',
        task_id: id,
        url: '',
      });
      gw.advanceVideo(id, 'QUEUED');
      assert.equal((await query(id)).status, 'queued');
      gw.advanceVideo(id, 'SUCCESS');
      const done = await query(id);
      assert.equal(done.status, 'succeeded');
      assert.equal(done.url, `${gw.url}/v1/videos/${id}/content`);
      gw.setVideoQuery('short', 'http://localhost:3000/');
      assert.equal(
        (await query(id)).url,
        `http://localhost:3000/v1/videos/${id}/content`,
        'written with the configured server address',
      );
      const failed = await submitted('[[fail]] a storm');
      gw.advanceVideo(failed, 'FAILURE');
      assert.deepEqual(await query(failed), {
        error: null,
        format: 'mp4',
        metadata: null,
        status: 'failed',
        task_id: failed,
        url: '',
      });
    });

    it("GET /v1/videos/{id} answers OpenAI's video object in every shape; with a link only outside `openai`", async () => {
      const id = await submitted('a lighthouse');
      const object = async () => {
        const res = await get(`/v1/videos/${id}`);
        assert.equal(res.status, 200);
        return json(res);
      };
      const queued = await object();
      assert.equal(queued.object, 'video');
      assert.equal(queued.id, id);
      assert.equal(queued.status, 'queued');
      assert.equal(queued.progress, 0);
      assert.equal(queued.size, '832x480');
      gw.advanceVideo(id, 'IN_PROGRESS');
      assert.deepEqual([(await object()).status, (await object()).progress], ['in_progress', 30]);
      gw.advanceVideo(id, 'SUCCESS');
      const done = await object();
      assert.equal(done.status, 'completed');
      assert.equal(done.progress, 100);
      assert.ok(((done.metadata as Json).url as string).startsWith(gw.cdnUrl));
      gw.setVideoQuery('openai');
      assert.equal((await object()).metadata, undefined);
      const failed = await submitted('[[fail]] a volcano');
      gw.advanceVideo(failed, 'FAILURE');
      const f = await json(await get(`/v1/videos/${failed}`));
      assert.equal(f.status, 'failed');
      assert.deepEqual(f.error, {
        message: 'task failed, code: DataInspectionFailed , message: Output data may contain inappropriate content.',
        code: 'generation_failed',
      });
      const unknown = await get('/v1/videos/task_nope');
      assert.equal(unknown.status, 400);
      assert.deepEqual(await json(unknown), { code: 'task_not_exist', message: 'task_not_exist', data: null });
    });

    it('openai: the generic query route is not served (404 Invalid URL)', async () => {
      gw.setVideoQuery('openai');
      const id = await submitted('a cloud');
      const res = await get(`/v1/video/generations/${id}`);
      assert.equal(res.status, 404);
      assert.match(
        ((await json(res)).error as Json).message as string,
        /^Invalid URL \(GET \/v1\/video\/generations\//,
      );
    });

    it('GET /v1/videos/{id}/content streams the finished MP4 to its owner only, with the key', async () => {
      const id = await submitted('a meadow');
      const early = await get(`/v1/videos/${id}/content`);
      assert.equal(early.status, 400);
      assert.deepEqual(await json(early), {
        error: { message: 'Task is not completed yet, current status: NOT_START', type: 'invalid_request_error' },
      });
      gw.advanceVideo(id, 'SUCCESS');
      const noKey = await fetch(`${gw.url}/v1/videos/${id}/content`);
      assert.equal(noKey.status, 401);
      const other = await get(`/v1/videos/${id}/content`, VIP_KEY);
      assert.equal(other.status, 404);
      assert.deepEqual(await json(other), { error: { message: 'Task not found', type: 'invalid_request_error' } });
      const res = await get(`/v1/videos/${id}/content`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'video/mp4');
      const body = await bytes(res);
      assert.equal(Number(res.headers.get('content-length')), body.length);
      assert.equal(mp4Summary(body).hasMoov, true);
      const expired = await submitted('[[expire:0]] a sunset');
      gw.advanceVideo(expired, 'SUCCESS');
      assert.equal(
        (await get(`/v1/videos/${expired}/content`)).status,
        502,
        'the upstream link expired: the proxy cannot fetch it',
      );
    });
  });
});
