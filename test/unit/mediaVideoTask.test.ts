import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { GatewayError } from '../../src/core/errors';
import { normaliseStatus, parseProgress, parseVideoStatus, type VideoStatus } from '../../src/core/media/videoStatus';
import { FileLock } from '../../src/core/chat/store/lock';
import { VideoDownloadGuard } from '../../src/core/media/downloadGuard';
import { mediaBaseName } from '../../src/core/media/mediaFiles';
import * as T from '../../src/core/media/videoTaskStates';
import { VideoTaskManager, type TaskStore } from '../../src/core/media/videoTaskManager';
import type { TaskWork } from '../../src/core/media/taskWork';
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { clientFor } from '../support/client';

const policy: T.PollPolicy = { baseMs: 15_000, maxPollMs: 60 * 60_000, maxErrors: 3 };
const params = { model: 'wan2.5-t2v-preview', prompt: 'a fox', size: '832*480', duration: 5, outputDir: '/tmp/videos' };
const status = (s: Partial<VideoStatus> & Pick<VideoStatus, 'status'>): VideoStatus => ({ rawStatus: s.status, ...s });

describe('video task state machine', () => {
  const t0 = 1_000_000;
  const fresh = () => T.accepted(T.createTask(params, 'local-1', t0), 'task_1', t0, policy);

  it('starts as submitting, becomes running when accepted and polls first after 2 s', () => {
    const created = T.createTask(params, 'local-1', t0);
    assert.equal(created.phase, 'submitting');
    assert.equal(T.isActive(created), true);
    const task = fresh();
    assert.deepEqual(
      { phase: task.phase, taskId: task.taskId, remoteStatus: task.remoteStatus, nextPollAt: task.nextPollAt },
      { phase: 'running', taskId: 'task_1', remoteStatus: 'NOT_START', nextPollAt: t0 + 2000 },
    );
  });

  it('follows NOT_START → SUBMITTED → QUEUED → IN_PROGRESS with progress, polling early at 2, 5 and 10 s, then every interval', () => {
    let task = fresh();
    let now = t0;
    const shown = { NOT_START: 'Queued', SUBMITTED: 'Queued', QUEUED: 'Queued', IN_PROGRESS: 'Generating 30 %' };
    // After the first looks the gateway refreshes every 15 s: no point asking sooner.
    const delays = { NOT_START: 5_000, SUBMITTED: 10_000, QUEUED: 15_000, IN_PROGRESS: 15_000 };
    for (const [s, p] of [
      ['NOT_START', 0],
      ['SUBMITTED', 10],
      ['QUEUED', 20],
      ['IN_PROGRESS', 30],
    ] as const) {
      now = task.nextPollAt ?? now;
      task = T.observed(task, status({ status: s, progress: p }), now, policy);
      assert.equal(task.phase, 'running');
      assert.equal(task.remoteStatus, s);
      assert.equal(task.progress, p);
      assert.equal(task.nextPollAt, now + delays[s]);
      assert.equal(T.describeTask(task), shown[s], 'people read states, never the gateway codes');
    }
    assert.equal(task.polls, 4);
  });

  it('asks less often as a task runs long: 2× after 5 minutes, 4× after 15', () => {
    const task = { ...fresh(), polls: 3 };
    assert.equal(T.pollDelay(task, t0 + 60_000, policy), 15_000);
    assert.equal(T.pollDelay(task, t0 + 6 * 60_000, policy), 30_000);
    assert.equal(T.pollDelay(task, t0 + 20 * 60_000, policy), 60_000);
  });

  it('SUCCESS with a link moves on to downloading; SUCCESS without one is a failure that says so', () => {
    const done = T.observed(
      fresh(),
      status({ status: 'SUCCESS', progress: 100, videoUrl: 'https://cdn.example/v.mp4?sig=1' }),
      t0 + 5000,
      policy,
    );
    assert.deepEqual(
      { phase: done.phase, url: done.videoUrl, next: done.nextPollAt },
      { phase: 'downloading', url: 'https://cdn.example/v.mp4?sig=1', next: undefined },
    );
    const bare = T.observed(fresh(), status({ status: 'SUCCESS' }), t0 + 5000, policy);
    assert.equal(bare.phase, 'failed');
    assert.equal(bare.error?.stage, 'task');
    assert.match(bare.error?.message ?? '', /no video link/);
  });

  it('FAILURE is final, shows the gateway reason and is never resubmitted', () => {
    const failed = T.observed(
      fresh(),
      status({ status: 'FAILURE', failReason: 'DataInspectionFailed: Output data may contain inappropriate content.' }),
      t0 + 5000,
      policy,
    );
    assert.equal(failed.phase, 'failed');
    assert.equal(T.isFinal(failed), true);
    assert.match(
      failed.error?.message ?? '',
      /DataInspectionFailed: Output data may contain inappropriate content\..*not resubmitted/,
    );
    assert.equal(failed.nextPollAt, undefined);
    assert.equal(T.resumed(failed, t0 + 6000), failed, 'a task that failed on the gateway cannot be resumed');
    assert.equal(
      T.observed(failed, status({ status: 'SUCCESS', videoUrl: 'https://x/y.mp4' }), t0 + 7000, policy),
      failed,
      'a final task ignores late answers',
    );
    assert.equal(
      T.describeTask(failed),
      'Failed: DataInspectionFailed: Output data may contain inappropriate content.',
      "the gateway's reason, as it said it",
    );
  });

  it('words every state for people: Submitting, Queued, Generating N %, Downloading, Done, Failed: <reason>, Stopped', () => {
    assert.equal(T.describeTask(T.createTask(params, 'l', t0)), 'Submitting');
    assert.equal(T.describeTask(fresh()), 'Queued');
    assert.equal(
      T.describeTask(T.observed(fresh(), status({ status: 'IN_PROGRESS' }), t0 + 5000, policy)),
      'Generating',
      'no progress reported: no number invented',
    );
    assert.equal(
      T.describeTask(T.observed(fresh(), status({ status: 'IN_PROGRESS', progress: 40 }), t0 + 5000, policy)),
      'Generating 40 %',
    );
    assert.equal(
      T.describeTask(T.observed(fresh(), status({ status: 'UNKNOWN', rawStatus: 'WEIRD' }), t0 + 5000, policy)),
      'Waiting for the gateway',
    );
    const downloading = T.observed(
      fresh(),
      status({ status: 'SUCCESS', videoUrl: 'https://x/y.mp4' }),
      t0 + 5000,
      policy,
    );
    assert.equal(T.describeTask(downloading), 'Downloading');
    assert.equal(T.describeTask(T.downloaded(downloading, '/tmp/v.mp4', t0 + 9000)), 'Done');
    assert.equal(
      T.describeTask(T.downloadFailed(downloading, { kind: 'network', message: 'socket hang up' }, t0 + 9000)),
      'Failed: the video could not be downloaded',
    );
    assert.equal(
      T.describeTask(T.observed(fresh(), status({ status: 'FAILURE' }), t0 + 5000, policy)),
      'Failed: no reason given',
    );
    assert.equal(
      T.describeTask(T.restored(T.createTask(params, 'l', t0), t0 + 1)),
      'Failed: VS Code closed during the submission',
    );
    // A task stored by an older version has no short reason: its stage words it.
    const { reason: _r, ...older } = T.downloadFailed(
      downloading,
      { kind: 'protocol', message: 'not an MP4' },
      t0 + 9000,
    ).error ?? { kind: '', message: '', stage: 'check' as const };
    assert.equal(
      T.describeTask({ ...downloading, phase: 'failed', error: older }),
      'Failed: the downloaded file is not a playable video',
    );
  });

  it('keeps polling through UNKNOWN and unknown words, bounded by the poll limit', () => {
    let task = T.observed(fresh(), status({ status: 'UNKNOWN', rawStatus: 'WEIRD' }), t0 + 5000, policy);
    assert.equal(task.phase, 'running');
    assert.equal(task.rawStatus, 'WEIRD');
    task = T.observed(task, status({ status: 'IN_PROGRESS' }), t0 + policy.maxPollMs, policy);
    assert.deepEqual({ phase: task.phase, by: task.stoppedBy }, { phase: 'stopped', by: 'limit' });
    assert.equal(T.describeTask(task), 'Stopped (time limit)');
    const resumed = T.resumed(task, t0 + policy.maxPollMs + 10);
    assert.deepEqual(
      { phase: resumed.phase, next: resumed.nextPollAt, from: resumed.pollStartedAt, stopped: resumed.stoppedBy },
      { phase: 'running', next: t0 + policy.maxPollMs + 10, from: t0 + policy.maxPollMs + 10, stopped: undefined },
    );
  });

  it('backs off after failed queries and stops (resumable) after too many; a refused key stops at once', () => {
    const net = new GatewayError('network', 'connection reset');
    let task = fresh();
    const delays: number[] = [];
    for (let i = 0; i < policy.maxErrors - 1; i++) {
      task = T.pollFailed(task, net, t0, policy);
      delays.push((task.nextPollAt ?? 0) - t0);
    }
    assert.deepEqual(delays, [15_000, 30_000]);
    assert.equal(T.pollDelay({ ...task, errorsInRow: 10 }, t0, policy), 60_000, 'capped at four intervals');
    task = T.pollFailed(task, net, t0, policy);
    assert.deepEqual(
      { phase: task.phase, by: task.stoppedBy, stage: task.error?.stage },
      { phase: 'stopped', by: 'errors', stage: 'poll' },
    );
    const auth = T.pollFailed(fresh(), new GatewayError('auth', 'Invalid token'), t0, policy);
    assert.equal(auth.phase, 'stopped');
    // A good answer clears the error count.
    const again = T.observed(T.pollFailed(fresh(), net, t0, policy), status({ status: 'QUEUED' }), t0 + 1, policy);
    assert.equal(again.errorsInRow, 0);
  });

  it('treats a task the gateway does not know as failed', () => {
    const gone = T.pollFailed(
      fresh(),
      new GatewayError('badRequest', 'task_not_exist', { code: 'task_not_exist' }),
      t0,
      policy,
    );
    assert.equal(gone.phase, 'failed');
    assert.match(gone.error?.message ?? '', /does not know the task task_1/);
  });

  it('records a saved file, or a failed download that may be fetched again (without resubmitting)', () => {
    const downloading = T.observed(fresh(), status({ status: 'SUCCESS', videoUrl: 'https://x/v.mp4' }), t0, policy);
    const saved = T.downloaded(downloading, '/tmp/videos/v.mp4', t0 + 10);
    assert.deepEqual(
      { phase: saved.phase, file: saved.file, finished: saved.finishedAt },
      { phase: 'succeeded', file: '/tmp/videos/v.mp4', finished: t0 + 10 },
    );
    const expired = T.downloadFailed(
      downloading,
      new GatewayError('badRequest', 'HTTP 403 Request has expired'),
      t0 + 10,
    );
    assert.deepEqual({ phase: expired.phase, stage: expired.error?.stage }, { phase: 'failed', stage: 'download' });
    const html = T.downloadFailed(downloading, new GatewayError('protocol', 'not an MP4: an HTML page'), t0 + 10);
    assert.equal(html.error?.stage, 'check');
    const retry = T.resumed(expired, t0 + 20);
    assert.deepEqual(
      { phase: retry.phase, error: retry.error, taskId: retry.taskId },
      { phase: 'running', error: undefined, taskId: 'task_1' },
    );
  });

  it('lets the user stop polling and resume it', () => {
    const stopped = T.stoppedByUser(fresh(), t0 + 1);
    assert.deepEqual(
      { phase: stopped.phase, by: stopped.stoppedBy, next: stopped.nextPollAt },
      { phase: 'stopped', by: 'user', next: undefined },
    );
    assert.equal(T.describeTask(stopped), 'Stopped (by you)');
    assert.equal(T.resumed(stopped, t0 + 2).phase, 'running');
    const submitting = T.createTask(params, 'x', t0);
    assert.equal(T.stoppedByUser(submitting, t0), submitting, 'a submission in flight cannot be stopped half-way');
  });

  it('after a restart: queries a running task at once, downloads again, never resubmits an unknown submission', () => {
    const running = { ...fresh(), nextPollAt: t0 + 60_000 };
    assert.equal(T.restored(running, t0 + 1000).nextPollAt, t0 + 1000);
    const downloading = T.observed(fresh(), status({ status: 'SUCCESS', videoUrl: 'https://x/v.mp4' }), t0, policy);
    assert.equal(T.restored(downloading, t0 + 1000).phase, 'downloading');
    const submitting = T.restored(T.createTask(params, 'x', t0), t0 + 1000);
    assert.equal(submitting.phase, 'failed');
    assert.match(submitting.error?.message ?? '', /not submitted again/);
    const done = T.downloaded(downloading, '/v.mp4', t0);
    assert.equal(T.restored(done, t0 + 5), done);
  });

  it('survives a JSON round trip through storage exactly', () => {
    const task = T.pollFailed(
      T.observed(fresh(), status({ status: 'QUEUED', progress: 20 }), t0 + 5000, policy),
      new GatewayError('network', 'reset', { requestId: 'r1' }),
      t0 + 6000,
      policy,
    );
    const stored = JSON.parse(JSON.stringify([task]));
    assert.deepEqual(z.parse(T.storedTasksSchema, stored), [task]);
  });
});

