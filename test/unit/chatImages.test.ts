import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { effectiveProtocol, imageSupport, isSearchable, searchProtocols } from '../../src/core/chat/capabilities';
import { collectChat, streamChat, type ChatResult } from '../../src/core/chat/chat';
import { toMarkdown, toView } from '../../src/core/chat/conversationForms';
import { ConversationStore } from '../../src/core/chat/conversationStore';
import type { ChatImage, ChatRequest } from '../../src/core/chat/events';
import { checkImage, ImageStore, sha256Hex } from '../../src/core/chat/images';
import { sniffImage } from '../../src/core/imageBytes';
import { isGatewayError } from '../../src/core/errors';
import type { ChatProtocol, ModelInfo } from '../../src/core/models/types';
import { DEMO_KEY, promptPng } from '../gateway';
import { useDoubleClient } from '../support/client';
import { chatModel } from '../support/models';

/** Real, tiny files of each accepted format (a 1×1 progressive JPEG, GIF and lossless WebP). */
export const TINY = {
  jpeg: Buffer.from(
    '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
    'base64',
  ),
  gif: Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'),
  webp: Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64'),
};

function model(extra: Partial<ModelInfo> & { id: string }): ModelInfo {
  return chatModel(extra.id, { inCatalog: true, ...extra });
}

/** What the double says it saw: "image N: PNG 48x48, <bytes> bytes, sha256 <12 hex>". */
function factOf(bytes: Buffer, n: number, format: string, size: string): string {
  return `image ${n}: ${format}${size ? ` ${size}` : ''}, ${bytes.length} bytes, sha256 ${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`;
}

