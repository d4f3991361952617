import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveOutputFolder } from '../../src/core/outputFolder';
import { existingReal, isBelow, isInside, realPathOf } from '../../src/core/workspacePaths';
import {
  OverrideAnnouncer,
  overrideNotice,
  parseJsonc,
  USER_ONLY_KEYS,
  userOnlyValues,
} from '../../src/core/userOnlySettings';

describe('output folder rules', () => {
  const ws = '/home/u/project';
  const posix = path.posix;

  it('resolves a relative folder inside the workspace', () => {
    assert.deepEqual(resolveOutputFolder('generated', 'workspace', ws, posix), {
      ok: true,
      folder: '/home/u/project/generated',
    });
    assert.deepEqual(resolveOutputFolder('out/media/', 'user', ws, posix), {
      ok: true,
      folder: '/home/u/project/out/media',
    });
    assert.deepEqual(resolveOutputFolder('a/../b', 'workspace', ws, posix), { ok: true, folder: '/home/u/project/b' });
    assert.deepEqual(resolveOutputFolder('.', 'workspace', ws, posix), { ok: true, folder: ws });
  });

  it('uses "generated" for an empty setting', () => {
    assert.deepEqual(resolveOutputFolder('  ', 'workspace', ws, posix), {
      ok: true,
      folder: '/home/u/project/generated',
    });
  });

  it('refuses a relative folder that climbs out of the workspace, from any settings', () => {
    for (const bad of ['..', '../elsewhere', 'generated/../../x', 'a/../../..', '../project-evil']) {
      for (const source of ['user', 'workspace'] as const) {
        const rule = resolveOutputFolder(bad, source, ws, posix);
        assert.equal(rule.ok, false, `${bad} from ${source}`);
        if (!rule.ok) assert.match(rule.reason, /outside the workspace/);
      }
    }
  });

  it('accepts an absolute folder only from the user settings', () => {
    assert.deepEqual(resolveOutputFolder('/data/media', 'user', ws, posix), { ok: true, folder: '/data/media' });
    assert.deepEqual(resolveOutputFolder('/data/media', 'user', undefined, posix), { ok: true, folder: '/data/media' });
    const rule = resolveOutputFolder('/home/u/.ssh', 'workspace', ws, posix);
    assert.equal(rule.ok, false);
    if (!rule.ok) assert.match(rule.reason, /absolute path from the workspace settings/);
  });

  it('applies the Windows forms: drive paths, UNC paths, other drives', () => {
    const win = path.win32;
    const wws = 'C:\\work\\project';
    assert.deepEqual(resolveOutputFolder('generated', 'workspace', wws, win), {
      ok: true,
      folder: 'C:\\work\\project\\generated',
    });
    assert.deepEqual(resolveOutputFolder('D:\\media', 'user', wws, win), { ok: true, folder: 'D:\\media' });
    for (const bad of ['D:\\media', '\\\\server\\share\\x', 'C:\\Windows'])
      assert.equal(resolveOutputFolder(bad, 'workspace', wws, win).ok, false, bad);
    // A device path is refused even from the user's own settings; the user's own share is theirs to choose.
    for (const device of ['\\\\?\\C:\\media', '\\\\.\\PhysicalDrive0', '//?/C:/media']) {
      const rule = resolveOutputFolder(device, 'user', wws, win);
      assert.equal(rule.ok, false, device);
      if (!rule.ok) assert.match(rule.reason, /device path/);
    }
    assert.deepEqual(resolveOutputFolder('\\\\nas\\media\\generated', 'user', wws, win), {
      ok: true,
      folder: '\\\\nas\\media\\generated',
    });
    // "D:media" is relative to drive D's current folder: neither inside the workspace nor a full path.
    assert.equal(resolveOutputFolder('D:media', 'user', wws, win).ok, false);
    assert.equal(resolveOutputFolder('..\\x', 'user', wws, win).ok, false);
  });

  it('leaves a relative folder to the caller when no workspace is open', () => {
    assert.deepEqual(resolveOutputFolder('generated', 'user', undefined, posix), { ok: true, folder: undefined });
  });

  it('refuses "~", which nothing would expand', () => {
    for (const bad of ['~', '~/media', '~\\media'])
      assert.equal(resolveOutputFolder(bad, 'user', ws, posix).ok, false, bad);
    assert.equal(
      resolveOutputFolder('~media', 'user', ws, posix).ok,
      true,
      'a folder merely starting with ~ is an ordinary name',
    );
  });

  it('knows what lies inside a folder', () => {
    assert.equal(isInside('/a/b/c', '/a/b', posix), true);
    assert.equal(isInside('/a/b', '/a/b', posix), true);
    assert.equal(isInside('/a/bc', '/a/b', posix), false);
    assert.equal(isInside('/a', '/a/b', posix), false);
    assert.equal(isInside('/a/b/..c', '/a/b', posix), true, 'a name starting with two dots is not a climb');
    assert.equal(isBelow('/a/b/../b/c', '/a/b', posix), true, '`..` is resolved before comparing');
    assert.equal(isBelow('/a/b/../etc/c', '/a/b', posix), false, 'a climb out is outside (a remote file URI path)');
    assert.equal(isBelow('/a/b', '/a/b', posix), false, 'the folder itself is not below itself');
  });

  it('resolves the links of the part of a path that exists (the real-path rule)', async () => {
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'real-path-')));
    try {
      const ws = path.join(root, 'ws');
      const elsewhere = path.join(root, 'elsewhere');
      mkdirSync(path.join(ws, 'plain'), { recursive: true });
      mkdirSync(elsewhere);
      symlinkSync(elsewhere, path.join(ws, 'out'));
      writeFileSync(path.join(ws, 'file'), 'x');
      // A folder not made yet below a link lands where the link points.
      const below = await existingReal(path.join(ws, 'out', 'images', 'new'));
      assert.deepEqual(below, { existing: path.join(ws, 'out'), real: elsewhere });
      assert.equal(isInside(below.real, ws), false);
      assert.deepEqual(await existingReal(path.join(ws, 'plain', 'images')), {
        existing: path.join(ws, 'plain'),
        real: path.join(ws, 'plain'),
      });
      assert.equal(await realPathOf(path.join(ws, 'out', 'a', 'b.png')), path.join(elsewhere, 'a', 'b.png'));
      assert.equal(await realPathOf(path.join(ws, 'plain', '..', 'file')), path.join(ws, 'file'));
      // Below a file nothing can exist: the file is the deepest existing part.
      assert.equal((await existingReal(path.join(ws, 'file', 'x'))).existing, path.join(ws, 'file'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('user-only settings from a workspace', () => {
  it('parses settings files with comments and trailing commas', () => {
    const text = `{
      // the gateway of this repository
      "modelGateway.baseUrl": "https://evil.example/v1", /* block */
      "url": "http://x//not-a-comment",
      "list": [1, 2,],
    }`;
    assert.deepEqual(parseJsonc(text), {
      'modelGateway.baseUrl': 'https://evil.example/v1',
      url: 'http://x//not-a-comment',
      list: [1, 2],
    });
    assert.deepEqual(parseJsonc('{"a": "quote \\" , }"}'), { a: 'quote " , }' });
    assert.equal(parseJsonc('{"a": '), undefined);
    assert.equal(parseJsonc('{"a": "open'), undefined);
    assert.equal(parseJsonc('/* never closed'), undefined);
  });

  it('finds user-only keys written flat or nested, and nothing else', () => {
    const found = userOnlyValues(
      {
        'modelGateway.baseUrl': 'https://a.example',
        modelGateway: {
          catalogUrl: 'https://b.example/c.json',
          tools: { confirmBilledCalls: false },
          chat: { maxTokens: 5 },
        },
        'modelGateway.outputFolder': '/tmp/x',
        'modelGateway.chat.systemPrompt': 'hi',
        '[markdown]': { 'modelGateway.proxy': 'off' },
      },
      'modelGateway',
      'f/.vscode/settings.json',
    );
    assert.deepEqual(
      found.map((o) => [o.key, o.value]),
      [
        ['baseUrl', 'https://a.example'],
        ['catalogUrl', 'https://b.example/c.json'],
        ['outputFolder', '/tmp/x'],
        ['tools.confirmBilledCalls', false],
      ],
    );
    assert.deepEqual(userOnlyValues({ modelGateway: { 'tools.confirmBilledCalls': false } }, 'modelGateway', 'w'), [
      { key: 'tools.confirmBilledCalls', value: false, where: 'w' },
    ]);
    assert.deepEqual(userOnlyValues(undefined, 'modelGateway', 'w'), []);
    assert.deepEqual(userOnlyValues([1], 'modelGateway', 'w'), []);
    assert.ok(USER_ONLY_KEYS.includes('proxy'));
  });

  it('declares every user-only setting application-scoped, so VS Code drops workspace values too', () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { scope?: string }> } };
    };
    const properties = manifest.contributes.configuration.properties;
    assert.ok(USER_ONLY_KEYS.includes('extraCaCertificates'));
    for (const key of USER_ONLY_KEYS) assert.equal(properties[`modelGateway.${key}`]?.scope, 'application', key);
  });

  it('announces each key and value once per session, naming setting, value and rule', () => {
    const a = new OverrideAnnouncer();
    const base = { key: 'baseUrl' as const, value: 'https://evil.example', where: 'repo/.vscode/settings.json' };
    const first = a.fresh('modelGateway', [base, { ...base, where: 'the workspace file' }]);
    assert.equal(first.length, 1);
    assert.match(first[0]!, /"modelGateway\.baseUrl": "https:\/\/evil\.example" from repo\/\.vscode\/settings\.json/);
    assert.match(first[0]!, /Only your user settings decide where the API key is sent/);
    assert.deepEqual(a.fresh('modelGateway', [base]), []);
    assert.equal(
      a.fresh('modelGateway', [{ ...base, value: 'https://other.example' }]).length,
      1,
      'a new value is a new notice',
    );
    assert.equal(a.notices.length, 2);
  });

  it('shortens very long values in the notice', () => {
    const notice = overrideNotice('modelGateway', { key: 'outputFolder', value: 'x'.repeat(5000), where: 'w' });
    assert.ok(notice.length < 500);
    assert.match(notice, /…/);
  });
});
