import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * patches/undici+<version>.patch fixes undici 7.x's HTTP/1 parser, which crashes the extension host
 * with an uncatchable `assert(!this.paused)` when a server closes the connection while a response
 * body is held back (upstream issue nodejs/undici#5360, fixed in 8.6.0 by nodejs/undici#5474; 8.x
 * needs a newer Node than VS Code 1.100 has). patch-package applies it from the `postinstall`
 * script, and the build bundles undici from node_modules, so an install that skipped the script
 * ships the crash. These checks fail then, and when an undici upgrade leaves the patch behind.
 */
const undiciDir = path.dirname(require.resolve('undici/package.json'));
const patchesDir = path.join(__dirname, '..', '..', 'patches');

/** The text of `Parser.prototype.finish` in undici's installed HTTP/1 client. */
function installedFinish(): string {
  const source = fs.readFileSync(path.join(undiciDir, 'lib', 'dispatcher', 'client-h1.js'), 'utf8');
  const start = source.indexOf('\n  finish () {\n');
  assert.ok(
    start >= 0,
    'undici/lib/dispatcher/client-h1.js has no `finish ()` method any more: check whether patches/ still fits this undici',
  );
  const end = source.indexOf('\n  }\n', start);
  return source.slice(start, end);
}

describe('undici patch: a paused HTTP/1 parser completes when the server closes', () => {
  const version = (JSON.parse(fs.readFileSync(path.join(undiciDir, 'package.json'), 'utf8')) as { version: string })
    .version;
  const patches = fs.readdirSync(patchesDir).filter((name) => name.startsWith('undici+'));

  it('has a patch for the installed undici', () => {
    assert.deepEqual(
      patches,
      [`undici+${version}.patch`],
      `undici is now ${version} but patches/ holds ${patches.join(', ') || 'nothing for it'}. ` +
        'If this undici includes nodejs/undici#5474 (8.6.0 and later), delete the undici patch, this test, ' +
        'and patch-package if nothing else needs it. Otherwise port the patch: edit ' +
        'node_modules/undici/lib/dispatcher/client-h1.js as the old patch does, run `npx patch-package undici`, ' +
        'and delete the old patch file.',
    );
  });

  it('is applied to the installed undici', () => {
    const finish = installedFinish();
    const hint =
      'node_modules/undici is not patched (the `postinstall` script did not run: `npm ci --ignore-scripts` or ' +
      '`--omit=dev`?). Run `npx patch-package` before building or testing.';
    assert.ok(!finish.includes('assert(!this.paused)'), `finish() still asserts the parser is not paused. ${hint}`);
    assert.match(
      finish,
      /if \(this\.paused\) \{[\s\S]*llhttp\.llhttp_resume\(this\.ptr\)/,
      `finish() does not resume a paused parser. ${hint}`,
    );
  });
});
