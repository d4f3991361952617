import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { excludeRule } from '../../../src/core/completion/exclude';
import { completionPath, FIM_ROUTE } from '../../../src/core/completion/learning';
import { ReuseCache } from '../../../src/core/completion/reuse';
import { withoutRefused } from '../../../src/core/models/protocolFallback';
import { RefusalMemory, REFUSAL_TTL_MS } from '../../../src/core/models/refusalMemory';
import type { ModelInfo } from '../../../src/core/models/types';

describe('Typed-ahead reuse of a shown completion', () => {
  const before = 'const total = items.reduce((sum, item) => ';
  const shown = 'sum + item.price, 0);';

  it('gives the rest of a completion the user is typing into, without a new request', () => {
    const cache = new ReuseCache();
    let doc = before;
    const read = (s: number, e: number) => doc.slice(s, Math.min(e, doc.length));
    cache.remember('file:///a.ts', before.length, shown, read);
    for (let n = 0; n < 20; n++) {
      doc = before + shown.slice(0, n);
      assert.equal(cache.lookup('file:///a.ts', doc.length, read), shown.slice(n), `after ${n} characters`);
    }
  });

  it('misses when the typing departs from it, the text before it changed, or in another document', () => {
    const cache = new ReuseCache();
    let doc = before;
    const read = (s: number, e: number) => doc.slice(s, Math.min(e, doc.length));
    cache.remember('file:///a.ts', before.length, shown, read);
    doc = `${before}sumX`;
    assert.equal(cache.lookup('file:///a.ts', doc.length, read), undefined);
    doc = `${before.replace('total', 'sum')}sum`;
    assert.equal(cache.lookup('file:///a.ts', doc.length, read), undefined);
    doc = `${before}sum`;
    assert.equal(cache.lookup('file:///b.ts', doc.length, read), undefined);
    doc = before + shown;
    assert.equal(cache.lookup('file:///a.ts', doc.length, read), undefined, 'nothing left once all was typed');
  });
});

describe('Which path a model completes by, learnt per gateway', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'completion-refusals-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('remembers a FIM refusal like a refused protocol: per gateway and model, expiring', async () => {
    let now = 1_000_000;
    const memory = new RefusalMemory(path.join(dir, 'refused.json'), { now: () => now });
    assert.equal(completionPath('deepseek-chat', await memory.load('https://gw.example')), 'fimSuffix');
    await memory.add('https://gw.example', 'deepseek-chat', FIM_ROUTE);
    assert.equal(completionPath('deepseek-chat', await memory.load('https://gw.example')), 'chat');
    assert.equal(completionPath('deepseek-chat', await memory.load('https://other.example')), 'fimSuffix');
    const again = new RefusalMemory(path.join(dir, 'refused.json'), { now: () => now });
    assert.equal(completionPath('deepseek-chat', await again.load('https://gw.example')), 'chat', 'another window');
    now += REFUSAL_TTL_MS;
    assert.equal(completionPath('deepseek-chat', await memory.load('https://gw.example')), 'fimSuffix');
  });

  it('marks the model as completing over chat and leaves its chat protocols as they are', async () => {
    const model = { id: 'deepseek-chat', kind: 'chat', protocols: ['chatCompletions'] } as ModelInfo;
    assert.deepEqual(withoutRefused([model], { 'deepseek-chat': [FIM_ROUTE] }), [{ ...model, fimRefused: true }]);
    assert.deepEqual(withoutRefused([model], {}), [model]);
  });
});

describe('What completion may read (exclude rules)', () => {
  const rule = excludeRule({
    filesExclude: { '**/node_modules': true, '**/*.js': { when: '$(basename).ts' }, '**/off': false },
    patterns: ['generated/**', '**/*.snap'],
  });

  it('excludes secrets by default', () => {
    for (const p of [
      '.env',
      '.env.local',
      'config/prod.env',
      'certs/server.pem',
      'tls/server.key',
      'home/.ssh/id_rsa',
      'id_ed25519.pub',
      'credentials',
      '.aws/credentials',
      'gcp-credentials.json',
      'app/secrets/token.txt',
      '.netrc',
      'CERTS/SERVER.PEM',
    ])
      assert.equal(rule(p), true, p);
  });

  it('excludes what files.exclude and the setting name, folders included', () => {
    assert.equal(rule('node_modules/x/index.ts'), true);
    assert.equal(rule('packages/a/node_modules/y.ts'), true);
    assert.equal(rule('dist/app.js'), true, 'a `when` entry excludes always');
    assert.equal(rule('generated/api.ts'), true);
    assert.equal(rule('test/__snapshots__/a.snap'), true);
  });

  it('lets ordinary files through', () => {
    for (const p of ['src/main.ts', 'off/file.ts', 'environment.ts', 'src/keyboard.ts', 'docs/identity.md'])
      assert.equal(rule(p), false, p);
  });
});