describe('reading task queries', () => {
  it('reads the envelope: status, "NN%" progress, and the link at data.data.output.video_url first', () => {
    const s = parseVideoStatus({
      code: 'success',
      message: '',
      data: {
        task_id: 'task_1',
        status: 'SUCCESS',
        progress: '100%',
        fail_reason: '',
        result_url: 'https://cdn.example/result.mp4',
        data: { output: { task_status: 'SUCCEEDED', video_url: 'https://cdn.example/output.mp4?Expires=1' } },
      },
    });
    assert.deepEqual(s, {
      status: 'SUCCESS',
      rawStatus: 'SUCCESS',
      progress: 100,
      videoUrl: 'https://cdn.example/output.mp4?Expires=1',
    });
  });

  it('falls back to result_url, then to a link in fail_reason (older gateways)', () => {
    assert.equal(
      parseVideoStatus({
        code: 'success',
        data: { status: 'SUCCESS', result_url: 'https://r/v.mp4', data: { output: {} } },
      }).videoUrl,
      'https://r/v.mp4',
    );
    assert.equal(
      parseVideoStatus({ code: 'success', data: { status: 'SUCCESS', fail_reason: 'https://old/v.mp4', data: null } })
        .videoUrl,
      'https://old/v.mp4',
    );
    assert.equal(
      parseVideoStatus({ code: 'success', data: { status: 'SUCCESS', fail_reason: 'https://old/v.mp4' } }).failReason,
      undefined,
      'a link is not a reason',
    );
  });

  it('gives the failure reason: fail_reason, else the upstream code and message', () => {
    assert.equal(
      parseVideoStatus({
        code: 'success',
        data: { status: 'FAILURE', progress: '100%', fail_reason: 'task failed, code: X , message: Y' },
      }).failReason,
      'task failed, code: X , message: Y',
    );
    assert.equal(
      parseVideoStatus({
        code: 'success',
        data: {
          status: 'FAILURE',
          fail_reason: '',
          data: { output: { task_status: 'FAILED', code: 'DataInspectionFailed', message: 'bad' } },
        },
      }).failReason,
      'DataInspectionFailed: bad',
    );
  });

  it('maps the lower-case words of other variants and parses progress', () => {
    assert.deepEqual(
      ['succeeded', 'completed', 'failed', 'queued', 'processing', 'in_progress', 'NOT_START', 'whatever'].map(
        normaliseStatus,
      ),
      ['SUCCESS', 'SUCCESS', 'FAILURE', 'QUEUED', 'IN_PROGRESS', 'IN_PROGRESS', 'NOT_START', 'UNKNOWN'],
    );
    assert.deepEqual(['30%', 45, '100%', 'n/a', undefined].map(parseProgress), [30, 45, 100, undefined, undefined]);
  });

  it('reads the short shape: lower-case status, the link in url or metadata.url, the error message', () => {
    const ok = parseVideoStatus({
      code: 'success',
      data: {
        task_id: 'task_2',
        status: 'succeeded',
        url: 'https://gw.example/v1/videos/task_2/content',
        format: 'mp4',
        metadata: null,
        error: null,
      },
    });
    assert.deepEqual(ok, {
      status: 'SUCCESS',
      rawStatus: 'succeeded',
      videoUrl: 'https://gw.example/v1/videos/task_2/content',
    });
    assert.equal(
      parseVideoStatus({
        code: 'success',
        data: { status: 'succeeded', url: '', metadata: { url: 'https://cdn.example/m.mp4' } },
      }).videoUrl,
      'https://cdn.example/m.mp4',
    );
    assert.deepEqual(parseVideoStatus({ code: 'success', data: { status: 'processing', url: '' } }), {
      status: 'IN_PROGRESS',
      rawStatus: 'processing',
    });
    assert.deepEqual(parseVideoStatus({ code: 'success', data: { status: 'queued', url: '', error: null } }), {
      status: 'QUEUED',
      rawStatus: 'queued',
    });
    assert.equal(
      parseVideoStatus({
        code: 'success',
        data: { status: 'failed', error: { message: 'quota of the upstream exhausted', code: 'x' } },
      }).failReason,
      'quota of the upstream exhausted',
    );
    assert.equal(
      parseVideoStatus({ code: 'success', data: { status: 'failed', error: 'plain words' } }).failReason,
      'plain words',
    );
  });

  it("reads OpenAI's video object: integer progress, metadata.url, error.message; no link means the gateway serves it", () => {
    assert.deepEqual(parseVideoStatus({ id: 'video_1', object: 'video', status: 'in_progress', progress: 42 }), {
      status: 'IN_PROGRESS',
      rawStatus: 'in_progress',
      progress: 42,
      servedByGateway: true,
    });
    assert.deepEqual(
      parseVideoStatus({
        id: 'video_1',
        object: 'video',
        status: 'completed',
        progress: 100,
        metadata: { url: 'https://cdn.example/v.mp4' },
      }),
      {
        status: 'SUCCESS',
        rawStatus: 'completed',
        progress: 100,
        videoUrl: 'https://cdn.example/v.mp4',
        servedByGateway: true,
      },
    );
    const failed = parseVideoStatus({
      id: 'video_1',
      object: 'video',
      status: 'failed',
      progress: 100,
      error: { message: 'moderation blocked', code: 'generation_failed' },
    });
    assert.equal(failed.status, 'FAILURE');
    assert.equal(failed.failReason, 'moderation blocked');
    assert.equal(
      parseVideoStatus({ id: 'v', object: 'video', status: 'failed', error: { code: 'generation_failed' } }).failReason,
      'generation_failed',
    );
    assert.equal(
      parseVideoStatus({ id: 'v', object: 'video', status: 'queued', progress: '5%' }).progress,
      5,
      'a string progress is read too',
    );
  });

  it('takes an error object in a 200 answer for the error it is', () => {
    assert.throws(
      () =>
        parseVideoStatus({
          error: { message: 'Task not found (request id: 2025X)', type: 'invalid_request_error', code: '' },
        }),
      (e: unknown) =>
        e instanceof GatewayError &&
        e.kind === 'badRequest' &&
        e.requestId === '2025X' &&
        /Task not found/.test(e.message),
    );
  });

  it('turns an error envelope into the gateway error', () => {
    assert.throws(
      () => parseVideoStatus({ code: 'task_not_exist', message: 'task_not_exist', data: null }),
      (e: unknown) => e instanceof GatewayError && e.code === 'task_not_exist',
    );
    assert.throws(
      () => parseVideoStatus({ code: 'success', data: 'not a task' }),
      (e: unknown) => e instanceof GatewayError && e.kind === 'protocol',
    );
  });
});

