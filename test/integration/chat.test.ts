import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AskResult } from '../../src/host/chat/ask';
import type { AttachImagesResult } from '../../src/host/chat/attachmentTray';
import { DEFAULT_MODELS, DEMO_KEY, GatewayDouble, promptPng, VIP_KEY, VIP_ONLY_MODEL } from '../gateway';
import { run, setSetting } from './support';

/** The double's description of an image it received (see test/gateway/imageFacts.ts). */
function fact(bytes: Buffer, n = 1): string {
  return `image ${n}: PNG 48x48, ${bytes.length} bytes, sha256 ${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`;
}

/** Where exports go: the command writes to a file it is given instead of asking with a save dialog. */
const exportDir = mkdtempSync(path.join(os.tmpdir(), 'mg-export-'));
let exports = 0;

/** Exports the conversation shown to a file of its own: what was written, or undefined when there is nothing to export. */
function exportShown(): Promise<{ markdown: string } | undefined> {
  const uri = vscode.Uri.file(path.join(exportDir, `export-${++exports}.md`)).toString();
  return run<{ markdown: string } | undefined>('exportChat', { uri });
}

/** Exports a conversation to a file of its own: what was written. */
async function exportChat(conversationId: string): Promise<{ markdown: string }> {
  const uri = vscode.Uri.file(path.join(exportDir, `export-${++exports}.md`)).toString();
  const exported = await run<{ markdown: string } | undefined>('exportChat', { conversationId, uri });
  if (!exported) throw new Error(`conversation ${conversationId} had nothing to export`);
  return exported;
}

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
    await run('clearApiKey', { all: true });
    await gw.stop();
    rmSync(exportDir, { recursive: true, force: true });
  });
  beforeEach(() => gw.clearLog());

  it('"Chat with This Model" (the Models view) focuses the chat with that model chosen; an image model is refused', async () => {
    assert.deepEqual(await run('chatWithModel', { model: { id: 'claude-sonnet-4-5' } }), {
      model: 'claude-sonnet-4-5',
    });
    assert.deepEqual(await run('chatWithModel', 'gpt-4o-mini'), { model: 'gpt-4o-mini' });
    await assert.rejects(
      Promise.resolve(vscode.commands.executeCommand('modelGateway.chatWithModel', 'gpt-image-1')),
      /gpt-image-1 is not a chat model this key may use/,
    );
  });

  const cases = [
    { model: 'gpt-4o-mini', protocol: 'chatCompletions', path: '/v1/chat/completions' },
    { model: 'gpt-5', protocol: 'responses', path: '/v1/responses' },
    { model: 'claude-sonnet-4-5', protocol: 'messages', path: '/v1/messages' },
  ] as const;
  for (const c of cases) {
    it(`streams an answer over ${c.protocol}`, async () => {
      const result = await run<AskResult>('ask', {
        prompt: `Hello over ${c.protocol}`,
        model: c.model,
        protocol: c.protocol,
      });
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
    const result = await run<AskResult>('ask', {
      prompt: 'default protocol',
      model: 'claude-sonnet-4-5',
      conversationId: undefined,
    });
    assert.ok(['messages', 'chatCompletions'].includes(result.protocol));
    await assert.rejects(
      Promise.resolve(
        vscode.commands.executeCommand('modelGateway.ask', {
          prompt: 'x',
          model: 'claude-sonnet-4-5',
          protocol: 'responses',
        }),
      ),
      /does not speak the responses protocol/,
    );
  });

  it('falls back once from a listed protocol the relay refuses, and keeps to the one that worked', async () => {
    // A model only this test uses: what the extension remembers about it touches no other test.
    const relayModel = 'relay-refuses-responses';
    const refusing = new GatewayDouble({
      models: [
        ...DEFAULT_MODELS,
        { id: relayModel, owned_by: 'openai', supported_endpoint_types: ['openai-response', 'openai'], ratio: 0.1 },
      ],
      groups: { default: [...DEFAULT_MODELS.map((m) => m.id), relayModel] },
      refusedEndpoints: { [relayModel]: ['openai-response'] },
    });
    await refusing.start();
    try {
      await setSetting('baseUrl', refusing.url);
      await run('refreshModels');
      await run('newChat');
      const first = await run<AskResult>('ask', { prompt: 'first try', model: relayModel });
      assert.equal(first.status, 'done', JSON.stringify(first.error));
      assert.equal(first.protocol, 'chatCompletions', 'the answer came over the fallback');
      assert.equal(first.text, `Echo from ${relayModel}: first try`);
      const posted = () => refusing.log.filter((e) => e.method === 'POST').map((e) => `${e.path} ${e.status}`);
      assert.deepEqual(posted(), ['/v1/responses 400', '/v1/chat/completions 200']);
      refusing.clearLog();
      const second = await run<AskResult>('ask', { prompt: 'second try', model: relayModel });
      assert.equal(second.protocol, 'chatCompletions');
      assert.deepEqual(posted(), ['/v1/chat/completions 200'], 'remembered: the refused protocol is not tried again');
      // The user's explicit choice wins over what was remembered: the refused protocol is tried again.
      refusing.clearLog();
      await run<AskResult>('ask', { prompt: 'third try', model: relayModel, protocol: 'responses' });
      assert.equal(posted()[0], '/v1/responses 400', 'the explicit choice was overruled by the remembered refusal');
    } finally {
      await setSetting('baseUrl', gw.url);
      await run('refreshModels');
      await refusing.stop();
    }
  });

  it('keeps reasoning separately from the answer', async () => {
    const result = await run<AskResult>('ask', { prompt: '[[reasoning]] think first', model: 'deepseek-r1' });
    assert.ok(result.reasoning.length > 0);
    assert.equal(result.text, 'Echo from deepseek-r1: think first');
  });

  it('thinking: a conversation starts from modelGateway.chat.thinking, keeps its own choice, and each upstream gets its own form', async () => {
    const bodyOf = (p: string) =>
      JSON.parse(gw.log.filter((e) => e.path === p).at(-1)?.bodyText ?? '{}') as Record<string, unknown>;
    await setSetting('chat.thinking', 'off');
    try {
      await run('newChat');
      const first = await run<AskResult>('ask', { prompt: 'tides', model: 'qwen-plus' });
      assert.equal(first.status, 'done', JSON.stringify(first.error));
      assert.equal(bodyOf('/v1/chat/completions').enable_thinking, false);
      assert.equal(first.reasoning, '');
      // The setting changes; the conversation keeps "off" until it is changed there.
      await setSetting('chat.thinking', 'high');
      await run<AskResult>('ask', { prompt: 'and again', conversationId: first.conversationId });
      assert.equal(bodyOf('/v1/chat/completions').enable_thinking, false);
      const on = await run<AskResult>('ask', {
        prompt: 'now think',
        conversationId: first.conversationId,
        thinking: 'high',
      });
      assert.equal(bodyOf('/v1/chat/completions').enable_thinking, true);
      assert.equal(bodyOf('/v1/chat/completions').thinking_budget, 24576);
      assert.ok(on.reasoning.length > 0, 'the reasoning is kept apart from the answer');
      // A new conversation takes the setting: GLM's form on glm-4.6, Anthropic's on Messages.
      await run('newChat');
      await run<AskResult>('ask', { prompt: 'glm', model: 'glm-4.6' });
      assert.deepEqual(bodyOf('/v1/chat/completions').thinking, { type: 'enabled' });
      await run('newChat');
      const claude = await run<AskResult>('ask', {
        prompt: 'claude',
        model: 'claude-sonnet-4-5',
        protocol: 'messages',
      });
      assert.equal(claude.status, 'done', JSON.stringify(claude.error));
      assert.deepEqual(bodyOf('/v1/messages').thinking, { type: 'enabled', budget_tokens: 24576 });
    } finally {
      await setSetting('chat.thinking', undefined);
    }
  });

  it('sends the web-search switch only to third-provider models over Chat Completions', async () => {
    await run<AskResult>('ask', { prompt: 'search the news', model: 'qwen-plus', enableSearch: true });
    assert.match(gw.log.find((e) => e.path === '/v1/chat/completions')?.bodyText ?? '', /"enable_search":true/);
    gw.clearLog();
    await run<AskResult>('ask', { prompt: 'no search here', model: 'gpt-4o-mini', enableSearch: true });
    assert.doesNotMatch(gw.log.find((e) => e.path === '/v1/chat/completions')?.bodyText ?? '', /enable_search/);
  });

  it('stops mid-stream at once and keeps the partial answer', async () => {
    // The stream sends its first words and then holds the connection open (no end, far inside the
    // idle timeout), so Stop lands while it is under way however slow the machine is.
    // A conversation of its own, so that the export below shows only this answer.
    await run('newChat');
    const pending = run<AskResult>('ask', { prompt: '[[stall]] [[long:1]] a long answer', model: 'gpt-4o-mini' });
    // Barrier instead of a pause: stop once the answer's first words have reached the extension
    // (the export of the current conversation shows them).
    const deadline = Date.now() + 60_000;
    for (;;) {
      const exported = await exportShown();
      if (exported?.markdown.includes('Echo from gpt-4o-mini: a long answer')) break;
      if (Date.now() > deadline) throw new Error('no part of the answer reached the extension within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
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

  describe('images', () => {
    let dir: string;
    const fox = promptPng('a fox in the snow');
    const owl = promptPng('an owl at night');
    let foxFile: string;
    let owlFile: string;
    before(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'mg-chat-images-'));
      foxFile = path.join(dir, 'fox.png');
      owlFile = path.join(dir, 'owl.png');
      writeFileSync(foxFile, fox);
      writeFileSync(owlFile, owl);
    });
    after(async () => {
      await setSetting('chat.imageMaxBytes', undefined);
      rmSync(dir, { recursive: true, force: true });
    });

    for (const c of cases) {
      it(`"Ask About This Image" with a prompt sends the image over ${c.protocol} and gets the double's description of that exact image`, async () => {
        const result = await run<AskResult>('askAboutImage', {
          uri: vscode.Uri.file(foxFile).toString(),
          prompt: `What is this? (${c.protocol})`,
          model: c.model,
          protocol: c.protocol,
        });
        assert.equal(result.status, 'done', JSON.stringify(result.error));
        assert.equal(result.protocol, c.protocol);
        assert.ok(result.text.includes(fact(fox)), result.text);
        assert.deepEqual(
          result.images.map((i) => [i.name, i.mediaType, i.width, i.height, i.bytes, i.id]),
          [['fox.png', 'image/png', 48, 48, fox.length, createHash('sha256').update(fox).digest('hex')]],
        );
        const body = gw.log.find((e) => e.path === c.path)?.bodyText ?? '';
        const b64 = fox.toString('base64');
        if (c.protocol === 'messages') assert.ok(body.includes(`"media_type":"image/png","data":"${b64}"`));
        else if (c.protocol === 'responses')
          assert.ok(body.includes(`"type":"input_image","image_url":"data:image/png;base64,${b64}"`));
        else assert.ok(body.includes(`"image_url":{"url":"data:image/png;base64,${b64}"}`));
      });
    }

    it('from the explorer: attaches every selected image and returns; the next message carries them, and later turns re-send them from storage', async () => {
      await run('newChat');
      await run<AskResult>('ask', { prompt: 'pick a model first', model: 'gpt-4o-mini', protocol: 'chatCompletions' });
      await run('newChat');
      gw.clearLog();
      const attached = await run<AttachImagesResult>('askAboutImage', vscode.Uri.file(foxFile), [
        vscode.Uri.file(foxFile),
        vscode.Uri.file(owlFile),
      ]);
      assert.deepEqual(
        attached.attached.map((i) => i.name),
        ['fox.png', 'owl.png'],
      );
      assert.equal(
        gw.log.filter((e) => e.path.startsWith('/v1/chat') || e.path === '/v1/responses').length,
        0,
        'attaching sends nothing',
      );
      const scripted = await run<AskResult>('ask', { prompt: 'a script asks first' });
      assert.deepEqual(scripted.images, [], "a scripted question does not take the user's attachments");
      const first = await run<AskResult>('ask', {
        prompt: 'compare these two',
        withAttachments: true,
        conversationId: scripted.conversationId,
      });
      assert.ok(first.text.includes(fact(fox, 1)) && first.text.includes(fact(owl, 2)), first.text);
      gw.clearLog();
      const second = await run<AskResult>('ask', {
        prompt: 'and now without new images',
        conversationId: first.conversationId,
      });
      assert.ok(!second.text.includes('image 1:'), 'the new question has no images of its own');
      assert.ok(
        (gw.log.at(-1)?.bodyText ?? '').includes(owl.toString('base64')),
        'the earlier images go along as history, read back from storage',
      );
      const exported = await exportChat(first.conversationId);
      assert.match(exported.markdown, /> Image: fox\.png \(PNG 48×48, [\d.]+ KiB, sha256 [0-9a-f]{12}\)/);
      assert.ok(!exported.markdown.includes(fox.toString('base64').slice(0, 40)));
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    });

    it('switches to a model that takes images when the selected one does not (the media gallery calls it with {uri})', async () => {
      await run<AskResult>('ask', { prompt: 'text only', model: 'qwen-plus' });
      await run('newChat');
      const attached = await run<AttachImagesResult>('askAboutImage', { uri: vscode.Uri.file(foxFile) });
      assert.equal(attached.switchedFrom, 'qwen-plus');
      assert.notEqual(attached.model, 'qwen-plus');
      assert.equal(attached.attached[0]?.name, 'fox.png');
      const answer = await run<AskResult>('ask', { prompt: 'what is it?', withAttachments: true });
      assert.equal(answer.model, attached.model);
      assert.ok(answer.text.includes(fact(fox)));
      // The switch is said in the conversation itself, before the question it was made for.
      const exported = await exportChat(answer.conversationId);
      assert.match(
        exported.markdown,
        new RegExp(
          `_Model switched from qwen-plus to ${attached.model.replace(/[.-]/g, '\\$&')}: qwen-plus does not take images\\._\\n\\n## You\\n\\n> Image: fox\\.png [^\\n]*\\n\\nwhat is it\\?`,
        ),
      );
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    });

    it('refuses a model without image input, too large images and non-images, saying why and sending nothing', async () => {
      gw.clearLog();
      await assert.rejects(
        Promise.resolve(
          vscode.commands.executeCommand('modelGateway.ask', {
            prompt: 'see this',
            model: 'qwen-plus',
            images: [foxFile],
          }),
        ),
        /qwen-plus does not take images/,
      );
      await setSetting('chat.imageMaxBytes', 100);
      await assert.rejects(
        Promise.resolve(vscode.commands.executeCommand('modelGateway.askAboutImage', { uri: foxFile, prompt: 'big?' })),
        /fox\.png is [\d.]+ KiB .* over the 100 B limit/,
      );
      await setSetting('chat.imageMaxBytes', undefined);
      const fake = path.join(dir, 'fake.png');
      writeFileSync(fake, 'BM not really an image');
      const refused = await run<{ attached: unknown[]; error?: { message: string } }>('askAboutImage', { uri: fake });
      assert.deepEqual(refused.attached, []);
      assert.match(refused.error?.message ?? '', /fake\.png is a BMP file/);
      assert.equal(gw.log.filter((e) => e.answer).length, 0, 'nothing was sent to a model');
      const clean = await run<AskResult>('ask', { prompt: 'no leftovers', model: 'gpt-4o-mini' });
      assert.deepEqual(clean.images, [], 'a refused scripted question leaves nothing attached');
    });
  });

  describe('web search', () => {
    it('Responses: the switch adds the web_search tool; the numbered sources are kept and exported', async () => {
      await run('newChat');
      const on = await run<AskResult>('ask', {
        prompt: 'who won the regatta',
        model: 'gpt-4o-mini',
        protocol: 'responses',
        enableSearch: true,
      });
      assert.equal(on.status, 'done', JSON.stringify(on.error));
      const body = JSON.parse(gw.log.find((e) => e.path === '/v1/responses')?.bodyText ?? '{}') as {
        tools?: unknown;
        enable_search?: unknown;
      };
      assert.deepEqual(body.tools, [{ type: 'web_search' }]);
      assert.equal(body.enable_search, undefined);
      assert.deepEqual(on.citations, [
        { url: 'https://news.example.com/who-won-the-regatta', title: 'Example News' },
        { url: 'https://encyclopedia.example.org/wiki/who-won-the-regatta', title: 'Example Encyclopedia' },
      ]);
      assert.deepEqual(on.searches, ['who won the regatta']);
      const exported = await exportChat(on.conversationId);
      assert.match(
        exported.markdown,
        /\*\*Sources\*\*\n\n1\. \[Example News\]\(https:\/\/news\.example\.com\/who-won-the-regatta\)\n2\. \[Example Encyclopedia\]/,
      );
      assert.match(exported.markdown, /_Searched the web for: “who won the regatta”_/);
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');

      gw.clearLog();
      const off = await run<AskResult>('ask', {
        prompt: 'and without searching',
        conversationId: on.conversationId,
        enableSearch: false,
      });
      assert.equal(
        (JSON.parse(gw.log.find((e) => e.path === '/v1/responses')?.bodyText ?? '{}') as { tools?: unknown }).tools,
        undefined,
      );
      assert.deepEqual(off.citations, []);
    });

    it('Chat Completions: enable_search for the third provider, nothing for others, and no tool', async () => {
      await run('newChat');
      const on = await run<AskResult>('ask', { prompt: 'weather news', model: 'qwen-plus', enableSearch: true });
      const body = JSON.parse(gw.log.find((e) => e.path === '/v1/chat/completions')?.bodyText ?? '{}') as {
        enable_search?: unknown;
        tools?: unknown;
      };
      assert.equal(body.enable_search, true);
      assert.equal(body.tools, undefined);
      assert.match(on.text, /I searched the web for "weather news"/);
      gw.clearLog();
      await run<AskResult>('ask', {
        prompt: 'gpt on chat completions',
        model: 'gpt-4o-mini',
        protocol: 'chatCompletions',
        enableSearch: true,
      });
      const other = JSON.parse(gw.log.find((e) => e.path === '/v1/chat/completions')?.bodyText ?? '{}') as {
        enable_search?: unknown;
      };
      assert.equal(other.enable_search, undefined, 'gpt-4o-mini cannot search over Chat Completions');
    });
  });

  it('stores conversations and exports them as Markdown', async () => {
    const first = await run<AskResult>('ask', { prompt: 'remember this line', model: 'gpt-4o-mini' });
    const exported = await exportChat(first.conversationId);
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

  it("a key that can no longer use the conversation's model: no silent switch; the pick is said in the conversation, kept out of history, and Send works", async () => {
    await run('setApiKey', VIP_KEY);
    await run('refreshModels');
    const first = await run<AskResult>('ask', { prompt: 'on the vip model', model: VIP_ONLY_MODEL });
    assert.equal(first.model, VIP_ONLY_MODEL);
    try {
      // The demo key's group is not granted the model: its /v1/models no longer lists it.
      await run('setApiKey', DEMO_KEY);
      await run('refreshModels');
      gw.clearLog();
      await assert.rejects(
        Promise.resolve(
          vscode.commands.executeCommand('modelGateway.ask', {
            prompt: 'still there?',
            conversationId: first.conversationId,
          }),
        ),
        new RegExp(`Pick the model to continue with: ${VIP_ONLY_MODEL} is not available with this API key`),
      );
      assert.equal(gw.log.filter((e) => e.answer).length, 0, 'nothing went to another model');
      const next = await run<AskResult>('ask', {
        prompt: 'go on',
        conversationId: first.conversationId,
        model: 'qwen-plus',
      });
      assert.equal(next.status, 'done', JSON.stringify(next.error));
      assert.equal(next.model, 'qwen-plus');
      const body = gw.log.filter((e) => e.answer).at(-1)?.bodyText ?? '';
      assert.match(body, /on the vip model/, 'the earlier messages go as history');
      assert.doesNotMatch(body, /not available|continuing with/, 'the notice does not');
      const exported = await exportChat(first.conversationId);
      assert.match(
        exported.markdown,
        new RegExp(
          `on the vip model[\\s\\S]*\\n_${VIP_ONLY_MODEL} is not available with the new API key; continuing with qwen-plus\\._\\n[\\s\\S]*go on`,
        ),
      );
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      assert.equal(
        (await run<AskResult>('ask', { prompt: 'and again', conversationId: first.conversationId })).model,
        'qwen-plus',
        'the conversation goes on with the pick',
      );
    } finally {
      await run('setApiKey', DEMO_KEY);
    }
  });

  it('two asks racing into one conversation: exactly one request reaches the gateway, the other is refused', async () => {
    const first = await run<AskResult>('ask', { prompt: 'a conversation to race in', model: 'gpt-4o-mini' });
    gw.clearLog();
    const a = run<AskResult>('ask', {
      prompt: '[[slow:40]] [[long:1]] first of two',
      conversationId: first.conversationId,
    });
    const b = run<AskResult>('ask', { prompt: 'second of two', conversationId: first.conversationId });
    const [ra, rb] = await Promise.allSettled([a, b]);
    const done = [ra, rb].filter((r) => r.status === 'fulfilled');
    const refused = [ra, rb].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(done.length, 1, 'one ask ran');
    assert.equal(refused.length, 1, 'one ask was refused');
    assert.match(String(refused[0]?.reason), /still being written in this conversation/);
    assert.equal(
      gw.log.filter((e) => e.path === '/v1/chat/completions').length,
      1,
      'exactly one request reached the gateway',
    );
  });
});
