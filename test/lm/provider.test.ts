import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import {
  DEFAULT_GROUPS,
  DEFAULT_MODELS,
  DEMO_KEY,
  GatewayDouble,
  promptPng,
  type ModelSpec,
  type RequestLogEntry,
} from '../gateway';
import { run, setSetting } from '../integration/support';

/**
 * The gateway's models in VS Code's own chat, driven the way any extension (or the Chat view) uses
 * them: `vscode.lm.selectChatModels`, `sendRequest`, `countTokens`. Runs in VS Code 1.139.
 */

const VENDOR = 'modelGateway';

/** A model that speaks only the Responses protocol, so that the provider's first-protocol rule picks it. */
const RESPONSES_MODEL: ModelSpec = {
  id: 'gpt-5-codex',
  owned_by: 'openai',
  supported_endpoint_types: ['openai-response'],
  ratio: 0.625,
  name: 'GPT-5 Codex',
  modalities: { input: ['text', 'image'], output: ['text'] },
  limit: { context: 400_000, output: 128_000 },
};

/** The chat models the demo key's group may use; the image, video and tool entries and qwen-max (vip only) are not. */
const EXPECTED_CHAT = [
  'claude-sonnet-4-5',
  'deepseek-chat',
  'deepseek-r1',
  'glm-4.6',
  'gpt-4o-mini',
  'gpt-5',
  'gpt-5-codex',
  'kimi-k2-0905-preview',
  'kimi-k2-thinking',
  'qwen-plus',
  'qwen2.5-coder-32b-instruct',
];
const NOT_CHAT = [
  'gpt-image-1',
  'wanx2.1-t2i-turbo',
  'wan2.5-t2v-preview',
  'glm-file-parser',
  'kimi-file-extract',
  'qwen-max',
];

/** `vscode.LanguageModelDataPart` is stable from 1.104; the tests are typed against 1.100. */
const DataPart = (vscode as unknown as { LanguageModelDataPart: { image(data: Uint8Array, mime: string): unknown } })
  .LanguageModelDataPart;

/** A user message whose content mixes text and data parts (1.100 typings know only text and tool results). */
function userMessage(parts: unknown[]): vscode.LanguageModelChatMessage {
  return vscode.LanguageModelChatMessage.User(parts as vscode.LanguageModelTextPart[]);
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function gatewayModels(): Promise<vscode.LanguageModelChat[]> {
  return vscode.lm.selectChatModels({ vendor: VENDOR });
}

async function model(id: string): Promise<vscode.LanguageModelChat> {
  return waitFor(`model ${id}`, async () => (await gatewayModels()).find((m) => m.id === id));
}

/** The whole streamed text of a request, or the error it ended with. */
async function ask(
  chat: vscode.LanguageModelChat,
  messages: vscode.LanguageModelChatMessage[],
  token?: vscode.CancellationToken,
): Promise<string> {
  const response = await chat.sendRequest(messages, {}, token);
  let text = '';
  for await (const fragment of response.text) text += fragment;
  return text;
}

/** A function tool as a caller offers it. */
const WEATHER: vscode.LanguageModelChatTool = {
  name: 'get_forecast',
  description: 'The weather forecast for a city.',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
    required: ['city'],
  },
};

/** The text and tool calls of a response, read from its part stream. */
async function parts(
  response: vscode.LanguageModelChatResponse,
): Promise<{ text: string; calls: vscode.LanguageModelToolCallPart[] }> {
  let text = '';
  const calls: vscode.LanguageModelToolCallPart[] = [];
  for await (const part of response.stream) {
    if (part instanceof vscode.LanguageModelTextPart) text += part.value;
    else if (part instanceof vscode.LanguageModelToolCallPart) calls.push(part);
  }
  return { text, calls };
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof Error, `an Error, not ${String(err)}`);
    return err;
  }
  assert.fail('the request was expected to fail');
}

function fact(bytes: Buffer, n = 1): string {
  return `image ${n}: PNG 48x48, ${bytes.length} bytes, sha256 ${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`;
}

