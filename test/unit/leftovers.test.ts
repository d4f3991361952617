/**
 * Temporary files that cut-short writes of this and earlier versions left (`.x.<hex>.tmp`,
 * `.x.<hex>.part`, `.x.<task>-<hex>.part`) are removed once old, never a file another window is
 * writing: not one changed recently, not one written to between the look and the removal, not a
 * video task's file while a window holds that task's download lock, and never through a link.
 */
import * as assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileLock } from '../../src/core/chat/store/lock';
import { leftoverOwner, LEFTOVER_KEEP_MS, sweepLeftovers } from '../../src/core/media/leftovers';

describe('leftovers of interrupted writes', () => {
  let root: string;
  let storage: string;
  let videos: string;
  let guardDir: string;
  const DAY = 24 * 60 * 60 * 1000;

  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'leftovers-'));
    storage = path.join(root, 'globalStorage');
    videos = path.join(root, 'ws', 'generated', 'videos');
    guardDir = path.join(storage, 'video-downloads');
    mkdirSync(path.join(storage, 'conversations', '.index'), { recursive: true });
    mkdirSync(videos, { recursive: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** A file last changed `ageMs` ago. */
  const make = (file: string, ageMs: number, text = 'half written'): string => {
    writeFileSync(file, text);
    const at = new Date(Date.now() - ageMs);
    utimesSync(file, at, at);
    return file;
  };
  const sweep = (extra: Partial<Parameters<typeof sweepLeftovers>[0]> = {}) =>
    sweepLeftovers({
      folders: [
        { dir: storage, depth: 3 },
        { dir: videos, depth: 0 },
      ],
      guardDir,
      ...extra,
    });

  it('tells leftover names from others, and the task a video download named', () => {
    assert.equal(leftoverOwner('.catalog.json.0123456789ab.tmp'), undefined);
    assert.equal(leftoverOwner('.a.b.png.0123456789ab.part'), undefined);
    assert.equal(
      leftoverOwner('.video-cat.3f2a9c1e-77b0-4c1a-9d7e-2b5c0a1e9f00-0123456789ab.part'),
      '3f2a9c1e-77b0-4c1a-9d7e-2b5c0a1e9f00',
    );
    for (const other of [
      'notes.part',
      '.notes.part',
      'video.mp4',
      '.x.0123456789ab.part.mp4',
      '.x.0123456789AB.part',
      '.x.0123456789a.part',
      '.0123456789ab.part',
    ])
      assert.equal(leftoverOwner(other), false, other);
  });

  it("removes old versions' leftovers in the storage and the output folders once a week old, and nothing else", async () => {
    const old = LEFTOVER_KEEP_MS + DAY;
    const gone = [
      make(path.join(storage, '.catalog.json.0123456789ab.tmp'), old),
      make(path.join(storage, 'conversations', '.c1.log.00112233aabb.part'), old),
      make(path.join(storage, 'conversations', '.index', '.summaries.json.a1b2c3d4e5f6.part'), old),
      make(path.join(videos, '.video-cat.ffeeddccbbaa.part'), old),
    ];
    const kept = [
      make(path.join(storage, 'conversations', '.c2.log.00112233aabb.part'), LEFTOVER_KEEP_MS - DAY),
      make(path.join(videos, '.video-dog.0123456789ab.part'), 0),
      make(path.join(videos, 'video-cat.mp4'), old),
      make(path.join(videos, 'notes.part'), old),
      make(path.join(storage, 'conversations', 'c1.log'), old),
    ];
    const removed = await sweep();
    assert.deepEqual(removed.sort(), gone.sort());
    for (const f of gone) assert.equal(existsSync(f), false, f);
    for (const f of kept) assert.ok(existsSync(f), f);
  });

  it('never follows a link: one named like a leftover stays, and so does what it points at', async () => {
    const target = make(path.join(root, 'precious.bin'), LEFTOVER_KEEP_MS * 2);
    symlinkSync(target, path.join(videos, '.video-x.0123456789ab.part'));
    mkdirSync(path.join(root, 'elsewhere'));
    const outside = make(path.join(root, 'elsewhere', '.y.0123456789ab.part'), LEFTOVER_KEEP_MS * 2);
    symlinkSync(path.join(root, 'elsewhere'), path.join(storage, 'linked'), 'dir');
    assert.deepEqual(await sweep(), []);
    assert.ok(existsSync(target) && existsSync(outside));
    assert.ok(existsSync(path.join(videos, '.video-x.0123456789ab.part')));
  });

  it('judges age by the clock given, and leaves a file written to between the look and the removal', async () => {
    const file = make(path.join(videos, '.video-cat.ffeeddccbbaa.part'), 0);
    // Today's file: a clock 8 days on sees it as old.
    const later = () => Date.now() + LEFTOVER_KEEP_MS + DAY;
    assert.deepEqual(await sweep({ now: later, beforeRemove: async (f) => appendFileSync(f, ' and more') }), []);
    assert.equal(readFileSync(file, 'utf8'), 'half written and more', 'a writer resuming keeps its file');
    assert.deepEqual(await sweep({ now: later }), [file]);
  });

  it("leaves a video task's leftover while a window holds the task's download lock, removes it once free", async () => {
    const task = '3f2a9c1e-77b0-4c1a-9d7e-2b5c0a1e9f00';
    const file = make(path.join(videos, `.video-cat.${task}-0123456789ab.part`), LEFTOVER_KEEP_MS + DAY);
    const other = new FileLock(path.join(guardDir, `${task}.lock`));
    await other.run(async () => {
      assert.deepEqual(await sweep(), []);
      assert.ok(existsSync(file), 'the downloading window keeps its file');
    });
    assert.deepEqual(await sweep(), [file]);
  });

  it('does nothing while another window sweeps', async () => {
    const file = make(path.join(videos, '.video-cat.ffeeddccbbaa.part'), LEFTOVER_KEEP_MS + DAY);
    await new FileLock(path.join(guardDir, '.sweep.lock')).run(async () => {
      assert.deepEqual(await sweep(), []);
    });
    assert.ok(existsSync(file));
    assert.deepEqual(await sweep(), [file]);
  });
});
