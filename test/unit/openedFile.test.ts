/**
 * Open once, check the open handle (src/core/tools/openedFile.ts): a file approved by its path is
 * opened, and the handle must be the approved file, at the approved real path, before anything is
 * read. Swaps are made at the seam between the approval and the open, on real files and links.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isGatewayError } from '../../src/core/errors';
import {
  openChecked,
  openSeam,
  readHead,
  readWhole,
  samePath,
  type FileIdentity,
  type OpenRules,
} from '../../src/core/tools/openedFile';

describe('openedFile: a file is opened once and its open handle checked', () => {
  let root: string;
  let ws: string;
  let outside: string;

  const identity = (file: string): FileIdentity => {
    const s = statSync(file, { bigint: true });
    return { dev: s.dev, ino: s.ino };
  };
  /** Both ways of finding the handle's path: the descriptor's own (Linux), and resolving the name again. */
  const ways: Array<[string, OpenRules['handlePath']]> = [
    ['the handle path the system tells', undefined],
    ['the name resolved again', async () => undefined],
  ];
  const changed = (name: string) => (e: unknown) =>
    isGatewayError(e, 'badRequest') && new RegExp(`${name} changed while it was being checked`).test(e.message);

  beforeEach(() => {
    root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'opened-file-')));
    ws = path.join(root, 'ws');
    outside = path.join(root, 'outside');
    mkdirSync(path.join(ws, 'docs'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(path.join(ws, 'docs', 'report.pdf'), '%PDF-1.4 the report');
    writeFileSync(path.join(outside, 'report.pdf'), '%PDF-1.4 the tax return');
  });
  afterEach(() => {
    openSeam.beforeOpen = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  it('reads the approved file through its handle, even when its name is taken by another file after the open', async () => {
    const file = path.join(ws, 'docs', 'report.pdf');
    const opened = await openChecked(file, { approved: identity(file), singleName: true });
    try {
      renameSync(path.join(outside, 'report.pdf'), file);
      assert.equal((await readWhole(opened)).toString(), '%PDF-1.4 the report');
      assert.equal(Buffer.from(await readHead(opened, 5)).toString(), '%PDF-');
      assert.equal(opened.size, '%PDF-1.4 the report'.length);
    } finally {
      await opened.close();
    }
  });

  for (const [way, handlePath] of ways) {
    it(`refuses a file swapped for a link after its approval (${way})`, async () => {
      const file = path.join(ws, 'docs', 'report.pdf');
      const approved = identity(file);
      openSeam.beforeOpen = async () => {
        renameSync(file, path.join(ws, 'docs', 'old.pdf'));
        symlinkSync(path.join(outside, 'report.pdf'), file);
      };
      await assert.rejects(openChecked(file, { approved, handlePath }), changed('report\\.pdf'));
    });

    it(`refuses a folder on the way swapped for a link that leads out (${way})`, async () => {
      const file = path.join(ws, 'docs', 'report.pdf');
      openSeam.beforeOpen = async () => {
        renameSync(path.join(ws, 'docs'), path.join(ws, 'docs-old'));
        symlinkSync(outside, path.join(ws, 'docs'));
      };
      // Approved after the swap (the stat followed the new link): only the handle's path tells.
      await assert.rejects(
        openChecked(file, { approved: identity(path.join(outside, 'report.pdf')), handlePath }),
        changed('report\\.pdf'),
      );
    });
  }

  it('refuses another plain file put in the approved file’s place (its identity differs)', async () => {
    const file = path.join(ws, 'docs', 'report.pdf');
    const approved = identity(file);
    openSeam.beforeOpen = async () => {
      copyFileSync(path.join(outside, 'report.pdf'), path.join(ws, 'docs', 'new.pdf'));
      renameSync(path.join(ws, 'docs', 'new.pdf'), file);
    };
    await assert.rejects(openChecked(file, { approved }), changed('report\\.pdf'));
  });

  it('refuses a file with a second name on disk where one name is asked, judged on the handle', async () => {
    const file = path.join(ws, 'docs', 'report.pdf');
    const approved = identity(file);
    // The second name appears after the approval: only the handle's count tells.
    openSeam.beforeOpen = async () => linkSync(path.join(ws, 'docs', 'report.pdf'), path.join(outside, 'copy.pdf'));
    await assert.rejects(
      openChecked(file, { approved, singleName: true }),
      (e: unknown) => isGatewayError(e, 'badRequest') && /more than one name on disk/.test(e.message),
    );
    openSeam.beforeOpen = undefined;
    const opened = await openChecked(file, { approved });
    await opened.close();
  });

  it('refuses a folder, and a FIFO put in the file’s place without waiting for a writer', async () => {
    await assert.rejects(openChecked(path.join(ws, 'docs')), /is a folder, not a file/);
    if (process.platform === 'win32') return;
    const fifo = path.join(ws, 'docs', 'pipe.pdf');
    execFileSync('mkfifo', [fifo]);
    await assert.rejects(openChecked(fifo), /pipe\.pdf is not a plain file/);
  });

  it('reading the whole file fails when it changed size after the open', async () => {
    const file = path.join(ws, 'docs', 'report.pdf');
    const opened = await openChecked(file, { approved: identity(file) });
    try {
      writeFileSync(file, '%PDF-1.4 the report, now longer');
      await assert.rejects(
        readWhole(opened),
        (e: unknown) =>
          isGatewayError(e, 'badRequest') && /report\.pdf changed while it was being sent/.test(e.message),
      );
    } finally {
      await opened.close();
    }
  });

  it('compares paths by the platform rules: Windows drive letters and names in any case, UNC shares', () => {
    const win = path.win32;
    assert.equal(samePath('C:\\Work\\Report.pdf', 'c:\\work\\report.PDF', win), true);
    assert.equal(samePath('C:\\Work\\report.pdf', 'D:\\Work\\report.pdf', win), false);
    assert.equal(samePath('C:\\Work\\docs\\..\\report.pdf', 'C:\\Work\\report.pdf', win), true);
    assert.equal(samePath('\\\\host\\share\\report.pdf', '\\\\HOST\\share\\report.pdf', win), true);
    assert.equal(samePath('\\\\host\\share\\report.pdf', '\\\\other\\share\\report.pdf', win), false);
    assert.equal(samePath('/w/Report.pdf', '/w/report.pdf', path.posix), false);
  });
});
