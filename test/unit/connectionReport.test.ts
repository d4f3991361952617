/**
 * What "Check Connection" says: a short outcome that never repeats itself, and the facts behind it
 * one per line; and the status bar item that, with no key, offers to set one instead.
 */
// First: answers `vscode` for every host module imported after it.
import { statusItems } from './chatHost/fakeVscode';
import assert from 'node:assert/strict';
import { formatReport, reportFacts, summariseReport, type ConnectionReport } from '../../src/core/connection';
import type { Services } from '../../src/host/services';
import { GatewayStatusBar } from '../../src/host/statusBar';
import { hostServices } from './lmHost/hostServices';
import { clientFor } from '../support/client';

const NONE = { chat: 0, image: 0, video: 0, tool: 0, other: 0 };
const base = { base: 'https://gw.example', baseChanges: [], modelsPerKind: NONE };

/** Every sentence of a text, for "nothing is said twice". */
function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?。])\s*/)
    .map((s) => s.trim().replace(/^Problem:\s*/, ''))
    .filter(Boolean);
}

describe('Check Connection: the outcome and the report', () => {
  it('with no key says so once, and does not repeat the registry\'s "No API key is set" as a problem', () => {
    const r: ConnectionReport = {
      ...base,
      keySet: false,
      reachable: false,
      error: {
        kind: 'auth',
        message: 'No API key is set. Run "Model Gateway: Set API Key" to see the models this key may use.',
      },
    };
    const text = summariseReport(r);
    assert.equal((text.match(/No API key is set/g) ?? []).length, 1, text);
    const all = sentences(text);
    assert.equal(new Set(all).size, all.length, `a sentence is repeated: ${text}`);
    const facts = reportFacts(r);
    assert.ok(!facts.some((f) => f.label === 'Problem'), 'the missing key is the API key line, not a second "problem"');
    assert.deepEqual(facts[0], { label: 'API key', value: 'not set', state: 'problem' });
  });

  it('an accepted key: one sentence with the masked key and the number of models; the facts one per line', () => {
    const r: ConnectionReport = {
      ...base,
      baseChanges: ['removed the trailing /v1'],
      keySet: true,
      maskedKey: 'sk-…abcd',
      keyAccepted: true,
      reachable: true,
      modelsPerKind: { chat: 5, image: 2, video: 1, tool: 3, other: 0 },
      catalog: { url: 'https://c.example/models.json', format: 'json', models: 40, ageSeconds: 30, source: 'network' },
    };
    assert.equal(summariseReport(r), 'Key accepted: sk-…abcd may use 11 models.');
    assert.deepEqual(
      reportFacts(r).map((f) => [f.label, f.value, f.state]),
      [
        ['API key', 'sk-…abcd, accepted by the gateway', 'ok'],
        ['Base address', 'https://gw.example', 'ok'],
        ['Models for this key', '5 chat, 2 image, 1 video, 3 tool', 'ok'],
        ['Catalog', '40 models (json), downloaded 30 s ago', 'ok'],
      ],
    );
    assert.equal(reportFacts(r)[1]?.detail, 'Normalised: removed the trailing /v1');
  });

  it("a refused key: the gateway's words once, with the request id in the report only", () => {
    const r: ConnectionReport = {
      ...base,
      keySet: true,
      maskedKey: 'sk-…dead',
      keyAccepted: false,
      reachable: true,
      error: { kind: 'auth', message: 'Invalid token.', requestId: 'req-1' },
    };
    const text = summariseReport(r);
    assert.equal(text, 'Key refused by the gateway (sk-…dead): Invalid token.');
    const problem = reportFacts(r).find((f) => f.label === 'Problem');
    assert.deepEqual(problem, {
      label: 'Problem',
      value: 'Invalid token.',
      detail: 'Request id: req-1',
      state: 'problem',
    });
  });
});

describe('Check Connection with several keys', () => {
  const keys = [
    { name: 'default', masked: '••••WVG1', accepted: true, models: 13 },
    { name: 'team', masked: '••••TEAM', accepted: true, models: 4 },
  ];
  const r: ConnectionReport = {
    ...base,
    modelsPerKind: { ...NONE, chat: 12, image: 2 },
    keySet: true,
    maskedKey: '••••WVG1',
    keyAccepted: true,
    reachable: true,
    keys,
  };

  it("gives each key's own count and names the total as all keys together, never as one key's", () => {
    const outcome = summariseReport(r);
    assert.equal(
      outcome,
      '2 keys accepted: "default" may use 13 models; "team" may use 4 models. All keys together: 14 models.',
    );
    assert.doesNotMatch(outcome, /••••WVG1 may use 14/);
    const facts = reportFacts(r);
    assert.deepEqual(facts[0], { label: 'API keys', value: '2 of 2 keys accepted by the gateway', state: 'ok' });
    assert.ok(facts.some((f) => f.label === 'Models of all keys together'));
    assert.ok(!facts.some((f) => f.label === 'Models for this key'));
    assert.match(formatReport(r), /^Models of all keys together: 12 chat, 2 image, 0 video, 0 tool$/m);
  });

  it('with one of two keys accepted speaks of that key and its own count', () => {
    const one = { ...r, keys: [keys[0]!, { name: 'team', masked: '••••TEAM', accepted: false }] };
    assert.match(summariseReport(one), /^Key "default" \(••••WVG1\) accepted: it may use 13 models\. 1 of your 2 keys/);
  });
});

describe('The status bar item', () => {
  it('with no key offers Set API Key; with a key it checks the connection and opens the report', async () => {
    const { services } = hostServices(clientFor('http://127.0.0.1:9', 'unused').http);
    let hasKey = false;
    const keyed = {
      ...services,
      keys: {
        onDidChange: () => ({ dispose: () => undefined }),
        has: async () => hasKey,
        masked: async () => (hasKey ? 'sk-…demo' : undefined),
      },
    } as unknown as Services;
    const bar = new GatewayStatusBar(keyed);
    try {
      const item = statusItems.at(-1) as unknown as { text: string; command: unknown; tooltip: { value: string } };
      await bar.update();
      assert.equal(item.command, 'modelGateway.setApiKey');
      assert.match(item.tooltip.value, /Click to set an API key/);
      hasKey = true;
      await bar.update();
      // The report itself, not a notice offering it: that would open under the item's tooltip.
      assert.deepEqual(item.command, {
        command: 'modelGateway.checkConnection',
        title: 'Check Connection',
        arguments: [{ report: true }],
      });
      assert.match(item.tooltip.value, /Click to check the connection and see the report/);
    } finally {
      bar.dispose();
    }
  });
});
