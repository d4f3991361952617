import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { streamToFileUnique } from '../../src/core/outputFiles';
import { GatewayError, isGatewayError } from '../../src/core/errors';
import { downloadVideo } from '../../src/core/media/videoDownload';
import type { Timeouts } from '../../src/core/httpTypes';
import type { TrustSettings } from '../../src/core/tls';
import { clientFor, DEFAULT_TRUST, TEST_TIMEOUTS } from '../support/client';
import { createTestCa, type TestCa } from '../support/testCa';
import { until } from '../support/until';

/**
 * HttpClient.getLarge: a large body (a generated video) read through undici, as every other
 * answer is. The server here writes its answers byte by byte as a test says, so that framing,
 * cuts, stalls and hostile heads reach the client exactly; every body is pseudo-random (a repeated
 * byte would hide a misplaced copy) and several MiB, and the check is the body's sha256.
 */

const KEY = 'sk-large-test-key';
const MIB = 1024 * 1024;
/** Short limits for the timeout tests; generous enough that the others never meet them. */
const FAST: Timeouts = { ...TEST_TIMEOUTS, firstByteMs: 300, idleMs: 300 };

/** Deterministic bytes (xorshift32), so that a failure can be reproduced byte for byte. */
function pseudoRandom(size: number, seed: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i += 4) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    for (let b = 0; b < 4 && i + b < size; b++) buf[i + b] = (x >>> (8 * b)) & 0xff;
  }
  return buf;
}

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An odd size, not a multiple of the buffers, so the last buffer is partly filled. */
const BODY = pseudoRandom(5 * MIB + 12_345, 0x9e3779b9);

/** The bytes read so far and the error that ended the reading (undefined when it ended normally). */
async function readUntilError(
  chunks: AsyncIterable<Uint8Array>,
  onChunk?: (n: number) => void,
): Promise<{ bytes: Buffer; error: unknown }> {
  const parts: Buffer[] = [];
  try {
    for await (const chunk of chunks) {
      parts.push(Buffer.from(chunk));
      onChunk?.(parts.length);
    }
    return { bytes: Buffer.concat(parts), error: undefined };
  } catch (error) {
    return { bytes: Buffer.concat(parts), error };
  }
}

function assertSameBytes(actual: Buffer, expected: Buffer, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  assert.equal(sha(actual), sha(expected), `${what}: sha256`);
}

/** How the raw server answers one request: it gets the socket and the request head (without its final CRLFCRLF). */
type Answer = (socket: net.Socket, head: string) => void;

/**
 * A server that writes its answers byte by byte as a test says, over TCP or TLS, and records what
 * it got: the request heads, the number of connections, and when each connection closed.
 */
class RawServer {
  readonly heads: string[] = [];
  /** One per connection, in order: settles once the server's side of it has closed. */
  readonly closed: Array<Promise<void>> = [];
  connections = 0;
  /** TCP connections, counted also when their TLS handshake fails. */
  tcpConnections = 0;
  answer: Answer = () => undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;
  private port = 0;

  constructor(private readonly tlsOptions?: tls.TlsOptions) {
    const onSocket = (socket: net.Socket) => {
      this.connections++;
      this.sockets.add(socket);
      // Several tests close the connection from the client on purpose, in the middle of a write.
      socket.on('error', () => undefined);
      this.closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
      socket.once('close', () => this.sockets.delete(socket));
      socket.setNoDelay(true);
      let received = Buffer.alloc(0);
      const onData = (data: Buffer) => {
        received = Buffer.concat([received, data]);
        const at = received.indexOf('\r\n\r\n');
        if (at < 0) return;
        // Still flowing, so that the client's close is seen; nothing else is expected from it.
        socket.off('data', onData);
        const head = received.toString('latin1', 0, at);
        this.heads.push(head);
        this.answer(socket, head);
      };
      socket.on('data', onData);
    };
    this.server = tlsOptions ? tls.createServer(tlsOptions, onSocket) : net.createServer(onSocket);
    this.server.on('connection', () => this.tcpConnections++);
  }