/** Storage as the host keeps it: a value replaced as a whole, JSON-serialised. */
class MemoryStore implements TaskStore {
  value: unknown;
  saves = 0;
  load() {
    return this.value === undefined ? undefined : JSON.parse(JSON.stringify(this.value));
  }
  async save(tasks: T.VideoTask[]) {
    this.saves++;
    this.value = JSON.parse(JSON.stringify(tasks));
  }
}

describe('video task manager against the double (manual timing)', function () {
  this.timeout(20_000);
  let gw: GatewayDouble;
  let dir: string;
  const fast: T.PollPolicy = { baseMs: 30, maxPollMs: 0, maxErrors: 3 };

  before(async () => {
    gw = new GatewayDouble({ videoTiming: { manual: true } });
    await gw.start();
  });
  after(() => gw.stop());
  beforeEach(() => {
    gw.clearLog();
    dir = mkdtempSync(path.join(os.tmpdir(), 'video-tasks-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const manager = (store: TaskStore) =>
    new VideoTaskManager({ http: () => clientFor(gw.url, DEMO_KEY).http, store, policy: () => fast });
  const until = async (check: () => boolean, what: string, ms = 5000) => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  /** Storage holding a finished task whose download a restart (or a crash) interrupted. */
  const interruptedDownload = async (): Promise<{ store: MemoryStore; stored: unknown; task: T.VideoTask }> => {
    const store = new MemoryStore();
    const first = manager(store);
    await first.start();
    const task = await first.submit({ ...params, prompt: '[[big:20]] a long download', outputDir: dir });
    gw.advanceVideo(task.taskId ?? '', 'SUCCESS');
    await until(() => first.find(task.localId)?.phase === 'downloading', 'downloading');
    await first.dispose();
    assert.equal(z.parse(T.storedTasksSchema, store.value)[0]?.phase, 'downloading');
    return { store, stored: store.value, task };
  };

  it('resumes after a restart from storage: same task, no second submit, the video saved once', async () => {
    const store = new MemoryStore();
    const first = manager(store);
    await first.start();
    const task = await first.submit({ ...params, outputDir: dir });
    assert.ok(task.taskId?.startsWith('task_'));
    const id = task.taskId ?? '';
    gw.advanceVideo(id, 'IN_PROGRESS');
    await until(() => first.find(id)?.remoteStatus === 'IN_PROGRESS', 'IN_PROGRESS');
    await first.dispose();
    const stored = z.parse(T.storedTasksSchema, store.value);
    assert.equal(stored[0]?.phase, 'running', 'storage holds the task as running');

    // "VS Code restarts": the gateway finishes meanwhile; a new manager picks it up from storage.
    gw.advanceVideo(id, 'SUCCESS');
    const second = manager(store);
    await second.start();
    const done = await second.wait(id);
    assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
    assert.equal(done.localId, task.localId);
    assert.ok(done.file && readdirSync(dir).includes(path.basename(done.file)));
    assert.equal(
      gw.log.filter((e) => e.method === 'POST' && e.path === '/v1/video/generations').length,
      1,
      'submitted exactly once',
    );
    assert.ok(
      gw.cdnLog.length >= 1 && gw.cdnLog.every((e) => e.headers.authorization === undefined),
      'no key to the CDN',
    );
    await second.dispose();
  });

  it('resumes a download that was interrupted by the restart', async () => {
    const { store, task } = await interruptedDownload();
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.mp4')),
      [],
      'the interrupted download left no file',
    );
    const second = manager(store);
    await second.start();
    const done = await second.wait(task.localId);
    assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
    assert.deepEqual(
      readdirSync(dir).filter((f) => !f.startsWith('.')),
      [path.basename(done.file ?? '')],
    );
    await second.dispose();
  });

  describe('a restored download in several windows', () => {
    let guardDir: string;
    beforeEach(() => (guardDir = mkdtempSync(path.join(os.tmpdir(), 'video-guard-'))));
    afterEach(() => rmSync(guardDir, { recursive: true, force: true }));

    /** A window: its own copy of the stored tasks (VS Code caches the workspace state per window), one guard folder for all. */
    const windowOn = (stored: unknown, lines: string[] = []) => {
      const store = new MemoryStore();
      store.value = JSON.parse(JSON.stringify(stored));
      return new VideoTaskManager({
        http: () => clientFor(gw.url, DEMO_KEY).http,
        store,
        policy: () => fast,
        downloads: new VideoDownloadGuard(guardDir),
        log: (line) => lines.push(line),
      });
    };

    const videoGets = () => gw.cdnLog.filter((e) => e.method === 'GET').length;

    it('two windows restoring it download the video once, and both show the one file', async () => {
      const { stored, task } = await interruptedDownload();
      const before = videoGets();
      const a = windowOn(stored);
      const b = windowOn(stored);
      await Promise.all([a.start(), b.start()]);
      const [doneA, doneB] = await Promise.all([a.wait(task.localId), b.wait(task.localId)]);
      assert.equal(doneA.phase, 'succeeded', JSON.stringify(doneA.error));
      assert.equal(doneB.phase, 'succeeded', JSON.stringify(doneB.error));
      assert.equal(doneA.file, doneB.file);
      assert.equal(videoGets() - before, 1, 'one download');
      assert.deepEqual(
        readdirSync(dir).filter((f) => f.endsWith('.mp4')),
        [path.basename(doneA.file ?? '')],
      );
      // A third window restoring it later (its copy still says "downloading") does not fetch it again.
      const c = windowOn(stored);
      await c.start();
      assert.equal((await c.wait(task.localId)).file, doneA.file);
      assert.equal(videoGets() - before, 1, 'still one download');
      await Promise.all([a.dispose(), b.dispose(), c.dispose()]);
    });

    it("removes the task's own partial file a crash left, never a live download's or another task's", async () => {
      const { stored, task } = await interruptedDownload();
      const base = mediaBaseName(task.prompt, 1, new Date(task.createdAt), 'video');
      const leftover = path.join(dir, `.${base}.${task.localId}-0123456789ab.part`);
      const othersTask = path.join(dir, `.${base}.another-task-0123456789ab.part`);
      const unrelated = path.join(dir, '.notes.0123456789ab.part');
      for (const f of [leftover, othersTask, unrelated]) writeFileSync(f, 'half a video');
      // While another window holds the task's download (its lock), its partial file is its own.
      const lines: string[] = [];
      const w = windowOn(stored, lines);
      await new FileLock(path.join(guardDir, `${task.localId}.lock`)).run(async () => {
        await w.start();
        await until(
          () => lines.some((l) => l.includes('downloading in another window')),
          'the window to see the other download',
        );
        assert.ok(existsSync(leftover), 'a live download keeps its partial file');
      });
      const done = await w.wait(task.localId);
      assert.equal(done.phase, 'succeeded', JSON.stringify(done.error));
      assert.equal(existsSync(leftover), false, "the crash's leftover is gone once nothing downloads the task");
      assert.ok(existsSync(othersTask) && existsSync(unrelated), 'other files are left alone');
      await w.dispose();
    });
  });

  it('stops polling when asked and resumes on request', async () => {
    const m = manager(new MemoryStore());
    await m.start();
    const task = await m.submit({ ...params, outputDir: dir });
    m.cancel(task.localId);
    assert.equal(m.find(task.localId)?.phase, 'stopped');
    // Nothing is left that could query: no poll waits for its turn and no request is in flight
    // (decided by what the manager holds, not by waiting a while and counting queries).
    const held = m as unknown as { work: TaskWork };
    assert.equal(held.work.planned(task.localId), false, 'no poll is scheduled while stopped');
    assert.equal(held.work.inFlight(task.localId), false, 'no query is in flight while stopped');
    gw.advanceVideo(task.taskId ?? '', 'SUCCESS');
    m.resume(task.localId);
    assert.equal((await m.wait(task.localId)).phase, 'succeeded');
    m.forget(task.localId);
    assert.equal(m.find(task.localId), undefined);
    await m.dispose();
  });
});
