/**
 * The video download guard: a dead window's lock on a task is taken over by a later look (the lock
 * judges staleness by what one instance saw over time), and records of long-finished downloads go.
 */
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DONE_KEEP_MS, VideoDownloadGuard } from '../../src/core/media/downloadGuard';
import { until } from '../support/until';

describe('video download guard', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'video-guard-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a task whose lock a dead window left is downloaded by a later look', async () => {
    // A window of this machine that died mid-download: its process no longer exists.
    writeFileSync(path.join(dir, 'task-1.lock'), `99999999 ${os.hostname()} 0 dead\n0000000000000000`);
    const guard = new VideoDownloadGuard(dir);
    const video = path.join(dir, 'v.mp4');
    let outcome: string | undefined;
    await until(async () => {
      const result = await guard.run('task-1', async () => {
        writeFileSync(video, 'video');
        return video;
      });
      outcome = result.kind;
      return result.kind !== 'elsewhere';
    }, 'the dead lock to be taken over');
    assert.equal(outcome, 'downloaded');
  });

  it('removes the records of downloads finished longer ago than it keeps them, and keeps recent ones', async () => {
    const now = Date.now();
    writeFileSync(path.join(dir, 'old.done'), JSON.stringify({ file: '/gone.mp4', at: now - DONE_KEEP_MS - 1000 }));
    writeFileSync(path.join(dir, 'recent.done'), JSON.stringify({ file: '/kept.mp4', at: now - 1000 }));
    writeFileSync(path.join(dir, 'other.lock'), 'not a record');
    assert.equal(await new VideoDownloadGuard(dir, () => now).prune(), 1);
    assert.equal(existsSync(path.join(dir, 'old.done')), false);
    assert.ok(existsSync(path.join(dir, 'recent.done')) && existsSync(path.join(dir, 'other.lock')));
  });
});
