import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * src/core/undiciParts.ts loads four of undici's own files instead of its index (to keep the first
 * request from loading all of undici) and repeats the one thing the index does to them: mixing the
 * request API into Dispatcher.prototype. These checks fail when an undici upgrade moves those files,
 * changes what they export, or changes that mix-in, so the shortcut is redone or dropped then.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- the point is to compare undici's files with its public index */
describe('undiciParts: the undici files it relies on', () => {
  const files = [
    'undici/lib/dispatcher/dispatcher.js',
    'undici/lib/api/index.js',
    'undici/lib/dispatcher/agent.js',
    'undici/lib/dispatcher/proxy-agent.js',
  ];

  it('are where it requires them', () => {
    for (const file of files) assert.ok(fs.existsSync(require.resolve(file)), file);
  });

  it('give the very Agent, ProxyAgent and Dispatcher that undici exports', () => {
    const parts = require('../../src/core/undiciParts') as typeof import('../../src/core/undiciParts');
    const undici = require('undici') as typeof import('undici');
    assert.equal(parts.Agent, undici.Agent);
    assert.equal(parts.ProxyAgent, undici.ProxyAgent);
    assert.equal(require('undici/lib/dispatcher/dispatcher.js'), undici.Dispatcher);
  });

  it('mix in what undici’s index mixes into Dispatcher.prototype, no more and no less', () => {
    const api = require('undici/lib/api/index.js') as Record<string, unknown>;
    // undici's index: `Object.assign(Dispatcher.prototype, api)`; the file must still say so.
    const index = fs.readFileSync(path.join(path.dirname(require.resolve('undici/package.json')), 'index.js'), 'utf8');
    assert.match(index, /Object\.assign\(Dispatcher\.prototype, api\)/);
    assert.match(index, /const api = require\('\.\/lib\/api'\)/);
    const undici = require('undici') as { Dispatcher: { prototype: Record<string, unknown> } };
    for (const [name, fn] of Object.entries(api)) assert.equal(undici.Dispatcher.prototype[name], fn, name);
    // What the HTTP client and ProxyAgent call on a dispatcher.
    for (const name of ['request', 'connect']) assert.equal(typeof api[name], 'function', name);
  });
});
/* eslint-enable @typescript-eslint/no-require-imports */