  get url(): string {
    return `${this.tlsOptions ? 'https' : 'http'}://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Ends every connection a test left open (a stalled answer) and forgets what was recorded. */
  reset(): void {
    for (const socket of this.sockets) socket.destroy();
    this.heads.length = 0;
    this.closed.length = 0;
    this.connections = 0;
    this.tcpConnections = 0;
    this.answer = () => undefined;
  }

  stop(): Promise<void> {
    this.reset();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const head200 = (headers: string) => `HTTP/1.1 200 OK\r\n${headers}\r\n`;
const withLength = (body: Buffer, extra = '') =>
  head200(`content-length: ${body.length}\r\ncontent-type: application/octet-stream\r\n${extra}`);

/** A 200 for a 20 MiB body of which 2 MiB are sent; then it stalls, so only the client can end the connection. */
const stallingAnswer =
  (seed: number): Answer =>
  (socket) => {
    const whole = pseudoRandom(20 * MIB, seed);
    socket.write(withLength(whole));
    socket.write(whole.subarray(0, 2 * MIB));
  };

/** Writes the pieces one after another, `gapMs` apart, so that they tend to arrive as separate reads. */
async function writeApart(socket: net.Socket, pieces: Array<string | Buffer>, gapMs: number): Promise<void> {
  for (const piece of pieces) {
    if (socket.destroyed) return;
    socket.write(piece);
    await sleep(gapMs);
  }
}

interface ChunkSpec {
  size: number;
  ext?: string;
  upper?: boolean;
}

/**
 * The chunked encoding of `body` in chunks of the given sizes, with the cut points that make its
 * pieces awkward: a size line split after its first digit and between its CR and LF, data split in
 * the middle, the CRLF after the data split from the data and in two.
 */
function chunkedEncoding(body: Buffer, specs: ChunkSpec[], trailer: string): { encoded: Buffer; cuts: number[] } {
  const parts: Buffer[] = [];
  const cuts: number[] = [];
  let at = 0;
  let offset = 0;
  const push = (b: Buffer) => {
    parts.push(b);
    at += b.length;
  };
  for (const { size, ext = '', upper } of specs) {
    const hex = upper ? size.toString(16).toUpperCase() : size.toString(16);
    const line = `${hex}${ext}\r`;
    cuts.push(at + 1, at + line.length);
    push(Buffer.from(`${line}\n`, 'latin1'));
    if (size > 1) cuts.push(at + Math.floor(size / 2));
    push(body.subarray(offset, offset + size));
    offset += size;
    cuts.push(at, at + 1);
    push(Buffer.from('\r\n'));
  }
  assert.equal(offset, body.length, 'the chunk sizes add up to the body');
  cuts.push(at + 1);
  push(Buffer.from('0\r\n'));
  cuts.push(at + 3);
  push(Buffer.from(`${trailer}\r\n`, 'latin1'));
  cuts.push(at + 1);
  push(Buffer.from('\r\n'));
  const encoded = Buffer.concat(parts);
  return { encoded, cuts: [...new Set(cuts)].filter((c) => c > 0 && c < encoded.length).sort((a, b) => a - b) };
}

function piecesAt(encoded: Buffer, cuts: number[]): Buffer[] {
  const pieces: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, encoded.length]) {
    pieces.push(encoded.subarray(from, cut));
    from = cut;
  }
  return pieces;
}

/** Copies each chunk out; with `holdMs`, holds each chunk that long first (a consumer slower than the link). */
async function readAll(chunks: AsyncIterable<Uint8Array>, holdMs = 0): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) {
    if (holdMs) await sleep(holdMs);
    parts.push(Buffer.from(chunk));
  }
  return Buffer.concat(parts);
}

describe('HttpClient.getLarge over undici: framing, limits, failures', function () {
  let raw: RawServer;

  before(async () => {
    raw = await new RawServer().start();
  });
  after(() => raw.stop());
  afterEach(() => raw.reset());

  const client = (timeouts: Timeouts = TEST_TIMEOUTS) => clientFor(raw.url, KEY, { timeouts }).http;

  describe('a Content-Length body of several MiB', () => {
    beforeEach(() => {
      raw.answer = (socket) => {
        socket.write(withLength(BODY));
        socket.end(BODY);
      };
    });

    it('arrives byte for byte, with its status and headers', async () => {
      const response = await client().getLarge({ url: `${raw.url}/video.mp4` });
      assert.equal(response.status, 200);
      assert.equal(response.headers['content-length'], String(BODY.length));
      assertSameBytes(await readAll(response.chunks), BODY, 'body');
    });

    it('goes to a file through streamToFileUnique byte for byte', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'large-get-'));
      try {
        const http = client();
        const response = await http.getLarge({ url: `${raw.url}/video.mp4` });
        const file = await streamToFileUnique(dir, 'video', 'mp4', response.chunks);
        assertSameBytes(readFileSync(file), BODY, 'file');
        await http.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('keeps a slow consumer whole and the server waiting (backpressure), and a paused body is no idle timeout', async () => {
      // 20 MiB, far more than the socket buffers hold: the server can only have written it all once
      // the consumer took most of it. The consumer is slower than the idle limit between chunks,
      // which must not count while the client itself is not reading.
      const whole = pseudoRandom(20 * MIB, 0x51);
      let serverSocket: net.Socket | undefined;
      raw.answer = (socket) => {
        serverSocket = socket;
        socket.write(withLength(whole));
        socket.end(whole);
      };
      const response = await client({ ...TEST_TIMEOUTS, idleMs: 300 }).getLarge({ url: `${raw.url}/slow` });
      const parts: Buffer[] = [];
      let backedUp = false;
      for await (const chunk of response.chunks) {
        parts.push(Buffer.from(chunk));
        if (parts.length === 1) {
          // Wait until the server's writes queue up behind a client that does not read.
          await until(
            () => (serverSocket?.writableLength ?? 0) > 8 * MIB,
            'the server to be held back by the paused client',
          );
          backedUp = true;
          await sleep(600); // longer than the idle limit, with the client paused
        }
      }
      assert.ok(backedUp);
      assertSameBytes(Buffer.concat(parts), whole, 'slow consumer');
    });
  });

  describe('framing', () => {
    it('decodes a chunked body sent in awkward pieces: split size lines and CRLFs, extensions, a trailer', async () => {
      const body = BODY.subarray(0, 1 + 16 + 5000 + 700_000 + 600_000 + 1_500_000 + 3 + MIB + 65_535 + 9 + 200_000);
      const { encoded, cuts } = chunkedEncoding(
        body,
        [
          { size: 1 },
          { size: 16, ext: ';a=b' },
          { size: 5000, upper: true },
          { size: 700_000, ext: ';name="quoted;value"' },
          { size: 600_000 },
          { size: 1_500_000, upper: true, ext: ';a=b' },
          { size: 3 },
          { size: MIB, ext: ';x' },
          { size: 65_535, upper: true },
          { size: 9 },
          { size: 200_000 },
        ],
        'x-checksum: abc',
      );
      const pieces = piecesAt(encoded, cuts);
      raw.answer = (socket) => void writeApart(socket, [head200('transfer-encoding: chunked\r\n'), ...pieces], 2);
      const response = await client().getLarge({ url: `${raw.url}/chunked` });
      assert.equal(response.headers['transfer-encoding'], 'chunked');
      assertSameBytes(await readAll(response.chunks), body, 'chunked');
    });

    it('reads a close-delimited body (no Content-Length, not chunked) to the end of the connection, also with a slow consumer', async () => {
      const body = BODY.subarray(0, 3 * MIB + 7);
      raw.answer = (socket) => {
        socket.write(head200('content-type: video/mp4\r\n'));
        socket.end(body);
      };
      assertSameBytes(
        await readAll((await client().getLarge({ url: `${raw.url}/close` })).chunks),
        body,
        'close-delimited',
      );
      assertSameBytes(
        await readAll((await client().getLarge({ url: `${raw.url}/close` })).chunks, 5),
        body,
        'close-delimited, slow',
      );
    });

    it('reads an empty body (Content-Length: 0) without waiting for the connection to close', async () => {
      raw.answer = (socket) => socket.write(head200('content-length: 0\r\n'));
      assert.equal((await readAll((await client().getLarge({ url: `${raw.url}/empty` })).chunks)).length, 0);
    });

    it('sends one GET with the path and query as given, and the Host of the address whatever the caller passed', async () => {
      raw.answer = (socket) => socket.end(head200('content-length: 2\r\n') + 'ok');
      const response = await client().getLarge({
        url: `${raw.url}/files/a%20b.mp4?sig=x%2By&n=1`,
        headers: { accept: 'video/mp4' },
      });
      await readAll(response.chunks);
      const lines = (raw.heads[0] ?? '').split('\r\n');
      assert.equal(lines[0], 'GET /files/a%20b.mp4?sig=x%2By&n=1 HTTP/1.1');
      assert.deepEqual(
        lines.filter((l) => /^host:/i.test(l)).map((l) => l.toLowerCase()),
        [`host: ${new URL(raw.url).host}`],
      );
      assert.ok(lines.includes('accept: video/mp4'));
    });
  });

  describe('the server closes the connection while the body is held back (patches/undici+7.30.2.patch)', () => {
    // undici's response body buffers up to its high-water mark (64 KiB; getLarge sets none) and then
    // pauses its HTTP parser until the reader takes some. A body of exactly that size reaches the mark
    // with its last byte however the socket splits it, so the parser is paused at the very end of what
    // arrived, which is when the server's FIN is seen. Nothing reads until the server's side of the
    // connection has closed, and it closes only once the client has dealt with that FIN. Unpatched,
    // undici 7.x throws `assert(!this.paused)` from the socket's 'end' handler here (uncatchable).
    // Not covered, by the patch or upstream: a keep-alive answer (no Connection: close) held back
    // like this and then closed by the server still fails as "closed in the middle of the answer".
    const HELD = BODY.subarray(0, 64 * 1024);

    it('hands on a whole Content-Length body with Connection: close', async () => {
      raw.answer = (socket) =>
        socket.end(Buffer.concat([Buffer.from(withLength(HELD, 'connection: close\r\n')), HELD]));
      const large = await client().getLarge({ url: `${raw.url}/held-length` });
      await raw.closed[0];
      assertSameBytes(await readAll(large.chunks), HELD, 'Content-Length, closed while held back');
    });

    it('hands on a whole close-delimited body', async () => {
      raw.answer = (socket) => socket.end(Buffer.concat([Buffer.from(head200('content-type: video/mp4\r\n')), HELD]));
      const large = await client().getLarge({ url: `${raw.url}/held-close` });
      await raw.closed[0];
      assertSameBytes(await readAll(large.chunks), HELD, 'close-delimited, closed while held back');
    });

    it('still fails a Content-Length body cut short, after handing on what arrived', async () => {
      const whole = BODY.subarray(0, 2 * HELD.length);
      raw.answer = (socket) =>
        socket.end(Buffer.concat([Buffer.from(withLength(whole, 'connection: close\r\n')), HELD]));
      const large = await client().getLarge({ url: `${raw.url}/held-cut` });
      await raw.closed[0];
      const { bytes, error } = await readUntilError(large.chunks);
      // undici names this one a length mismatch (a protocol error), not a connection closed early.
      assert.ok(isGatewayError(error, 'protocol'), String(error));
      assert.match((error as GatewayError).message, /does not match content-length/);
      assert.ok(bytes.length < whole.length);
      assert.ok(bytes.equals(HELD.subarray(0, bytes.length)), 'what arrived is the start of the body');
    });
  });

  describe('failures', () => {
    it('fails the reading of a body cut short (the server closes before Content-Length bytes), after handing on what arrived', async () => {
      const whole = BODY.subarray(0, 3 * MIB);
      raw.answer = (socket) => {
        socket.write(withLength(whole));
        socket.end(whole.subarray(0, MIB + MIB / 2));
      };
      const large = await client().getLarge({ url: `${raw.url}/cut` });
      const { bytes, error } = await readUntilError(large.chunks);
      assert.ok(isGatewayError(error, 'network'), String(error));
      assert.match((error as GatewayError).message, /closed in the middle of the answer/);
      assert.ok(bytes.length < whole.length);
      assert.ok(bytes.equals(whole.subarray(0, bytes.length)), 'what arrived is the start of the body');
    });

    it('a download cut short keeps no file', async () => {
      const whole = BODY.subarray(0, 3 * MIB);
      raw.answer = (socket) => {
        socket.write(withLength(whole));
        socket.end(whole.subarray(0, MIB));
      };
      const dir = mkdtempSync(path.join(os.tmpdir(), 'large-get-'));
      try {
        await assert.rejects(
          downloadVideo(client(), undefined, `${raw.url}/video.mp4`, { dir, baseName: 'v' }),
          (e: unknown) => isGatewayError(e, 'network'),
        );
        assert.deepEqual(readdirSync(dir), [], 'nothing half-written is left');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('fails a malformed chunk size with a protocol error while reading', async () => {
      raw.answer = (socket) =>
        socket.end(`${head200('transfer-encoding: chunked\r\n')}5\r\nhello\r\nzz\r\nmore\r\n0\r\n\r\n`);
      const large = await client().getLarge({ url: `${raw.url}/bad-chunk` });
      const { error } = await readUntilError(large.chunks);
      assert.ok(isGatewayError(error, 'protocol'), String(error));
    });

    it('refuses answers that are not HTTP/1.1, an invalid Content-Length and a response head over the limit, as protocol errors, not retried', async () => {
      const answers = [
        'SSH-2.0-OpenSSH_9.6\r\n\r\n',
        'HTTP/1.1 200 OK\r\ncontent-length: 12abc\r\n\r\n',
        'HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\n\r\n',
        `HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(70 * 1024)}\r\ncontent-length: 0\r\n\r\n`,
      ];
      for (const answer of answers) {
        raw.reset();
        raw.answer = (socket) => socket.end(answer);
        await assert.rejects(
          client().getLarge({ url: `${raw.url}/odd` }),
          (e: unknown) => isGatewayError(e, 'protocol') && /not valid HTTP/.test(e.message),
          answer.slice(0, 40),
        );
        assert.equal(raw.heads.length, 1, `not sent again: ${answer.slice(0, 40)}`);
      }
    });

    it('refuses a response head that goes on past the limit without ending', async () => {
      // The connection stays open: only the limit can end the wait.
      raw.answer = (socket) => socket.write(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(70 * 1024)}`);
      await assert.rejects(client().getLarge({ url: `${raw.url}/big-head` }), (e: unknown) =>
        isGatewayError(e, 'protocol'),
      );
    });

    it('does not follow a redirect, so the key never goes where a Location points', async () => {
      const other = await new RawServer().start();
      try {
        raw.answer = (socket) =>
          socket.end(`HTTP/1.1 302 Found\r\nlocation: ${other.url}/stolen\r\ncontent-length: 0\r\n\r\n`);
        await assert.rejects(
          client().getLarge({ url: `${raw.url}/moved` }),
          (e: unknown) => e instanceof GatewayError && e.status === 302,
        );
        assert.equal(other.connections, 0, 'the other origin was never contacted');
        assert.match(
          raw.heads[0] ?? '',
          new RegExp(`authorization: Bearer ${KEY}`, 'i'),
          'the gateway origin itself got the key',
        );
      } finally {
        await other.stop();
      }
    });

    it('times out when the server accepts but never answers: a timeout GatewayError, not retried', async () => {
      raw.answer = () => undefined;
      await assert.rejects(
        client(FAST).getLarge({ url: `${raw.url}/silent` }),
        (e: unknown) => isGatewayError(e, 'timeout') && /sent no answer/.test(e.message),
      );
      assert.equal(raw.heads.length, 1, 'a request that may have arrived is not sent again after a timeout');
    });

    it('times out when the server stops sending in the middle of the body', async () => {
      const whole = BODY.subarray(0, 2 * MIB);
      raw.answer = (socket) => {
        socket.write(withLength(whole));
        socket.write(whole.subarray(0, 100_000)); // and then nothing, with the connection left open
      };
      const response = await client(FAST).getLarge({ url: `${raw.url}/stall` });
      const { bytes, error } = await readUntilError(response.chunks);
      assert.ok(isGatewayError(error, 'timeout') && /stopped sending/.test(error.message), String(error));
      assert.ok(bytes.equals(whole.subarray(0, 100_000)), 'what arrived before the silence was handed on');
    });

    it('gives up the body when the signal aborts in the middle: cancelled, and the connection is closed', async () => {
      const whole = BODY.subarray(0, 4 * MIB);
      raw.answer = (socket) => {
        socket.write(withLength(whole));
        socket.write(whole.subarray(0, MIB + 1000)); // then stalls, so only the abort can end it
      };
      const controller = new AbortController();
      const response = await client().getLarge({ url: `${raw.url}/abort`, signal: controller.signal });
      const { error } = await readUntilError(response.chunks, (n) => n === 1 && controller.abort());
      assert.ok(isGatewayError(error, 'cancelled'), String(error));
      await raw.closed[0];
    });

    it('gives up the body on abort()', async () => {
      raw.answer = (socket) => {
        socket.write(withLength(BODY));
        socket.write(BODY.subarray(0, 5000));
      };
      const response = await client().getLarge({ url: `${raw.url}/abort` });
      await readUntilError(response.chunks, () => response.abort());
      await raw.closed[0];
    });

    it('refuses at once, without connecting, when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(client().getLarge({ url: `${raw.url}/x`, signal: controller.signal }), (e: unknown) =>
        isGatewayError(e, 'cancelled'),
      );
      assert.equal(raw.connections, 0);
    });

    it('gives up waiting for the head when the signal aborts: cancelled', async () => {
      raw.answer = () => undefined;
      const controller = new AbortController();
      const pending = client().getLarge({ url: `${raw.url}/slow-head`, signal: controller.signal });
      await until(() => raw.heads.length === 1, 'the request to arrive');
      controller.abort();
      await assert.rejects(pending, (e: unknown) => isGatewayError(e, 'cancelled'));
      await raw.closed[0];
    });

    it('closes the connection when the loop is left early', async () => {
      raw.answer = stallingAnswer(7);
      const large = await client().getLarge({ url: `${raw.url}/leave` });
      for await (const chunk of large.chunks) {
        assert.ok(chunk.length > 0);
        break;
      }
      await raw.closed[0]; // resolves only when the client closed it: the server never ends it
    });

    it('closes the connection when a download fails before reading the body (a folder that cannot be written)', async () => {
      raw.answer = stallingAnswer(8);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'large-get-'));
      try {
        const notAFolder = path.join(dir, 'file');
        writeFileSync(notAFolder, 'x');
        // Long limits: an idle timeout must not be what closes the connection.
        await assert.rejects(
          downloadVideo(client({ ...TEST_TIMEOUTS, idleMs: 600_000 }), undefined, `${raw.url}/video.mp4`, {
            dir: notAFolder,
            baseName: 'v',
          }),
        );
        await raw.closed[0]; // resolves only when the client closed it
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('refuses a header value with a line break before connecting, and does not retry it', async () => {
      for (const value of ['a\r\nx-injected: 1', 'a\nb', 'a\rb']) {
        await assert.rejects(
          client().getLarge({ url: `${raw.url}/x`, headers: { 'X-Note': value } }),
          (e: unknown) => isGatewayError(e, 'badRequest'),
          JSON.stringify(value),
        );
      }
      assert.equal(raw.connections, 0, 'nothing was connected');
    });
  });
});

