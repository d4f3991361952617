import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { listFiles, PackageManager } from '@vscode/vsce';

/** What the .vsix holds, as `vsce package` decides it from .vscodeignore. */
const root = path.resolve(__dirname, '../..');

describe('the packaged extension', () => {
  let files: Set<string>;
  before(async function () {
    this.timeout(60_000);
    files = new Set(await listFiles({ cwd: root, packageManager: PackageManager.None }));
  });

  it('holds every image its READMEs show', () => {
    const missing: string[] = [];
    for (const readme of ['README.md', 'README.zh-CN.md']) {
      let text: string;
      try {
        text = readFileSync(path.join(root, readme), 'utf8');
      } catch {
        continue;
      }
      for (const match of text.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = match[1] ?? '';
        if (/^[a-z]+:/i.test(target)) continue;
        if (!files.has(target)) missing.push(`${readme}: ${target}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('holds the manifest translations and no sources, source maps or tests', () => {
    assert.ok(files.has('package.nls.json') && files.has('package.nls.zh-cn.json'));
    // The runtime strings' translation; the English bundle is only the translators' source.
    assert.ok(files.has('l10n/bundle.l10n.zh-cn.json'), 'l10n/bundle.l10n.zh-cn.json is not packaged');
    assert.ok(!files.has('l10n/bundle.l10n.json'), 'l10n/bundle.l10n.json is packaged, though VS Code never reads it');
    const unwanted = [...files].filter(
      (f) => /^(src|test|node_modules)\//.test(f) || f.endsWith('.map') || f.endsWith('.ts'),
    );
    assert.deepEqual(unwanted, []);
  });
});
