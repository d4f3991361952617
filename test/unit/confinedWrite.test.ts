/**
 * Output writes (generated media, saved results) stay in the folder approved for them: a folder
 * swapped for a link to outside between the approval and the write (or during it, at the moments
 * the write's hooks expose), and links planted at the final name, never make a file land elsewhere
 * nor change a file there. Links are POSIX symbolic links here; the pure text rule is also tested
 * with Windows path semantics.
 */
import * as assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { streamToFileUnique, writeFileConfined, writeFileUnique } from '../../src/core/outputFiles';
import { writeFolderPlace } from '../../src/core/confinedWrite';

const win = path.win32;

describe('output writes: the folder judged by its text first (Windows rules)', () => {
  it('refuses device paths, other drives, `..` and UNC paths outside the approved folder', () => {
    const ws = 'C:\\Work\\Repo';
    assert.equal(writeFolderPlace('c:\\work\\repo\\generated\\images', ws, win), 'inside', 'drive letter and case');
    assert.equal(writeFolderPlace('C:\\Work\\Repo', ws, win), 'inside', 'the approved folder itself');
    assert.equal(writeFolderPlace('C:\\Work\\Repo\\..\\Other', ws, win), 'outside');
    assert.equal(writeFolderPlace('D:\\Work\\Repo\\generated', ws, win), 'outside', 'another drive');
    assert.equal(writeFolderPlace('C:\\Work\\Repo2\\generated', ws, win), 'outside', 'a sibling with the same start');
    assert.equal(writeFolderPlace('\\\\attacker\\share\\generated', ws, win), 'outside', 'UNC');
    assert.equal(writeFolderPlace('//attacker/share/generated', ws, win), 'outside', 'UNC with forward slashes');
    assert.equal(writeFolderPlace('\\\\?\\C:\\Work\\Repo\\generated', ws, win), 'device');
    assert.equal(writeFolderPlace('\\\\.\\C:\\Work\\Repo', '\\\\.\\C:\\Work\\Repo', win), 'device');
  });

  it('allows a folder on a share only when the approved folder is on that share', () => {
    const share = '\\\\nas\\media\\generated';
    assert.equal(writeFolderPlace('\\\\NAS\\media\\generated\\videos', share, win), 'inside');
    assert.equal(writeFolderPlace('\\\\other\\media\\generated\\videos', share, win), 'outside');
  });
});

describe('output writes: what is written is the file checked (POSIX links)', function () {
  let root: string;
  let ws: string;
  let outside: string;
  const data = Buffer.from('generated image bytes');

  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'confined-write-'));
    ws = path.join(root, 'ws');
    outside = path.join(root, 'outside');
    mkdirSync(path.join(ws, 'generated', 'images'), { recursive: true });
    mkdirSync(outside);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** Everything below `dir`, as relative paths. */
  const tree = (dir: string): string[] => readdirSync(dir, { recursive: true }).map(String).sort();

  /** Puts a link to `outside` where the workspace's `generated` folder was (another process's doing). */
  const swapForLink = () => {
    renameSync(path.join(ws, 'generated'), path.join(ws, 'generated.old'));
    symlinkSync(outside, path.join(ws, 'generated'), 'dir');
  };

  it('refuses a folder swapped for a link to outside after it was approved, before writing', async () => {
    const dir = path.join(ws, 'generated', 'images');
    mkdirSync(path.join(outside, 'images'));
    swapForLink();
    await assert.rejects(writeFileUnique(dir, 'cat', 'png', data, { within: ws }), /symbolic link outside/);
    assert.deepEqual(tree(outside), ['images'], 'nothing written outside');
  });

  it('never creates a folder behind a link that leads out', async () => {
    swapForLink();
    await assert.rejects(writeFileUnique(path.join(ws, 'generated', 'videos'), 'v', 'mp4', data, { within: ws }));
    assert.deepEqual(tree(outside), [], 'no folder made outside');
  });

  it('refuses when the folder is swapped between the check and the temporary file', async () => {
    const dir = path.join(ws, 'generated', 'images');
    mkdirSync(path.join(outside, 'images'));
    await assert.rejects(
      writeFileUnique(dir, 'cat', 'png', data, { within: ws, hooks: { afterCheck: async () => swapForLink() } }),
      /replaced or moved/,
    );
    assert.deepEqual(tree(outside), ['images'], 'the temporary file made through the link was removed');
  });

  it('refuses when the folder is swapped after the data is written, before the file gets its name', async () => {
    const dir = path.join(ws, 'generated', 'images');
    mkdirSync(path.join(outside, 'images'));
    let tempSeen: string[] = [];
    await assert.rejects(
      streamToFileUnique(dir, 'cat', 'png', [data], {
        within: ws,
        hooks: {
          beforePublish: async () => {
            tempSeen = readdirSync(dir);
            swapForLink();
          },
        },
      }),
      /replaced or moved/,
    );
    assert.equal(tempSeen.length, 1, 'the temporary file was written');
    assert.deepEqual(tree(outside), ['images'], 'no file named outside');
    // The temporary file stays with the folder that was moved away (its old path now leads out).
    assert.equal(readdirSync(path.join(ws, 'generated.old', 'images')).filter((n) => !n.endsWith('.part')).length, 0);
  });

  it('a link planted at the final name is neither followed nor replaced', async () => {
    const dir = path.join(ws, 'generated', 'images');
    const victim = path.join(outside, 'victim.txt');
    writeFileSync(victim, 'keep me');
    symlinkSync(victim, path.join(dir, 'cat.png'));
    const saved = await writeFileUnique(dir, 'cat', 'png', data, { within: ws });
    assert.equal(path.basename(saved), 'cat_2.png');
    symlinkSync(victim, path.join(dir, 'result.md'));
    await assert.rejects(
      writeFileConfined(path.join(dir, 'result.md'), 'text', { overwrite: false, within: dir }),
      /already exists/,
    );
    await writeFileConfined(path.join(dir, 'result.md'), 'text', { overwrite: true, within: dir });
    assert.equal(readFileSync(victim, 'utf8'), 'keep me');
    assert.equal(readFileSync(path.join(dir, 'result.md'), 'utf8'), 'text', 'the link itself was replaced');
  });

  it('a saved result refuses a folder swapped for a link before its name is given', async () => {
    const dir = path.join(ws, 'generated', 'images');
    mkdirSync(path.join(outside, 'images'));
    await assert.rejects(
      writeFileConfined(path.join(dir, 'result.md'), 'text', {
        overwrite: false,
        within: ws,
        hooks: { beforePublish: async () => swapForLink() },
      }),
      /replaced or moved/,
    );
    assert.equal(existsSync(path.join(outside, 'images', 'result.md')), false);
  });

  it('writes normally inside, and into a real folder reached through a link that stays inside', async () => {
    mkdirSync(path.join(ws, 'real-out'));
    symlinkSync(path.join(ws, 'real-out'), path.join(ws, 'out'), 'dir');
    const saved = await writeFileUnique(path.join(ws, 'out', 'images'), 'cat', 'png', data, { within: ws });
    assert.equal(readFileSync(saved, 'utf8'), data.toString());
    assert.deepEqual(readdirSync(path.join(ws, 'real-out', 'images')), ['cat.png']);
  });
});