describe('HttpClient.getLarge: statuses and the key', () => {
  let server: http.Server;
  let other: http.Server;
  let url: string;
  let otherUrl: string;
  const seen: Array<{ url: string; headers: http.IncomingHttpHeaders }> = [];
  let handle: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.end('ok');

  const listen = async (s: http.Server) => {
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };

  before(async () => {
    const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      handle(req, res);
    };
    server = http.createServer(onRequest);
    other = http.createServer(onRequest);
    url = await listen(server);
    otherUrl = await listen(other);
  });
  after(async () => {
    for (const s of [server, other]) {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });
  beforeEach(() => {
    seen.length = 0;
    handle = (_req, res) => res.end('ok');
  });

  const NOT_FOUND = JSON.stringify({ error: { message: 'no such video', type: 'not_found_error' } });

  it('turns a 404 with a JSON error body into a GatewayError built from that body', async () => {
    handle = (_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(NOT_FOUND);
    };
    const { http: client } = clientFor(url, KEY);
    await assert.rejects(
      client.getLarge({ url: `${url}/v/1.mp4` }),
      (e: unknown) =>
        isGatewayError(e, 'badRequest') &&
        e.status === 404 &&
        e.detail === 'no such video' &&
        e.message.includes('no such video'),
    );
    assert.equal(seen.length, 1, 'a 404 is not retried');
  });

  it('hands a status in acceptStatus back with its body readable', async () => {
    handle = (_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(NOT_FOUND);
    };
    const { http: client } = clientFor(url, KEY);
    const response = await client.getLarge({ url: `${url}/v/1.mp4`, acceptStatus: [404] });
    assert.equal(response.status, 404);
    assert.equal(response.headers['content-type'], 'application/json');
    assert.equal((await readAll(response.chunks)).toString('utf8'), NOT_FOUND);
  });

  it('retries a 502 to the GET, reading and dropping the error body in between', async () => {
    const body = BODY.subarray(0, MIB + 3);
    handle = (_req, res) => {
      if (seen.length < 3) {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><head><title>502 Bad Gateway</title></head></html>');
      } else {
        res.end(body);
      }
    };
    const { http: client } = clientFor(url, KEY);
    const response = await client.getLarge({ url: `${url}/v/1.mp4` });
    assertSameBytes(await readAll(response.chunks), body, 'after retries');
    assert.equal(seen.length, 3);
  });

  it('sends the key to the gateway origin only: not when anonymous, never to another origin', async () => {
    const { http: client } = clientFor(url, KEY);
    for (const req of [
      { url: `${url}/v/a.mp4?x=1` },
      { url: `${url}/v/b.mp4`, anonymous: true },
      { url: `${otherUrl}/c.mp4`, headers: { Authorization: `Bearer ${KEY}`, 'X-Api-Key': KEY } },
    ]) {
      const response = await client.getLarge(req);
      await readAll(response.chunks);
    }
    assert.deepEqual(
      seen.map((s) => [s.url, s.headers.authorization, s.headers['x-api-key']]),
      [
        ['/v/a.mp4?x=1', `Bearer ${KEY}`, undefined],
        ['/v/b.mp4', undefined, undefined],
        ['/c.mp4', undefined, undefined],
      ],
    );
    assert.equal(seen[0]?.headers['user-agent'], 'model-gateway-tests');
  });
});

