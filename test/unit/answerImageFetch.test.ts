/**
 * An answer's remote image, fetched by the extension for the chat view: the name is resolved once,
 * every address checked, and the connection goes to the address checked (a name that rebinds to
 * 127.0.0.1 after the check reaches nothing here); https only, redirects through the same checks,
 * nothing of the gateway sent, the bytes capped and sniffed.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { fetchAnswerImage, type AnswerImageRules } from '../../src/core/answerImageFetch';
import type { HostLookup } from '../../src/core/privateAddress';
import { routeFor, type ProxySettings } from '../../src/core/proxy';
import type { TestCa } from '../support/testCa';
import { startTlsServer, type TlsServer } from '../support/tlsServer';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

describe('Answer images fetched by the extension (pinned to the checked address)', () => {
  let server: TlsServer;
  let ca: TestCa;
  let port = 0;
  const seen: IncomingMessage[] = [];
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end(PNG);

  before(async () => {
    server = await startTlsServer((req, res) => {
      seen.push(req);
      handler(req, res);
    });
    ({ ca, port } = server);
  });
  after(() => server.close());
  beforeEach(() => {
    server.connections = 0;
    seen.length = 0;
    handler = (_req, res) => res.end(PNG);
  });

  /** A resolver that answers each call with the next list (the last one again when they run out), counting calls. */
  function resolving(...answers: string[][]): HostLookup & { calls: number } {
    const lookup = Object.assign(
      async () => {
        const answer = answers[Math.min(lookup.calls, answers.length - 1)] ?? [];
        lookup.calls++;
        return answer.map((address) => ({ address }));
      },
      { calls: 0 },
    );
    return lookup;
  }

  const rules = (overrides: Partial<AnswerImageRules>): AnswerImageRules => ({
    allowed: () => true,
    maxBytes: 1024 * 1024,
    timeoutMs: 10_000,
    route: async () => ({ key: 'direct', options: { connect: { ca: ca.caPem } } }),
    ...overrides,
  });

  it('a name that resolves publicly at the check and to 127.0.0.1 afterwards never reaches the loopback server', async () => {
    // 192.0.2.10 (TEST-NET-1, RFC 5737) is public by the rules and reaches nothing: the fetch fails
    // there or times out; what matters is where it went.
    const lookup = resolving(['192.0.2.10'], ['127.0.0.1']);
    const image = await fetchAnswerImage(
      `https://images.rebind.test:${port}/cat.png`,
      rules({ lookup, timeoutMs: 1500 }),
    );
    assert.equal(image.ok, false);
    assert.equal(server.connections, 0, 'nothing connected to the loopback server');
    assert.equal(lookup.calls, 1, 'the name was resolved once, for the check; the connection used that answer');
  });

  it('connects to exactly the address checked (a later answer of the name is not asked)', async () => {
    // The gateway's own host may be private; here the check's answer is the loopback server, and a
    // later answer (a public address) would reach nothing.
    const lookup = resolving(['127.0.0.1'], ['192.0.2.10']);
    const image = await fetchAnswerImage(
      `https://localhost:${port}/cat.png`,
      rules({ lookup, gatewayHost: `localhost:${port}` }),
    );
    assert.deepEqual(image.ok && { type: image.mediaType, size: image.bytes.length }, {
      type: 'image/png',
      size: PNG.length,
    });
    assert.equal(lookup.calls, 1);
    // Nothing of the gateway goes along: no key, no gateway header, no cookie.
    const headers = seen[0]?.headers ?? {};
    assert.deepEqual(
      Object.keys(headers).filter(
        (name) =>
          ![
            'host',
            'connection',
            'accept',
            'accept-encoding',
            'accept-language',
            'sec-fetch-mode',
            'user-agent',
          ].includes(name),
      ),
      [],
    );
    assert.equal(headers.authorization, undefined);
  });

  it('refuses a name with any private address, a private literal, localhost and http: without connecting', async () => {
    for (const [url, lookup, why] of [
      [
        `https://images.rebind.test:${port}/a.png`,
        resolving(['93.184.216.34', '10.0.0.7']),
        /10\.0\.0\.7, a private or loopback address/,
      ],
      [`https://images.rebind.test:${port}/a.png`, resolving(['::ffff:127.0.0.1']), /private or loopback/],
      [`https://127.0.0.1:${port}/a.png`, resolving([]), /127\.0\.0\.1 is a private or loopback address/],
      [`https://localhost:${port}/a.png`, resolving(['127.0.0.1']), /localhost is a private or loopback address/],
      [`http://images.example.test:${port}/a.png`, resolving(['127.0.0.1']), /not a secure address/],
      [`https://nowhere.test:${port}/a.png`, resolving([]), /could not be resolved/],
    ] as const) {
      const image = await fetchAnswerImage(url, rules({ lookup }));
      assert.ok(!image.ok && why.test(image.reason), `${url}: ${JSON.stringify(image)}`);
    }
    assert.equal(server.connections, 0);
  });

  it('follows a redirect only through the same checks', async () => {
    const gateway = `localhost:${port}`;
    handler = (req, res) => {
      if (req.url === '/hop') res.writeHead(302, { location: '/cat.png' }).end();
      else if (req.url === '/away') res.writeHead(301, { location: `https://evil.test:${port}/x.png` }).end();
      else if (req.url === '/private') res.writeHead(302, { location: `https://10.0.0.1/x.png` }).end();
      else if (req.url === '/loop') res.writeHead(302, { location: '/loop' }).end();
      else res.end(PNG);
    };
    const allowed = (host: string) => host === gateway || host === `evil.test:${port}`;
    const base = rules({ lookup: resolving(['127.0.0.1']), gatewayHost: gateway, allowed });
    assert.equal((await fetchAnswerImage(`https://${gateway}/hop`, base)).ok, true);
    const away = await fetchAnswerImage(`https://${gateway}/away`, base);
    assert.ok(!away.ok && /evil\.test.*private or loopback/.test(away.reason), JSON.stringify(away));
    const notAllowed = await fetchAnswerImage(`https://${gateway}/away`, { ...base, allowed: (h) => h === gateway });
    assert.ok(!notAllowed.ok && /images from evil\.test.* are not allowed/.test(notAllowed.reason));
    const priv = await fetchAnswerImage(`https://${gateway}/private`, { ...base, allowed: () => true });
    assert.ok(!priv.ok && /10\.0\.0\.1 is a private/.test(priv.reason));
    const loop = await fetchAnswerImage(`https://${gateway}/loop`, base);
    assert.ok(!loop.ok && /more than 3 redirects/.test(loop.reason));
  });

  it('through a proxy: the name is still checked here first, and the proxy gets a CONNECT to the host alone', async () => {
    const lines: string[] = [];
    const proxy = createTcpServer((socket) => {
      socket.once('data', (data) => {
        lines.push(data.toString('latin1'));
        socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const settings: ProxySettings = {
        mode: 'inherit',
        support: 'override',
        proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        authorization: '',
        strictSSL: true,
        noProxy: [],
        env: {},
      };
      const through = rules({ route: (url) => routeFor(url, settings, { notes: [] }, 5000) });
      const rebound = await fetchAnswerImage('https://images.rebind.test/a.png', {
        ...through,
        lookup: resolving(['127.0.0.1']),
      });
      assert.ok(!rebound.ok && /private or loopback/.test(rebound.reason));
      assert.deepEqual(lines, [], 'refused before the proxy was asked');
      const proxied = await fetchAnswerImage('https://images.example.test/a.png', {
        ...through,
        lookup: resolving(['93.184.216.34']),
      });
      assert.equal(proxied.ok, false);
      assert.equal(lines.length, 1);
      assert.match(lines[0] ?? '', /^CONNECT images\.example\.test:443 HTTP\/1\.1\r\n/);
      assert.doesNotMatch(lines[0] ?? '', /authorization|x-api-key|cookie/i);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('caps the bytes, sniffs the type, tells a refusal, and ends on timeout or cancellation', async () => {
    const gateway = `localhost:${port}`;
    const base = rules({ lookup: resolving(['127.0.0.1']), gatewayHost: gateway });
    handler = (req, res) => {
      if (req.url === '/big') res.end(Buffer.concat([PNG, Buffer.alloc(4096)]));
      else if (req.url === '/svg') res.end('<svg xmlns="http://www.w3.org/2000/svg"></svg>');
      else if (req.url === '/gone') res.writeHead(404).end('no');
      else if (req.url === '/slow') res.writeHead(200).write(PNG.subarray(0, 10));
      else res.end(PNG);
    };
    const big = await fetchAnswerImage(`https://${gateway}/big`, { ...base, maxBytes: 1024 });
    assert.ok(!big.ok && /larger than/.test(big.reason));
    const svg = await fetchAnswerImage(`https://${gateway}/svg`, base);
    assert.ok(!svg.ok && /a SVG file, not a PNG, JPEG, GIF or WebP image/.test(svg.reason), JSON.stringify(svg));
    const gone = await fetchAnswerImage(`https://${gateway}/gone`, base);
    assert.ok(!gone.ok && /answered 404/.test(gone.reason));
    const slow = await fetchAnswerImage(`https://${gateway}/slow`, { ...base, timeoutMs: 300 });
    assert.ok(!slow.ok && /no answer within/.test(slow.reason), JSON.stringify(slow));
    const abort = new AbortController();
    const pending = fetchAnswerImage(`https://${gateway}/slow`, { ...base, signal: abort.signal });
    while (seen.filter((r) => r.url === '/slow').length < 2) await new Promise((resolve) => setImmediate(resolve));
    abort.abort();
    const cancelled = await pending;
    assert.ok(!cancelled.ok && cancelled.cancelled);
  });
});
