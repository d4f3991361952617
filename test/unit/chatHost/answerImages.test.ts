/**
 * The chat view's remote images, fetched by the host (src/host/chat/answerImages.ts): only hosts
 * the user allowed, through the pinned fetch (a name that rebinds to 127.0.0.1 after the check
 * reaches nothing), handed to the page as a data: URL, cancelled when the conversation is left.
 */
// First: answers `vscode` for every host module imported after it.
import { ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { fetchAnswerImage, type AnswerImage, type AnswerImageRules } from '../../../src/core/answerImageFetch';
import type { HostLookup } from '../../../src/core/privateAddress';
import { AnswerImages } from '../../../src/host/chat/answerImages';
import type { HostMessage } from '../../../src/shared/protocol';
import type { TestCa } from '../../support/testCa';
import { startTlsServer, type TlsServer } from '../../support/tlsServer';
import type { Route } from '../../../src/core/proxy';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
type Reply = Extract<HostMessage, { type: 'remoteImage' }>;

describe('Chat view remote images fetched by the host', () => {
  let server: TlsServer;
  let ca: TestCa;
  let port = 0;
  let requests = 0;
  const posts: HostMessage[] = [];
  const SETTINGS = [
    'modelGateway.chat.remoteImageHosts',
    'modelGateway.baseUrl',
    'modelGateway.extraCaCertificates',
    'modelGateway.proxy',
  ];

  before(async () => {
    server = await startTlsServer((_req, res) => {
      requests++;
      res.end(PNG);
    });
    ({ ca, port } = server);
  });
  after(() => server.close());
  beforeEach(() => {
    server.connections = 0;
    requests = 0;
    posts.length = 0;
    // A proxy in this machine's environment would otherwise carry the requests.
    ui.settings['modelGateway.proxy'] = 'off';
  });
  afterEach(() => {
    for (const key of SETTINGS) delete ui.settings[key];
  });

  /** A direct connection trusting the test authority (HttpClient.routeTo gives the gateway's route in the extension). */
  const direct = async (): Promise<Route> => ({ key: 'direct', options: { connect: { ca: ca.caPem } } });

  async function reply(count = 1): Promise<Reply[]> {
    while (posts.length < count) await new Promise((resolve) => setTimeout(resolve, 10));
    return posts as Reply[];
  }

  it('an allowed name that resolves publicly at the check and to 127.0.0.1 at fetch time reaches nothing here', async () => {
    ui.settings['modelGateway.chat.remoteImageHosts'] = [`images.rebind.test:${port}`];
    let calls = 0;
    const rebinding: HostLookup = async () => [{ address: calls++ === 0 ? '192.0.2.10' : '127.0.0.1' }];
    // 192.0.2.10 (TEST-NET-1) reaches nothing; a short timeout ends the attempt there.
    const quick = (url: string, rules: AnswerImageRules) => fetchAnswerImage(url, { ...rules, timeoutMs: 1000 });
    const images = new AnswerImages((m) => posts.push(m), direct, rebinding, quick);
    images.load(`https://images.rebind.test:${port}/cat.png`, 'c1');
    const [result] = await reply();
    assert.equal(result?.dataUrl, undefined);
    assert.ok(result?.refused, JSON.stringify(result));
    assert.equal(server.connections, 0, 'nothing connected to the loopback server');
    assert.equal(calls, 1);
    images.dispose();
  });

  it('fetches only allowed hosts; an image is handed over as a data: URL and kept for the next time', async () => {
    ui.settings['modelGateway.baseUrl'] = `https://localhost:${port}`;
    ui.settings['modelGateway.extraCaCertificates'] = ca.caFile;
    ui.settings['modelGateway.chat.remoteImageHosts'] = [`localhost:${port}`];
    const images = new AnswerImages(
      (m) => posts.push(m),
      direct,
      async () => [{ address: '127.0.0.1' }],
    );
    images.load(`https://other.example.test:${port}/x.png`, 'c1');
    const [notAllowed] = await reply();
    assert.match(notAllowed?.refused ?? '', /images from other\.example\.test:\d+ are not allowed/);
    assert.equal(server.connections, 0);
    images.load(`https://localhost:${port}/cat.png`, 'c1');
    const [, shown] = await reply(2);
    assert.equal(shown?.dataUrl, `data:image/png;base64,${PNG.toString('base64')}`);
    images.load(`https://localhost:${port}/cat.png`, 'c2');
    const [, , again] = await reply(3);
    assert.equal(again?.dataUrl, shown?.dataUrl);
    assert.equal(requests, 1, 'shown again from what the host kept');
    // Revoked: what was kept is not handed out any more.
    ui.settings['modelGateway.chat.remoteImageHosts'] = [];
    images.load(`https://localhost:${port}/cat.png`, 'c2');
    const [, , , revoked] = await reply(4);
    assert.match(revoked?.refused ?? '', /are not allowed/);
    assert.equal(requests, 1);
    images.dispose();
  });

  it('a fetch for a conversation the view left is cancelled; one the view still shows goes on', async () => {
    ui.settings['modelGateway.chat.remoteImageHosts'] = ['images.example.test'];
    const signals = new Map<string, AbortSignal>();
    const waiting = (url: string, rules: AnswerImageRules) =>
      new Promise<AnswerImage>((resolve) => {
        if (rules.signal) signals.set(url, rules.signal);
        if (rules.signal?.aborted) resolve({ ok: false, reason: 'cancelled', cancelled: true });
        rules.signal?.addEventListener('abort', () => resolve({ ok: false, reason: 'cancelled', cancelled: true }));
      });
    const images = new AnswerImages(
      (m) => posts.push(m),
      direct,
      async () => [],
      waiting,
    );
    images.load('https://images.example.test/a.png', 'c1');
    images.load('https://images.example.test/b.png', 'c2');
    images.load('https://images.example.test/b.png', 'c1');
    images.shown('c2');
    const [cancelled] = await reply();
    assert.deepEqual(cancelled, {
      type: 'remoteImage',
      conversationId: 'c1',
      url: 'https://images.example.test/a.png',
    });
    assert.equal(signals.get('https://images.example.test/b.png')?.aborted, false, 'c2 still shows b.png');
    images.cancelAll();
    await reply(2);
    assert.equal(signals.get('https://images.example.test/b.png')?.aborted, true);
  });

  it('fetches four at a time; the others wait their turn, and a cancelled one ends when it gets it', async () => {
    ui.settings['modelGateway.chat.remoteImageHosts'] = ['images.example.test'];
    const started: { url: string; finish: () => void; signal?: AbortSignal }[] = [];
    const held = (url: string, rules: AnswerImageRules) =>
      new Promise<AnswerImage>((resolve) => {
        const fail = () => resolve({ ok: false, reason: 'cancelled', cancelled: true });
        if (rules.signal?.aborted) return fail();
        started.push({
          url,
          finish: () => resolve({ ok: false, reason: 'the server answered 404' }),
          ...(rules.signal ? { signal: rules.signal } : {}),
        });
        rules.signal?.addEventListener('abort', fail);
      });
    const images = new AnswerImages(
      (m) => posts.push(m),
      direct,
      async () => [],
      held,
    );
    for (let i = 0; i < 6; i++) images.load(`https://images.example.test/${i}.png`, i < 5 ? 'c1' : 'c2');
    // Starting a fetch takes only promise steps (the fetch is a stand-in): one turn of the event loop settles them.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      started.map((s) => s.url),
      [0, 1, 2, 3].map((i) => `https://images.example.test/${i}.png`),
    );
    // c2 is shown: the waiting c1 fetch (4.png) is cancelled before it starts, 5.png gets its turn.
    images.shown('c2');
    await reply(4);
    started.splice(0, 4);
    while (started.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(
      started.map((s) => s.url),
      ['https://images.example.test/5.png'],
    );
    started[0]?.finish();
    const replies = await reply(6);
    assert.deepEqual(
      replies.filter((r) => r.refused).map((r) => r.url),
      ['https://images.example.test/5.png'],
    );
    images.dispose();
  });
});