describe("The gateway's models in VS Code's own chat (VS Code 1.139)", function () {
  let gw: GatewayDouble;
  /** Index into gw.log where the running test's requests begin; the whole run's log stays for the key check. */
  let since = 0;
  const requests = (): RequestLogEntry[] => gw.log.slice(since);
  const chatRequests = (): RequestLogEntry[] => requests().filter((e) => e.answer !== undefined);

  before(async () => {
    gw = new GatewayDouble({
      models: [...DEFAULT_MODELS, RESPONSES_MODEL],
      groups: Object.fromEntries(
        Object.entries(DEFAULT_GROUPS).map(([group, ids]) => [group, [...ids, RESPONSES_MODEL.id]]),
      ),
    });
    await gw.start();
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    await run('setApiKey', DEMO_KEY);
  });
  after(async () => {
    await setSetting('timeouts.idleSeconds', undefined);
    await run('clearApiKey');
    await gw.stop();
  });
  beforeEach(() => {
    gw.clearFaults();
    since = gw.log.length;
  });

  it('offers no models without a key, and never asks the gateway', async () => {
    await run('clearApiKey');
    try {
      assert.deepEqual(await gatewayModels(), []);
      assert.equal(requests().filter((e) => e.origin === 'gateway').length, 0);
    } finally {
      await run('setApiKey', DEMO_KEY);
    }
  });

  it("lists the key's chat models and nothing else", async () => {
    const ids = await waitFor('the chat models', async () => {
      const list = (await gatewayModels()).map((m) => m.id).sort();
      return list.length ? list : undefined;
    });
    assert.deepEqual(ids, EXPECTED_CHAT);
    for (const id of NOT_CHAT) assert.ok(!ids.includes(id), `${id} is not offered`);
    const gpt = await model('gpt-4o-mini');
    assert.equal(gpt.vendor, VENDOR);
    assert.equal(gpt.name, 'GPT-4o mini');
    // The catalog's 128K window, less the 16K the model may answer with.
    assert.equal(gpt.maxInputTokens, 128_000 - 16_384);
  });

  const protocols = [
    { model: 'gpt-4o-mini', path: '/v1/chat/completions', protocol: 'chatCompletions' },
    { model: 'gpt-5-codex', path: '/v1/responses', protocol: 'responses' },
    { model: 'claude-sonnet-4-5', path: '/v1/messages', protocol: 'messages' },
  ] as const;

  for (const c of protocols) {
    it(`streams an answer over ${c.protocol} (${c.model})`, async () => {
      const chat = await model(c.model);
      const text = await ask(chat, [vscode.LanguageModelChatMessage.User(`Hello over ${c.protocol}`)]);
      assert.equal(text, `Echo from ${c.model}: Hello over ${c.protocol}`);
      const request = chatRequests().at(-1);
      assert.equal(request?.path, c.path);
      assert.equal(request?.answer?.stream, true);
      assert.equal(request?.headers.authorization, `Bearer ${DEMO_KEY}`);
    });

    it(`sends an image part in the ${c.protocol} form and the model sees that exact image`, async () => {
      const chat = await model(c.model);
      const png = promptPng(`a lighthouse over ${c.protocol}`);
      const text = await ask(chat, [
        userMessage([new vscode.LanguageModelTextPart('What is this?'), DataPart.image(png, 'image/png')]),
      ]);
      assert.ok(text.includes(fact(png)), text);
      const body = chatRequests().at(-1)?.bodyText ?? '';
      const b64 = png.toString('base64');
      if (c.protocol === 'messages')
        assert.ok(body.includes(`"media_type":"image/png","data":"${b64}"`), 'a Messages image block');
      else if (c.protocol === 'responses')
        assert.ok(
          body.includes(`"type":"input_image","image_url":"data:image/png;base64,${b64}"`),
          'a Responses input_image',
        );
      else
        assert.ok(body.includes(`"image_url":{"url":"data:image/png;base64,${b64}"}`), 'a Chat Completions image_url');
    });
  }

  it('refuses an image for a model the catalog says takes none, sending nothing', async () => {
    const chat = await model('qwen-plus');
    const err = await failure(
      ask(chat, [userMessage([new vscode.LanguageModelTextPart('see'), DataPart.image(promptPng('x'), 'image/png')])]),
    );
    assert.match(err.message, /qwen-plus does not take images|Images are not offered for qwen-plus/);
    assert.equal(chatRequests().length, 0);
  });

  // From VS Code 1.127 a caller's cancellation reaches the provider once the request has started
  // (microsoft/vscode#277872, fixed by PR #319098): the gateway request is cut, not left to stream.
  it('a cancelled request cuts the gateway stream (the double sees only the start of the answer)', async () => {
    const chat = await model('gpt-4o-mini');
    const source = new vscode.CancellationTokenSource();
    // A long answer with 500 ms between frames: without the cut it would stream for minutes.
    const response = await chat.sendRequest(
      [vscode.LanguageModelChatMessage.User('[[slow:500]] [[long:8]] a long answer')],
      {},
      source.token,
    );
    let received = '';
    const reading = (async () => {
      for await (const fragment of response.text) {
        received += fragment;
        source.cancel();
      }
    })().then(
      () => undefined,
      (error: unknown) => error,
    );
    await reading;
    const entry = await waitFor('the double to see the stream end', async () => {
      const e = chatRequests().at(-1);
      return e?.answer?.chargedQuota !== undefined ? e : undefined;
    });
    const planned = entry.answer?.text ?? '';
    assert.ok(received.length > 0, 'the first text arrived before the cancel');
    assert.ok(
      received.length < planned.length / 10,
      `only the start of the answer arrived (${received.length} of ${planned.length} characters)`,
    );
  });

  for (const c of [
    ...protocols,
    { model: 'kimi-k2-thinking', path: '/v1/chat/completions', protocol: 'chatCompletions (a thinking model)' },
  ]) {
    it(`runs a tool round trip over ${c.protocol} (${c.model}): call, result, answer`, async () => {
      const chat = await model(c.model);
      const question = vscode.LanguageModelChatMessage.User('call the tool get_forecast city=Oslo days=3');
      const first = await parts(await chat.sendRequest([question], { tools: [WEATHER] }));
      assert.equal(first.calls.length, 1, `one call (text: ${first.text})`);
      const call = first.calls[0];
      assert.ok(call);
      assert.equal(call.name, 'get_forecast');
      assert.deepEqual(call.input, { city: 'Oslo', days: 3 });
      const offered = JSON.parse(chatRequests().at(-1)?.bodyText ?? '{}') as { tools?: unknown[] };
      assert.equal(offered.tools?.length, 1, 'the tool went out in the request');

      const second = await parts(
        await chat.sendRequest(
          [
            question,
            vscode.LanguageModelChatMessage.Assistant([new vscode.LanguageModelTextPart(first.text), call]),
            vscode.LanguageModelChatMessage.User([
              new vscode.LanguageModelToolResultPart(call.callId, [
                new vscode.LanguageModelTextPart('Oslo: 3 days of snow'),
              ]),
            ]),
          ],
          { tools: [WEATHER] },
        ),
      );
      assert.deepEqual(second.calls, []);
      assert.equal(second.text, 'The tool said: Oslo: 3 days of snow');
      assert.equal(chatRequests().at(-1)?.path, c.path);
    });
  }

  it('calls a tool without being asked when the caller requires one', async () => {
    const chat = await model('gpt-4o-mini');
    const result = await parts(
      await chat.sendRequest([vscode.LanguageModelChatMessage.User('What is it like in Bergen?')], {
        tools: [WEATHER],
        toolMode: vscode.LanguageModelChatToolMode.Required,
      }),
    );
    assert.equal(result.calls[0]?.name, 'get_forecast');
    assert.deepEqual(result.calls[0]?.input, { city: 'Bergen' });
    assert.equal(result.text, '');
  });

  const errors: Array<{ name: string; status: number; body: string; message: RegExp }> = [
    {
      name: 'quota',
      status: 403,
      body: '{"error":{"message":"用户额度不足, 剩余额度: ＄0.000000","type":"new_api_error","param":"","code":"insufficient_user_quota"}}',
      message: /no automatic overdraft and no switch to another plan/,
    },
    {
      name: 'model not granted to the group',
      status: 503,
      body: '{"error":{"message":"No available channel for model gpt-4o-mini under group default (distributor)","type":"new_api_error","code":"model_not_found"}}',
      message: /gpt-4o-mini is not granted to this key's group "default".*administrator must confirm the grant/s,
    },
    {
      name: 'upstream 403',
      status: 403,
      body: '{"error":{"type":"permission_denied_error","message":"account blocked"}}',
      message: /blocked/,
    },
    {
      name: 'upstream balance',
      status: 429,
      body: '{"error":{"type":"exceeded_current_quota_error","message":"Your account is suspended due to insufficient balance"}}',
      message: /upstream account has no balance.*not your key's quota/s,
    },
  ];
  for (const e of errors) {
    it(`reports the gateway's ${e.name} error with the same clear message`, async () => {
      const chat = await model('gpt-4o-mini');
      gw.inject({
        match: { origin: 'gateway', path: '/v1/chat/completions' },
        times: 1,
        action: { type: 'status', status: e.status, body: e.body },
      });
      const err = await failure(ask(chat, [vscode.LanguageModelChatMessage.User(`provoke ${e.name}`)]));
      assert.match(err.message, e.message);
    });
  }

  it('turns a stalled stream into a clear timeout error', async () => {
    await setSetting('timeouts.idleSeconds', 1);
    try {
      const chat = await model('gpt-4o-mini');
      const err = await failure(ask(chat, [vscode.LanguageModelChatMessage.User('[[stall]] then nothing')]));
      assert.match(err.message, /idleSeconds/);
    } finally {
      await setSetting('timeouts.idleSeconds', undefined);
    }
  });

  it('counts tokens without a download: four characters a token, CJK one a character', async () => {
    const chat = await model('gpt-4o-mini');
    assert.equal(await chat.countTokens('abcdefgh'), 2);
    assert.equal(await chat.countTokens('你好世界'), 4);
    assert.equal(await chat.countTokens(vscode.LanguageModelChatMessage.User('abcdefghijkl')), 3);
  });

  it('follows the key: clearing it empties the list, setting it again brings the models back', async () => {
    await run('clearApiKey');
    await waitFor('an empty list', async () => ((await gatewayModels()).length === 0 ? true : undefined));
    await run('setApiKey', DEMO_KEY);
    const ids = await waitFor('the models again', async () => {
      const list = (await gatewayModels()).map((m) => m.id).sort();
      return list.length ? list : undefined;
    });
    assert.deepEqual(ids, EXPECTED_CHAT);
  });

  it('sent the key to the gateway only', () => {
    for (const entry of gw.log) {
      const carries =
        Object.values(entry.headers).some((v) => v.includes(DEMO_KEY)) || (entry.bodyText ?? '').includes(DEMO_KEY);
      if (carries) assert.equal(entry.origin, 'gateway', `${entry.origin} ${entry.method} ${entry.path} got the key`);
    }
    assert.ok(
      gw.log.some((e) => e.origin === 'catalog'),
      'the catalog was read (without the key)',
    );
  });
});
