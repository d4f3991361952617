/**
 * Cancelling a request of VS Code's own chat, outside VS Code (fakeVscode.ts) against the gateway
 * double. VS Code 1.117–1.126 never pass a caller's cancellation on to a provider
 * (microsoft/vscode#277872, fixed in 1.127), so the real-host suite cannot show it on 1.117: here the
 * provider gets the token directly, as VS Code 1.127+ hands it over.
 *
 * What a cancelled call settles with: vscode.d.ts documents `CancellationError` as "an error type
 * that should be used to signal cancellation of an operation", and VS Code's chat treats a provider
 * promise rejected with it as a cancelled request, not a failed one. The provider rejects with it,
 * so a caller can tell a stop from a failure; this test holds it to that.
 */
// First: answers `vscode` for every host module imported after it.
import { CancellationTokenSource, fake, ui } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import type { HttpClient } from '../../../src/core/http';
import { BillingMeter } from '../../../src/core/tools/billing';
import { GatewayChatProvider } from '../../../src/host/lm/chatProvider';
import type { LanguageModelResponsePart } from '../../../src/host/lm/lmApi';
import { DEMO_KEY, GatewayDouble } from '../../gateway';
import { clientFor } from '../../support/client';

async function until<T>(what: string, condition: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = condition();
    if (value) return value;
    if (Date.now() > end) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("VS Code's own chat: a cancelled request (provider driven directly)", function () {
  this.timeout(120_000);
  let gw: GatewayDouble;
  let http: HttpClient;
  let provider: GatewayChatProvider;
  let billing: BillingMeter;

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    http = clientFor(gw.url, DEMO_KEY, { timeouts: { connectMs: 5000, firstByteMs: 60_000, idleMs: 60_000, longMs: 60_000 } }).http;
  });
  after(async () => {
    await http.close();
    await gw.stop();
  });
  beforeEach(() => {
    gw.clearLog();
    ui.settings = {};
    billing = new BillingMeter();
    const none = () => ({ dispose: () => undefined });
    const model = { id: 'gpt-4o-mini', name: 'GPT-4o mini', provider: 'openai', ownedBy: 'openai', kind: 'chat', protocols: ['chatCompletions'], protocolSource: 'gateway', available: true, inCatalog: false };
    const snapshot = { updatedAt: Date.now(), models: [model] };
    const services = {
      registry: { snapshot, onDidChange: none, refresh: async () => snapshot },
      keys: { onDidChange: none, has: async () => true },
      onDidChangeSettings: none,
      billing,
      http: () => http,
      ensureCatalogTimer: () => undefined,
      log: { warn: () => undefined, info: () => undefined, error: () => undefined, debug: () => undefined, trace: () => undefined },
    };
    provider = new GatewayChatProvider(services as never);
  });
  afterEach(() => provider.dispose());

  const user = (text: string) => ({ role: fake.LanguageModelChatMessageRole.User, content: [new fake.LanguageModelTextPart(text)], name: undefined });

  async function information() {
    const list = await provider.provideLanguageModelChatInformation({ silent: true }, new CancellationTokenSource().token as never);
    const info = list.find((m) => m.id === 'gpt-4o-mini');
    assert.ok(info, 'the model is offered');
    return info;
  }

  it('cancel after the first text part aborts the HTTP request at once and rejects with CancellationError', async () => {
    const info = await information();
    const source = new CancellationTokenSource();
    const parts: LanguageModelResponsePart[] = [];
    let partsAtCancel = -1;
    const progress = {
      report: (part: LanguageModelResponsePart) => {
        parts.push(part);
        if (partsAtCancel < 0 && part instanceof fake.LanguageModelTextPart) {
          partsAtCancel = parts.length;
          source.cancel();
        }
      },
    };
    // A long answer with 500 ms between frames: without the abort it would stream for minutes.
    const call = provider.provideLanguageModelChatResponse(info, [user('[[slow:500]] [[long:8]] a long answer')] as never, { toolMode: fake.LanguageModelChatToolMode.Auto } as never, progress, source.token as never);
    const settled = await call.then(
      () => ({ ok: true as const, error: undefined }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    assert.equal(settled.ok, false, 'a cancelled call rejects');
    assert.ok(settled.error instanceof fake.CancellationError, `rejected with CancellationError, not ${String(settled.error)}`);
    assert.ok(partsAtCancel > 0, 'the first text part was reported before cancelling');
    assert.equal(parts.length, partsAtCancel, 'no part was reported after cancel()');

    // The double settles the answer's cost when its stream ends: a closed connection ends it early,
    // with only part of the planned answer written.
    const entry = await until('the double to see the stream end', () => {
      const e = gw.log.filter((r) => r.answer !== undefined).at(-1);
      return e?.answer?.chargedQuota !== undefined ? e : undefined;
    });
    const answer = entry.answer;
    assert.ok(answer);
    const sent = parts.map((p) => (p instanceof fake.LanguageModelTextPart ? p.value : '')).join('');
    assert.ok(sent.length > 0 && sent.length < answer.text.length / 10, `only the start of the answer arrived (${sent.length} of ${answer.text.length} characters)`);
    assert.equal(billing.calls, 0);
  });

  it('a token cancelled before the call sends nothing and rejects with CancellationError', async () => {
    const info = await information();
    const source = new CancellationTokenSource();
    source.cancel();
    const parts: unknown[] = [];
    const error = await provider.provideLanguageModelChatResponse(info, [user('hello')] as never, { toolMode: fake.LanguageModelChatToolMode.Auto } as never, { report: (p) => parts.push(p) } as vscode.Progress<LanguageModelResponsePart>, source.token as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof fake.CancellationError, `rejected with CancellationError, not ${String(error)}`);
    assert.deepEqual(parts, []);
  });
});