describe('HttpClient.getLarge over TLS', () => {
  let ca: TestCa;
  let raw: RawServer;
  let trusting: TrustSettings;
  const body = BODY;

  before(async () => {
    ca = createTestCa();
    raw = await new RawServer(ca.server).start();
    trusting = { ...DEFAULT_TRUST, extraCaFile: ca.caFile };
  });
  after(async () => {
    await raw?.stop();
    ca?.dispose();
  });
  beforeEach(() => {
    raw.reset();
    raw.answer = (socket) => {
      socket.write(withLength(body));
      socket.end(body);
    };
  });

  it('reads a body byte for byte with the authority trusted, also with a slow consumer', async () => {
    const { http: client } = clientFor(raw.url, KEY, { trust: trusting });
    assertSameBytes(await readAll((await client.getLarge({ url: `${raw.url}/video.mp4` })).chunks), body, 'tls');
    assertSameBytes(
      await readAll((await client.getLarge({ url: `${raw.url}/video.mp4` })).chunks, 5),
      body,
      'tls slow',
    );
  });

  it('refuses a certificate from an authority that is not trusted, naming the problem and the setting', async () => {
    const { http: client } = clientFor(raw.url, KEY);
    await assert.rejects(
      client.getLarge({ url: `${raw.url}/video.mp4` }),
      (e: unknown) =>
        isGatewayError(e, 'network') &&
        e.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' &&
        /not trust/.test(e.message) &&
        e.message.includes('modelGateway.extraCaCertificates'),
    );
    assert.equal(raw.heads.length, 0, 'no request was sent over the refused connection');
    assert.equal(raw.tcpConnections, 1, 'a refused certificate is not tried again');
  });
});
