/**
 * The media output folder as the Media Studio uses it: the folder is approved (resolve), then
 * written (writeFileUnique with `within`); a `generated` folder swapped for a link to outside the
 * workspace between the two is refused, and the folder the write must stay in follows the setting.
 * The sweep of interrupted writes' leftovers looks in every folder the studio knows of.
 */
// First: answers `vscode` for every host module imported after it.
import { fake } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeFileUnique } from '../../../src/core/outputFiles';
import { LEFTOVER_KEEP_MS } from '../../../src/core/media/leftovers';
import type { Gallery } from '../../../src/host/media/gallery';
import { sweepLeftoversLater } from '../../../src/host/media/leftoverSweep';
import { OutputLocation } from '../../../src/host/media/outputLocation';
import type { VideoTasks } from '../../../src/host/media/videoTasks';
import type { Services } from '../../../src/host/services';
import { until } from '../../support/until';

describe('media output folder: approved, then written where approved', () => {
  let root: string;
  let ws: string;
  let outside: string;

  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'output-writes-'));
    ws = path.join(root, 'ws');
    outside = path.join(root, 'outside');
    mkdirSync(path.join(ws, 'generated', 'images'), { recursive: true });
    mkdirSync(path.join(outside, 'images'), { recursive: true });
    fake.workspace.workspaceFolders = [{ uri: fake.Uri.file(ws) }];
  });
  afterEach(() => {
    fake.workspace.workspaceFolders = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  it('a relative setting confines writes to the workspace: a folder swapped for a link after approval is refused', async () => {
    const output = new OutputLocation(() => 'generated');
    const dir = await output.resolve('images');
    assert.equal(output.within(dir), ws);
    // Another process swaps the approved folder for a link to outside the workspace.
    renameSync(path.join(ws, 'generated'), path.join(ws, 'generated.old'));
    symlinkSync(outside, path.join(ws, 'generated'), 'dir');
    await assert.rejects(
      writeFileUnique(dir, 'cat', 'png', Buffer.from('png'), { within: output.within(dir) }),
      /symbolic link outside/,
    );
    assert.deepEqual(readdirSync(path.join(outside, 'images')), []);
    // Approving it again says why, before anything is generated.
    await assert.rejects(output.resolve('images'), /outside the workspace/);
  });

  it("an absolute setting (the user's own) confines writes to that folder", async () => {
    const output = new OutputLocation(() => outside);
    const dir = await output.resolve('videos');
    assert.equal(dir, path.join(outside, 'videos'));
    assert.equal(output.within(dir), outside);
    const saved = await writeFileUnique(dir, 'clip', 'mp4', Buffer.from('mp4'), { within: output.within(dir) });
    assert.equal(path.dirname(saved), path.join(outside, 'videos'));
    // A folder of an earlier setting (a restored task) must stay what it was: it is its own bound.
    assert.equal(output.within(path.join(root, 'old-output')), path.join(root, 'old-output'));
  });
});

describe('media: the leftover sweep a while after start-up', () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('looks in the global storage, the output folders and the folders of the gallery and the video tasks', async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'leftover-sweep-'));
    const storage = path.join(root, 'storage');
    const folders = ['storage/conversations', 'ws/generated/images', 'old-gallery', 'task-folder'].map((f) =>
      path.join(root, f),
    );
    const weekOld = Date.now() - LEFTOVER_KEEP_MS - 60_000;
    const leftovers = folders.map((dir) => {
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, '.x.png.0123456789ab.part');
      writeFileSync(file, 'half');
      utimesSync(file, weekOld / 1000, weekOld / 1000);
      return file;
    });
    const lines: string[] = [];
    const services = {
      context: { globalStorageUri: fake.Uri.file(storage) },
      log: { info: (l: string) => lines.push(l), warn: (l: string) => lines.push(l) },
    } as unknown as Services;
    const cancel = sweepLeftoversLater(
      services,
      {
        output: { current: (kind: string) => path.join(root, 'ws', 'generated', kind) } as unknown as OutputLocation,
        gallery: { list: () => [{ file: path.join(root, 'old-gallery', 'a.png') }] } as unknown as Gallery,
        video: { list: () => [{ outputDir: path.join(root, 'task-folder') }] } as unknown as VideoTasks,
      },
      0,
    );
    await until(() => lines.length > 0, 'the sweep to report');
    cancel();
    assert.deepEqual(lines, ['Removed 4 temporary files that interrupted writes left.']);
    for (const f of leftovers) assert.equal(existsSync(f), false, f);
  });
});
