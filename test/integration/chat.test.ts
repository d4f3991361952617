import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { AskResult } from '../../src/host/chat/chatController';
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { run, setSetting } from './support';

describe('Chat in a real extension host', function () {
  let gw: GatewayDouble;

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    await run('setApiKey', DEMO_KEY);
    await run('refreshModels');
  });
  after(async () => {
    await setSetting('timeouts.idleSeconds', undefined);
    await run('clearApiKey');
    await gw.stop();
  });
  beforeEach(() => gw.clearLog());

  const cases = [
    { model: 'gpt-4o-mini', protocol: 'chatCompletions', path: '/v1/chat/completions' },
    { model: 'gpt-5', protocol: 'responses', path: '/v1/responses' },
    { model: 'claude-sonnet-4-5', protocol: 'messages', path: '/v1/messages' },
  ] as const;
  for (const c of cases) {
    it(`streams an answer over ${c.protocol}`, async () => {
      const result = await run<AskResult>('ask', { prompt: `Hello over ${c.protocol}`, model: c.model, protocol: c.protocol });
      assert.equal(result.status, 'done', JSON.stringify(result.error));
      assert.equal(result.text, `Echo from ${c.model}: Hello over ${c.protocol}`);
      assert.equal(result.protocol, c.protocol);
      assert.equal(result.model, c.model);
      assert.ok(result.usage?.outputTokens, 'usage is reported');
      const request = gw.log.find((e) => e.path === c.path);
      assert.ok(request, `a request went to ${c.path}`);
      assert.equal(request.headers.authorization, `Bearer ${DEMO_KEY}`);
      assert.match(request.bodyText ?? '', /"stream":true/);
      if (c.protocol === 'messages') {
        assert.equal(request.headers['anthropic-version'], '2023-06-01');
        assert.match(request.bodyText ?? '', /"max_tokens":4096/);
      }
    });
  }

  it("uses the model's first protocol unless overridden, and refuses one it does not speak", async () => {
    const result = await run<AskResult>('ask', { prompt: 'default protocol', model: 'claude-sonnet-4-5', conversationId: undefined });
    assert.ok(['messages', 'chatCompletions'].includes(result.protocol));
    await assert.rejects(Promise.resolve(vscode.commands.executeCommand('modelGateway.ask', { prompt: 'x', model: 'claude-sonnet-4-5', protocol: 'responses' })), /does not speak the responses protocol/);
  });

  it('keeps reasoning separately from the answer', async () => {
    const result = await run<AskResult>('ask', { prompt: '[[reasoning]] think first', model: 'deepseek-r1' });
    assert.ok(result.reasoning.length > 0);
    assert.equal(result.text, 'Echo from deepseek-r1: think first');
  });

  it('sends the web-search switch only to third-provider models over Chat Completions', async () => {
    await run<AskResult>('ask', { prompt: 'search the news', model: 'qwen-plus', enableSearch: true });
    assert.match(gw.log.find((e) => e.path === '/v1/chat/completions')?.bodyText ?? '', /"enable_search":true/);
    gw.clearLog();
    await run<AskResult>('ask', { prompt: 'no search here', model: 'gpt-4o-mini', enableSearch: true });
    assert.doesNotMatch(gw.log.find((e) => e.path === '/v1/chat/completions')?.bodyText ?? '', /enable_search/);
  });

  it('stops mid-stream at once and keeps the partial answer', async () => {
    const pending = run<AskResult>('ask', { prompt: '[[slow:40]] [[long:8]] a long answer', model: 'gpt-4o-mini' });
    await new Promise((r) => setTimeout(r, 600));
    await run('stopChat');
    const result = await pending;
    assert.equal(result.status, 'stopped');
    assert.ok(result.text.length > 0, 'the partial text is kept');
    assert.equal(result.error, undefined);
  });

  it('turns a stalled stream into a clear timeout and keeps the partial answer', async () => {
    await setSetting('timeouts.idleSeconds', 1);
    try {
      const result = await run<AskResult>('ask', { prompt: '[[stall]] then nothing', model: 'gpt-4o-mini' });
      assert.equal(result.status, 'cut');
      assert.equal(result.error?.kind, 'timeout');
      assert.match(result.error?.message ?? '', /idleSeconds/);
      assert.ok(result.text.length > 0);
    } finally {
      await setSetting('timeouts.idleSeconds', undefined);
    }
  });

  it('reports a cut connection inline and keeps the text', async () => {
    const result = await run<AskResult>('ask', { prompt: '[[cut]] interrupted', model: 'gpt-4o-mini' });
    assert.equal(result.status, 'cut');
    assert.match(result.error?.message ?? '', /closed in the middle/);
  });

  it('stores conversations and exports them as Markdown', async () => {
    const first = await run<AskResult>('ask', { prompt: 'remember this line', model: 'gpt-4o-mini' });
    const exported = await run<{ markdown: string }>('exportChat', { conversationId: first.conversationId });
    assert.match(exported.markdown, /## You\n\nremember this line/);
    assert.match(exported.markdown, /Echo from gpt-4o-mini: remember this line/);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    const next = await run<{ conversationId?: string }>('newChat');
    assert.equal(next.conversationId, undefined, 'a new chat starts empty');
    const again = await run<AskResult>('ask', { prompt: 'continue', conversationId: first.conversationId });
    assert.equal(again.conversationId, first.conversationId);
    const body = gw.log.filter((e) => e.path === '/v1/chat/completions').at(-1)?.bodyText ?? '';
    assert.match(body, /remember this line/, 'the earlier messages are sent as history');
  });
});
