/**
 * The workspace boundary's pure rules with Windows path semantics (`path.win32`), whatever machine
 * runs the tests: drive-letter case, other drives, UNC and device paths judged by their text, and
 * junctions (resolved like symbolic links by `fs.realpath`) leading out of a folder.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { isBelow, isInside, pathForm, placeByText, placeOf } from '../../src/core/workspacePaths';

const win = path.win32;

describe('workspace paths with Windows rules', () => {
  it('tells device and UNC paths by their text, in either slash', () => {
    for (const p of ['\\\\?\\C:\\repo\\a.pdf', '\\\\.\\PhysicalDrive0', '//?/C:/repo/a.pdf', '//./pipe/x', '\\\\.'])
      assert.equal(pathForm(p, win), 'device', p);
    for (const p of ['\\\\host\\share\\a.pdf', '//host/share/a.pdf', '\\/host\\share'])
      assert.equal(pathForm(p, win), 'unc', p);
    for (const p of ['C:\\repo\\a.pdf', 'c:/repo/a.pdf', '\\repo\\a.pdf', 'a.pdf', 'C:a.pdf'])
      assert.equal(pathForm(p, win), 'plain', p);
  });

  it('knows neither with POSIX rules (a backslash is part of a name there)', () => {
    for (const p of ['\\\\?\\C:\\x', '\\\\host\\share', '//host/share', '/home/u/a.pdf'])
      assert.equal(pathForm(p, path.posix), 'plain', p);
  });

  it('judges inside and outside by text alone, drive letters and names in any case', () => {
    const folders = ['C:\\Work\\Repo'];
    assert.equal(placeByText('c:\\work\\repo\\docs\\a.pdf', folders, win), 'inside');
    assert.equal(placeByText('C:\\WORK\\REPO\\a.pdf', folders, win), 'inside');
    assert.equal(placeByText('C:\\Work\\Repo', folders, win), 'outside', 'the folder itself is not a file in it');
    assert.equal(placeByText('C:\\Work\\Repo\\..\\secret.txt', folders, win), 'outside');
    assert.equal(placeByText('C:\\Work\\Repo2\\a.pdf', folders, win), 'outside', 'a sibling with the same start');
    assert.equal(placeByText('D:\\Work\\Repo\\a.pdf', folders, win), 'outside', 'another drive');
    assert.equal(placeByText('C:\\Work\\Repo\\..foo\\a.pdf', folders, win), 'inside', '`..foo` is a name');
  });

  it('counts a UNC path as outside unless an open folder is on that share, and a device path never inside', () => {
    assert.equal(placeByText('\\\\attacker\\share\\a.pdf', ['C:\\Work\\Repo'], win), 'outside');
    assert.equal(placeByText('//attacker/share/a.pdf', ['C:\\Work\\Repo'], win), 'outside');
    assert.equal(placeByText('\\\\Server\\Share\\Repo\\a.pdf', ['\\\\server\\share\\repo'], win), 'inside');
    assert.equal(placeByText('\\\\server\\share\\other\\a.pdf', ['\\\\server\\share\\repo'], win), 'outside');
    assert.equal(placeByText('\\\\?\\C:\\Work\\Repo\\a.pdf', ['C:\\Work\\Repo'], win), 'device');
    assert.equal(placeByText('C:\\Work\\Repo\\a.pdf', ['\\\\?\\C:\\Work\\Repo'], win), 'outside');
  });

  it('judges inside by the real path: a junction in the folder that leads out is a link out', () => {
    const folders = ['C:\\Work\\Repo'];
    // `docs` is a junction to C:\Users\me: fs.realpath resolves it like a symbolic link.
    assert.equal(
      placeOf(
        { given: 'C:\\Work\\Repo\\docs\\id_rsa', real: 'C:\\Users\\me\\id_rsa', folders, realFolders: folders },
        win,
      ),
      'linkOut',
    );
    // The workspace itself opened through a junction: its real folder counts.
    assert.equal(
      placeOf(
        { given: 'C:\\Link\\a.pdf', real: 'D:\\Real\\a.pdf', folders: ['C:\\Link'], realFolders: ['d:\\real'] },
        win,
      ),
      'inside',
    );
    assert.equal(placeOf({ given: 'E:\\x.pdf', real: 'E:\\x.pdf', folders, realFolders: folders }, win), 'outside');
  });

  it('isInside and isBelow with drive-letter case and other drives', () => {
    assert.equal(isInside('c:\\a\\b', 'C:\\A', win), true);
    assert.equal(isInside('C:\\A', 'c:\\a', win), true);
    assert.equal(isBelow('C:\\A', 'c:\\a', win), false);
    assert.equal(isBelow('D:\\A\\b', 'C:\\A', win), false);
    assert.equal(isBelow('\\\\host\\share\\a', 'C:\\', win), false);
  });
});