describe('chat images: formats, limits and storage', () => {
  it('reads the format and size from the bytes of PNG, JPEG, GIF and WebP', () => {
    const png = promptPng('a red fox');
    assert.deepEqual(sniffImage(png), { mediaType: 'image/png', format: 'PNG', width: 48, height: 48 });
    assert.deepEqual(sniffImage(TINY.jpeg), { mediaType: 'image/jpeg', format: 'JPEG', width: 1, height: 1 });
    assert.deepEqual(sniffImage(TINY.gif), { mediaType: 'image/gif', format: 'GIF', width: 1, height: 1 });
    assert.deepEqual(sniffImage(TINY.webp), { mediaType: 'image/webp', format: 'WebP', width: 1, height: 1 });
    // A name says nothing: a PNG called .jpg is a PNG.
    assert.equal(checkImage(png, 'photo.jpg', 1024 * 1024).mediaType, 'image/png');
  });

  it('refuses other formats by name, empty files, and files over the limit with their size and the limit', () => {
    const bmp = Buffer.concat([Buffer.from('BM'), Buffer.alloc(60)]);
    assert.throws(
      () => checkImage(bmp, 'scan.bmp', 1024),
      (err: unknown) =>
        isGatewayError(err, 'badRequest') && /scan\.bmp is a BMP file.*PNG, JPEG, GIF and WebP/.test(err.message),
    );
    assert.throws(
      () => checkImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'logo.svg', 1024),
      /a SVG file/,
    );
    assert.throws(() => checkImage(Buffer.alloc(0), 'empty.png', 1024), /empty/);
    const png = promptPng('too big');
    assert.throws(
      () => checkImage(png, 'big.png', 100),
      (err: unknown) =>
        isGatewayError(err, 'tooLarge') &&
        err.message.includes(`${png.length.toLocaleString('en-US')} bytes`) &&
        /over the 100 B limit/.test(err.message) &&
        /imageMaxBytes/.test(err.message),
    );
  });

  it('stores an image once by its SHA-256 and prunes what nothing refers to', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'img-'));
    try {
      const store = new ImageStore(dir);
      const png = promptPng('stored once');
      const a = await store.put(png, 'image/png');
      const b = await store.put(png, 'image/png');
      assert.equal(a, b);
      assert.equal(a, sha256Hex(png));
      assert.deepEqual(readdirSync(dir), [`${a}.png`]);
      assert.deepEqual(await store.read({ id: a, mediaType: 'image/png' }), png);
      const gif = await store.put(TINY.gif, 'image/gif');
      assert.equal(await store.prune(new Set([a])), 0, 'just stored: within the grace period');
      assert.equal(await store.prune(new Set([a]), 0), 1);
      assert.equal(await store.read({ id: gif, mediaType: 'image/gif' }), undefined);
      assert.throws(() => store.file({ id: '../../etc/passwd', mediaType: 'image/png' }), /Invalid image id/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps images out of the saved conversation (a reference each), exports them, and prunes after a delete', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'conv-img-'));
    try {
      const store = new ConversationStore(dir, { imageGraceMs: 0 });
      const png = promptPng('conversation image');
      const id = await store.images.put(png, 'image/png');
      const image = { id, name: 'fox.png', mediaType: 'image/png' as const, bytes: png.length, width: 48, height: 48 };
      const c = await store.create({ title: 'With an image' });
      await store.append(c.id, {
        id: 'u1',
        role: 'user',
        text: 'what is this?',
        status: 'done',
        createdAt: 1,
        images: [{ ...image, src: 'https://file+.vscode-resource/x.png' }],
      });
      await store.append(c.id, {
        id: 'a1',
        role: 'assistant',
        text: 'A fox.',
        status: 'done',
        createdAt: 2,
        citations: [{ url: 'https://example.com/fox', title: 'Foxes [wild]' }],
        searches: ['fox'],
      });
      const saved = readFileSync(path.join(dir, `${c.id}.log`), 'utf8');
      assert.ok(!saved.includes(png.toString('base64').slice(0, 40)), 'no inline base64');
      assert.ok(!saved.includes('vscode-resource'), 'no webview address saved');
      assert.ok(saved.includes(id));
      const loaded = await new ConversationStore(dir).load(c.id);
      assert.deepEqual(loaded?.messages[0]?.images, [image]);
      assert.equal(
        toView(loaded!.messages[0]!, (i) => `data:${i.mediaType};base64,AAAA`).images?.[0]?.src,
        'data:image/png;base64,AAAA',
      );

      const md = toMarkdown(loaded!);
      assert.match(md, /> Image: fox\.png \(PNG 48×48, [\d.]+ KiB, sha256 [0-9a-f]{12}\)/);
      assert.match(md, /_Searched the web for: “fox”_/);
      assert.match(md, /\*\*Sources\*\*\n\n1\. \[Foxes \\\[wild\\\]\]\(https:\/\/example\.com\/fox\)/);

      await store.create({ title: 'Other' });
      assert.equal(await store.pruneImages(), 0, 'still used');
      await store.delete(c.id);
      assert.equal(await store.pruneImages(), 1);
      assert.deepEqual(readdirSync(path.join(dir, 'images')), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('chat model capabilities', () => {
  it('offers images from catalog metadata or the setting, and not without metadata', () => {
    const withImage = model({ id: 'gpt-4o-mini', catalog: { id: 'gpt-4o-mini', inputModalities: ['text', 'image'] } });
    assert.equal(imageSupport(withImage).supported, true);
    const attachment = model({ id: 'x', catalog: { id: 'x', attachment: true } as ModelInfo['catalog'] });
    assert.equal(imageSupport(attachment).supported, true);
    const textOnly = model({ id: 'qwen-plus', catalog: { id: 'qwen-plus', inputModalities: ['text'] } });
    assert.deepEqual(imageSupport(textOnly), {
      supported: false,
      reason:
        'qwen-plus does not take images: the model catalog lists only text input for it. Pick a model that takes images.',
    });
    const unknown = model({ id: 'qwen-vl-max' });
    assert.equal(imageSupport(unknown).supported, false);
    assert.match(imageSupport(unknown).reason, /says nothing.*imageInputModels/);
    assert.equal(imageSupport(unknown, ['qwen-vl-*']).supported, true);
    assert.equal(imageSupport(unknown, ['qwen-vl']).supported, false);
  });

  it('offers web search per protocol: enable_search for ali on Chat Completions, the tool on Responses, none on Messages', () => {
    const qwen = model({ id: 'qwen-plus', ownedBy: 'ali', protocols: ['chatCompletions'] });
    const gpt = model({ id: 'gpt-4o-mini', ownedBy: 'openai', protocols: ['chatCompletions', 'responses'] });
    const claude = model({ id: 'claude', ownedBy: 'claude', protocols: ['messages', 'chatCompletions'] });
    assert.deepEqual(searchProtocols(qwen), ['chatCompletions']);
    assert.deepEqual(searchProtocols(gpt), ['responses']);
    assert.deepEqual(searchProtocols(claude), []);
    assert.equal(isSearchable(gpt, effectiveProtocol(gpt, undefined)), false, 'gpt-4o-mini starts on Chat Completions');
    assert.equal(isSearchable(gpt, effectiveProtocol(gpt, 'responses')), true);
    assert.equal(
      effectiveProtocol(qwen, 'responses'),
      'chatCompletions',
      'an override the model does not speak is ignored',
    );
  });
});

describe('chat images over each protocol against the gateway double', function () {
  const double = useDoubleClient();
  const png = promptPng('the picture under test');
  const pngImage: ChatImage = { mediaType: 'image/png', base64: png.toString('base64') };

  function ask(
    protocol: ChatProtocol,
    stream: boolean,
    images: ChatImage[],
    extra: Partial<ChatRequest> = {},
  ): Promise<ChatResult> {
    return collectChat(
      streamChat(double.http, {
        model: 'gpt-4o-mini',
        protocol,
        stream,
        messages: [{ role: 'user', content: 'What is in this picture?', images }],
        ...extra,
      }),
    );
  }

  const PROTOCOLS: ChatProtocol[] = ['chatCompletions', 'responses', 'messages'];
  for (const protocol of PROTOCOLS) {
    for (const stream of [true, false]) {
      it(`${protocol}, ${stream ? 'streamed' : 'not streamed'}: the double describes exactly the images that were sent`, async () => {
        const images: ChatImage[] = [
          pngImage,
          { mediaType: 'image/jpeg', base64: TINY.jpeg.toString('base64') },
          { mediaType: 'image/webp', base64: TINY.webp.toString('base64') },
        ];
        const r = await ask(protocol, stream, images, protocol === 'messages' ? { model: 'claude-sonnet-4-5' } : {});
        assert.equal(r.error, undefined, r.error?.message);
        assert.ok(r.text.includes(factOf(png, 1, 'PNG', '48x48')), r.text);
        assert.ok(r.text.includes(factOf(TINY.jpeg, 2, 'JPEG', '1x1')), r.text);
        assert.ok(r.text.includes(factOf(TINY.webp, 3, 'WebP', '1x1')), r.text);
      });
    }
  }

  it('sends each protocol its own image form', async () => {
    const bodies: Record<string, unknown> = {};
    for (const protocol of PROTOCOLS) {
      double.gw.clearLog();
      await ask(protocol, true, [pngImage]);
      bodies[protocol] = JSON.parse(double.gw.log.at(-1)?.bodyText ?? '{}') as unknown;
    }
    const url = `data:image/png;base64,${pngImage.base64}`;
    assert.deepEqual((bodies.chatCompletions as { messages: unknown[] }).messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ]);
    assert.deepEqual((bodies.responses as { input: unknown[] }).input, [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in this picture?' },
          { type: 'input_image', image_url: url, detail: 'auto' },
        ],
      },
    ]);
    assert.deepEqual((bodies.messages as { messages: unknown[] }).messages, [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pngImage.base64 } },
          { type: 'text', text: 'What is in this picture?' },
        ],
      },
    ]);
  });

  it('describes only the images of the last question, while earlier ones go along as history', async () => {
    const gif: ChatImage = { mediaType: 'image/gif', base64: TINY.gif.toString('base64') };
    const r = await collectChat(
      streamChat(double.http, {
        model: 'gpt-4o-mini',
        protocol: 'chatCompletions',
        stream: true,
        messages: [
          { role: 'user', content: 'first', images: [pngImage] },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: 'and this one?', images: [gif] },
        ],
      }),
    );
    assert.ok(r.text.includes(factOf(TINY.gif, 1, 'GIF', '1x1')), r.text);
    assert.ok(!r.text.includes('PNG'), r.text);
    assert.match(double.gw.log.at(-1)?.bodyText ?? '', /data:image\/png;base64/);
  });

  it('malformed image parts get the upstream’s own 400 on each protocol', async () => {
    const cases: Array<{ protocol: ChatProtocol; body: Record<string, unknown>; path: string; expect: RegExp }> = [
      {
        protocol: 'chatCompletions',
        path: '/v1/chat/completions',
        body: {
          model: 'gpt-4o-mini',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'x' },
                { type: 'image_url', image_url: { url: pngImage.base64 } },
              ],
            },
          ],
        },
        expect:
          /Invalid image URL: 'messages\[0\]\.content\[1\]\.image_url\.url'\. Expected a base64-encoded data URL .* without the 'data:' prefix/,
      },
      {
        protocol: 'chatCompletions',
        path: '/v1/chat/completions',
        body: {
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] }],
        },
        expect: /Invalid value: 'input_image'\. Supported values are: 'text', 'image_url'/,
      },
      {
        protocol: 'chatCompletions',
        path: '/v1/chat/completions',
        body: {
          model: 'gpt-4o-mini',
          messages: [
            { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,QUJDRA==' } }] },
          ],
        },
        expect: /You uploaded an unsupported image/,
      },
      {
        protocol: 'chatCompletions',
        path: '/v1/chat/completions',
        body: {
          model: 'qwen-plus',
          messages: [
            {
              role: 'user',
              content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${pngImage.base64}` } }],
            },
          ],
        },
        expect: /image_url is only supported by certain models/,
      },
      {
        protocol: 'responses',
        path: '/v1/responses',
        body: {
          model: 'gpt-4o-mini',
          input: [
            {
              role: 'user',
              content: [{ type: 'input_image', image_url: { url: `data:image/png;base64,${pngImage.base64}` } }],
            },
          ],
        },
        expect: /Invalid type for 'input\[0\]\.content\[0\]\.image_url': expected a string, but got an object instead/,
      },
      {
        protocol: 'responses',
        path: '/v1/responses',
        body: {
          model: 'gpt-4o-mini',
          input: [
            { role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,', detail: 'auto' }] },
          ],
        },
        expect: /Invalid 'input\[0\]\.content\[0\]\.image_url'\. .* but got empty base64-encoded bytes/,
      },
      {
        protocol: 'messages',
        path: '/v1/messages',
        body: {
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          messages: [
            {
              role: 'user',
              content: [{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: pngImage.base64 } }],
            },
          ],
        },
        expect:
          /messages\.0\.content\.0\.image\.source\.base64: The image was specified using the image\/jpeg media type, but the image appears to be a image\/png image/,
      },
      {
        protocol: 'messages',
        path: '/v1/messages',
        body: {
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          messages: [
            {
              role: 'user',
              content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: pngImage.base64 } }],
            },
          ],
        },
        expect: /media_type: Input should be 'image\/jpeg', 'image\/png', 'image\/gif' or 'image\/webp'/,
      },
      {
        protocol: 'messages',
        path: '/v1/messages',
        body: {
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          messages: [
            { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
          ],
        },
        expect: /Input tag 'image_url' found using 'type' does not match any of the expected tags/,
      },
    ];
    for (const c of cases) {
      const res = await fetch(`${double.gw.url}${c.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(c.body),
      });
      const text = await res.text();
      assert.equal(res.status, 400, `${c.protocol}: ${text}`);
      const json = JSON.parse(text) as { type?: string; error: { type: string; message: string }; request_id?: string };
      assert.equal(json.error.type, 'invalid_request_error');
      assert.match(json.error.message, c.expect);
      if (c.protocol === 'messages') {
        assert.equal(json.type, 'error');
        assert.match(json.request_id ?? '', /^req_/);
      }
    }
    assert.ok(
      double.gw.log.every((e) => !e.answer),
      'nothing was answered (or charged)',
    );
  });

  it('our adapters surface such an error as a bad request with the upstream’s words', async () => {
    const r = await ask('chatCompletions', true, [pngImage], { model: 'qwen-plus' });
    assert.equal(r.error?.kind, 'badRequest');
    assert.equal(r.error?.status, 400);
    assert.match(r.error?.message ?? '', /image_url is only supported by certain models/);
    const m = await ask('messages', true, [{ mediaType: 'image/gif', base64: pngImage.base64 }], {
      model: 'claude-sonnet-4-5',
    });
    assert.equal(m.error?.kind, 'badRequest');
    assert.match(m.error?.message ?? '', /appears to be a image\/png image/);
  });

  it('a model that requires streaming is called with streaming on even when asked not to stream', async () => {
    for (const protocol of PROTOCOLS) {
      double.gw.clearLog();
      const r = await ask(protocol, false, [pngImage], { requiresStreaming: true });
      assert.equal(r.error, undefined);
      assert.ok(r.text.includes(factOf(png, 1, 'PNG', '48x48')));
      const sent = JSON.parse(double.gw.log.at(-1)?.bodyText ?? '{}') as { stream?: boolean };
      assert.equal(sent.stream, true, protocol);
      assert.equal(double.gw.log.at(-1)?.answer?.stream, true);
    }
    double.gw.clearLog();
    await ask('chatCompletions', false, [pngImage]);
    assert.equal(
      (JSON.parse(double.gw.log.at(-1)?.bodyText ?? '{}') as { stream?: boolean }).stream,
      false,
      'otherwise as asked',
    );
  });
});
