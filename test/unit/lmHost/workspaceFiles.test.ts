/**
 * The workspace-file policy (src/core/workspacePaths.ts, src/host/trust/workspaceFiles.ts) on real
 * folders with real symbolic links: what the document tools, the commands and the chat view may read.
 */
// First: answers `vscode` for every host module imported after it.
import { fake } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import * as fsModule from 'node:fs';
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isGatewayError } from '../../../src/core/errors';
import { placeOf } from '../../../src/core/workspacePaths';
import { readImageFile } from '../../../src/host/chat/attachments';
import { locateFile, withWorkspaceFile, type FileRules } from '../../../src/host/trust/workspaceFiles';
import { withSwapAfterCheck } from '../../support/swapAfterCheck';

/** The real path a file is opened at under `rules` (and closed again). */
const workspaceFile = (given: string, rules: FileRules) => withWorkspaceFile(given, rules, async (f) => f.path);

describe('workspace-file policy: links are resolved before a file is judged', () => {
  let root: string;
  let ws: string;
  let outside: string;

  before(() => {
    // The temporary folder may itself be reached through a link (macOS /var → /private/var): the policy copes.
    root = mkdtempSync(path.join(os.tmpdir(), 'ws-policy-'));
    ws = path.join(root, 'project');
    outside = path.join(root, 'secrets');
    mkdirSync(path.join(ws, 'docs'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(path.join(ws, 'docs', 'report.pdf'), '%PDF-1.4\n');
    writeFileSync(path.join(outside, 'id_rsa'), 'PRIVATE KEY');
    symlinkSync(path.join(outside, 'id_rsa'), path.join(ws, 'report.pdf'));
    symlinkSync(outside, path.join(ws, 'linked'));
    symlinkSync(path.join(ws, 'docs', 'report.pdf'), path.join(ws, 'alias.pdf'));
    symlinkSync(ws, path.join(root, 'via-link'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));
  beforeEach(() => {
    fake.workspace.workspaceFolders = [{ uri: fake.Uri.file(ws) }];
  });
  afterEach(() => {
    fake.workspace.workspaceFolders = undefined;
  });

  const refuses = async (given: string, outsideAllowed: boolean, pattern: RegExp) =>
    assert.rejects(
      workspaceFile(given, { outsideAllowed }),
      (e: unknown) => isGatewayError(e, 'badRequest') && pattern.test(e.message),
    );

  it('refuses a path outside the workspace by its text before any file system call touches it', async () => {
    const touched: string[] = [];
    // The module's own promises object: what the policy calls `fs.realpath` on at call time.
    const fsp = fsModule.promises as unknown as { realpath: (p: string) => Promise<string> };
    const realpath = fsp.realpath;
    fsp.realpath = async (p: string) => {
      touched.push(p);
      return realpath(p);
    };
    try {
      await refuses(path.join(outside, 'id_rsa'), false, /outside the open workspace/);
      await refuses(path.join(ws, '..', 'secrets', 'nothing-here'), false, /outside the open workspace/);
      assert.deepEqual(
        touched.filter((p) => !isWorkspaceFolder(p)),
        [],
        'only the open folders were resolved',
      );
    } finally {
      fsp.realpath = realpath;
    }
  });

  it('refuses a file with a second name on disk (a hard link) where the model named it', async () => {
    const secret = path.join(outside, 'hard-secret.txt');
    writeFileSync(secret, 'PRIVATE');
    linkSync(secret, path.join(ws, 'docs', 'notes.txt'));
    try {
      await refuses(path.join(ws, 'docs', 'notes.txt'), false, /hard link/);
      // Named by the user (a dialog, their explorer), it is theirs to send.
      assert.ok(await workspaceFile(path.join(ws, 'docs', 'notes.txt'), { outsideAllowed: true }));
    } finally {
      rmSync(path.join(ws, 'docs', 'notes.txt'));
    }
  });

  const isWorkspaceFolder = (p: string) => path.resolve(p) === path.resolve(ws);

  it('reads a file of the workspace at its real path, relative or absolute', async () => {
    const real = realpathSync(path.join(ws, 'docs', 'report.pdf'));
    assert.equal(await workspaceFile('docs/report.pdf', { outsideAllowed: false }), real);
    assert.equal(await workspaceFile(path.join(ws, 'docs', 'report.pdf'), { outsideAllowed: false }), real);
  });

  it('allows a link inside the workspace that points inside it, and reads its target', async () => {
    assert.equal(
      await workspaceFile('alias.pdf', { outsideAllowed: false }),
      realpathSync(path.join(ws, 'docs', 'report.pdf')),
    );
  });

  it('refuses a link to a file outside the open folders, even where outside paths are allowed', async () => {
    await refuses('report.pdf', false, /symbolic link .* outside the open workspace folders/);
    await refuses(path.join(ws, 'report.pdf'), true, /symbolic link .* outside the open workspace folders/);
  });

  it('refuses a file under a linked folder that leads outside', async () => {
    await refuses('linked/id_rsa', false, /symbolic link .* outside the open workspace folders/);
    await refuses(path.join(ws, 'linked', 'id_rsa'), true, /symbolic link/);
  });

  it('refuses `..` and absolute paths outside, unless the user named the file', async () => {
    await refuses('../secrets/id_rsa', false, /outside the open workspace folders/);
    await refuses(path.join(outside, 'id_rsa'), false, /outside the open workspace folders/);
    assert.equal(
      await workspaceFile(path.join(outside, 'id_rsa'), { outsideAllowed: true }),
      realpathSync(path.join(outside, 'id_rsa')),
    );
  });

  it('refuses a path outside as outside whether or not it exists (which files exist elsewhere is not told)', async () => {
    await refuses('../no-such-file.pdf', false, /outside the open workspace folders/);
    await refuses(path.join(outside, 'no-such-file'), false, /outside the open workspace folders/);
    await refuses(path.join(outside, 'no-such-file'), true, /does not exist/);
  });

  it('says clearly that a file does not exist, and that a folder is not a file', async () => {
    await refuses('docs/missing.pdf', false, /docs\/missing\.pdf does not exist/);
    await refuses('docs', false, /is a folder, not a file/);
  });

  it('accepts files of a workspace folder that is itself opened through a link', async () => {
    fake.workspace.workspaceFolders = [{ uri: fake.Uri.file(path.join(root, 'via-link')) }];
    const real = realpathSync(path.join(ws, 'docs', 'report.pdf'));
    assert.equal(await workspaceFile('docs/report.pdf', { outsideAllowed: false }), real);
    assert.equal(await workspaceFile(real, { outsideAllowed: false }), real);
    await refuses('report.pdf', false, /symbolic link/);
    await refuses('linked/id_rsa', false, /symbolic link/);
  });

  it("the chat's image reads follow the same policy: a link out is refused, a missing file said to be missing", async () => {
    await assert.rejects(readImageFile(fake.Uri.file(path.join(ws, 'report.pdf')) as never, 1024), /symbolic link/);
    await assert.rejects(
      readImageFile(fake.Uri.file(path.join(ws, 'linked', 'id_rsa')) as never, 1024),
      /symbolic link/,
    );
    await assert.rejects(
      readImageFile(fake.Uri.file(path.join(ws, 'gone.png')) as never, 1024),
      /gone\.png does not exist/,
    );
  });

  it("the chat's image reads go through one checked handle: the bytes of the file checked, never a file swapped in", async () => {
    const photo = path.join(ws, 'docs', 'photo.png');
    writeFileSync(photo, 'the photo that was checked');
    const read = await readImageFile(fake.Uri.file(photo) as never, 1024);
    assert.equal(Buffer.from(read.bytes).toString(), 'the photo that was checked');
    await assert.rejects(
      withSwapAfterCheck(
        photo,
        () => {
          rmSync(photo);
          symlinkSync(path.join(outside, 'id_rsa'), photo);
        },
        () => readImageFile(fake.Uri.file(photo) as never, 1024),
      ),
      (e: unknown) =>
        isGatewayError(e, 'badRequest') && /photo\.png changed while it was being checked/.test(e.message),
    );
    rmSync(photo);
  });

  it('refuses relative paths when no folder is open', async () => {
    fake.workspace.workspaceFolders = undefined;
    const located = await locateFile('docs/report.pdf', { outsideAllowed: false });
    assert.equal(located.ok ? 'ok' : located.why, 'noWorkspace');
  });

  it('reads files of extra folders (the extension storage) like workspace files', async () => {
    fake.workspace.workspaceFolders = undefined;
    const located = await locateFile(path.join(outside, 'id_rsa'), { outsideAllowed: false, extraFolders: [outside] });
    assert.equal(located.ok, true);
  });
});

describe('workspace paths: the rule on text', () => {
  const posix = path.posix;
  it('tells inside, a link out and outside apart', () => {
    const folders = ['/w'];
    assert.equal(placeOf({ given: '/w/a', real: '/w/b', folders, realFolders: folders }, posix), 'inside');
    assert.equal(placeOf({ given: '/w/a', real: '/etc/passwd', folders, realFolders: folders }, posix), 'linkOut');
    assert.equal(
      placeOf({ given: '/etc/passwd', real: '/etc/passwd', folders, realFolders: folders }, posix),
      'outside',
    );
    assert.equal(
      placeOf({ given: '/w', real: '/w', folders, realFolders: folders }, posix),
      'outside',
      'the folder itself is no file in it',
    );
    assert.equal(
      placeOf({ given: '/w/..x', real: '/w/..x', folders, realFolders: folders }, posix),
      'inside',
      'a name starting with two dots is not a climb',
    );
  });
  it('applies the Windows rules (case, drives)', () => {
    const win = path.win32;
    const folders = ['C:\\Work'];
    assert.equal(
      placeOf({ given: 'c:\\work\\a.pdf', real: 'c:\\work\\a.pdf', folders, realFolders: folders }, win),
      'inside',
    );
    assert.equal(
      placeOf({ given: 'D:\\Work\\a.pdf', real: 'D:\\Work\\a.pdf', folders, realFolders: folders }, win),
      'outside',
    );
  });
});
