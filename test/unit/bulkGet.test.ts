import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { streamToFileUnique } from '../../src/core/atomicFile';
import { BULK_BUFFER, bulkGet, parseHead, unchunk, type BulkRequest, type RecyclingChunks } from '../../src/core/bulkGet';
import { GatewayError, isGatewayError } from '../../src/core/errors';
import { downloadVideo } from '../../src/core/media/video';
import type { Timeouts } from '../../src/core/http';
import { loadTrust, type TrustSettings } from '../../src/core/tls';
import { clientFor, DEFAULT_TRUST, TEST_TIMEOUTS } from '../support/client';
import { createTestCa, type TestCa } from '../support/testCa';
import { until } from '../support/until';

/**
 * bulkGet reads a response body from the socket into two 1 MiB buffers that it hands out and gets
 * back (`recycle`). A buffer reused too early, a read landing in the wrong place, or a framing
 * mistake changes the bytes; so every body here is pseudo-random (a repeated byte would hide a
 * misplaced copy) and larger than the buffers, and the check is the body's sha256.
 */

const KEY = 'sk-bulk-test-key';
/** Short limits for the timeout tests; generous enough that the others never meet them. */
const FAST: Timeouts = { ...TEST_TIMEOUTS, firstByteMs: 300, idleMs: 300 };
type ChunkedState = Parameters<typeof unchunk>[3];

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
const BODY = pseudoRandom(5 * BULK_BUFFER + 12_345, 0x9e3779b9);

function bulkRequest(url: string, more: Partial<BulkRequest> = {}): BulkRequest {
  // Limits only against a hang: no test here means to meet them.
  return { url: new URL(url), headers: {}, trust: { notes: [] }, connectMs: 10_000, firstByteMs: 10_000, idleMs: 10_000, ...more };
}

interface Read {
  bytes: Buffer;
  chunks: number;
  /** The distinct memory the chunks came in: with a consumer that recycles, the two reused buffers. */
  buffers: Set<ArrayBufferLike>;
}

/**
 * Copies each chunk out and then hands it back, as the file writer does once a chunk is on disk.
 * With `holdMs`, the chunk is held that long first, so that the reader runs out of buffers and
 * must wait (pause the socket) for one to come back.
 */
async function readRecycling(chunks: RecyclingChunks, holdMs = 0): Promise<Read> {
  const parts: Buffer[] = [];
  const buffers = new Set<ArrayBufferLike>();
  for await (const chunk of chunks) {
    if (holdMs) await sleep(holdMs);
    buffers.add(chunk.buffer);
    parts.push(Buffer.from(chunk)); // a copy: the chunk's memory is reused once it is back
    chunks.recycle(chunk);
  }
  return { bytes: Buffer.concat(parts), chunks: parts.length, buffers };
}

/** Keeps every chunk as it is and never hands one back: none may be overwritten later. */
async function readKeeping(chunks: RecyclingChunks): Promise<Read> {
  const kept: Uint8Array[] = [];
  const buffers = new Set<ArrayBufferLike>();
  for await (const chunk of chunks) {
    buffers.add(chunk.buffer);
    kept.push(chunk);
  }
  return { bytes: Buffer.concat(kept), chunks: kept.length, buffers };
}

/** The bytes read so far and the error that ended the reading (undefined when it ended normally). */
async function readUntilError(chunks: RecyclingChunks, onChunk?: (n: number) => void): Promise<{ bytes: Buffer; error: unknown }> {
  const parts: Buffer[] = [];
  try {
    for await (const chunk of chunks) {
      parts.push(Buffer.from(chunk));
      chunks.recycle(chunk);
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
const withLength = (body: Buffer, extra = '') => head200(`content-length: ${body.length}\r\ncontent-type: application/octet-stream\r\n${extra}`);

/** A 200 for a 20 MiB body of which 2 MiB are sent; then it stalls, so only the client can end the connection. */
const stallingAnswer =
  (seed: number): Answer =>
  (socket) => {
    const whole = pseudoRandom(20 * BULK_BUFFER, seed);
    socket.write(withLength(whole));
    socket.write(whole.subarray(0, 2 * BULK_BUFFER));
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

/**
 * Feeds `encoded` to unchunk in the pieces between `cuts` the way bulkGet does: each piece is
 * placed right after the data decoded so far, and decoded in place.
 */
function unchunkInPieces(encoded: Buffer, cuts: number[]): { out: string; done: boolean; doneEarly: boolean; error?: string } {
  const buf = Buffer.alloc(encoded.length);
  const state: ChunkedState = { phase: 'size', size: 0, digits: 0, remaining: 0 };
  let end = 0;
  let done = false;
  let doneEarly = false;
  let from = 0;
  const ends = [...cuts, encoded.length];
  for (const [n, cut] of ends.entries()) {
    const length = encoded.copy(buf, end, from, cut);
    const result = unchunk(buf, end, end + length, state);
    if (result.error) return { out: buf.toString('latin1', 0, result.end), done: false, doneEarly, error: result.error };
    end = result.end;
    done = result.done;
    if (done && n < ends.length - 1) doneEarly = true;
    from = cut;
    if (done) break;
  }
  return { out: buf.toString('latin1', 0, end), done, doneEarly };
}

describe('bulkGet: the body read into reused buffers', function () {
  let raw: RawServer;

  before(async () => {
    raw = await new RawServer().start();
  });
  after(() => raw.stop());
  afterEach(() => raw.reset());

  describe('a Content-Length body of several MiB', () => {
    beforeEach(() => {
      raw.answer = (socket) => {
        socket.write(withLength(BODY));
        socket.end(BODY);
      };
    });

    it('arrives byte for byte with a consumer that copies and recycles each chunk, in two buffers', async () => {
      const response = await bulkGet(bulkRequest(`${raw.url}/video.mp4`));
      assert.equal(response.status, 200);
      assert.equal(response.headers['content-length'], String(BODY.length));
      const read = await readRecycling(response.chunks);
      assertSameBytes(read.bytes, BODY, 'recycled');
      // The memory claim, and proof that recycled buffers really were filled again (so the hash
      // above did check reuse): more chunks than buffers, and no more than the two buffers.
      assert.ok(read.buffers.size <= 2, `a consumer that recycles before asking for more is served from two buffers, not ${read.buffers.size}`);
      assert.ok(read.chunks > read.buffers.size, `${read.chunks} chunk(s) in ${read.buffers.size} buffer(s)`);
    });

    it('arrives byte for byte with a consumer that keeps every chunk and recycles none (kept chunks are never overwritten)', async () => {
      const response = await bulkGet(bulkRequest(`${raw.url}/video.mp4`));
      const read = await readKeeping(response.chunks);
      assertSameBytes(read.bytes, BODY, 'kept');
      // 5 MiB do not fit in two 1 MiB buffers: the reader had to take new ones instead of reusing.
      assert.ok(read.buffers.size >= 5, `kept chunks came in ${read.buffers.size} buffer(s)`);
    });

    it('arrives byte for byte with a slow consumer that holds each chunk a while before recycling it', async () => {
      // Both buffers are out while the consumer sleeps: the socket is paused, the read Node had
      // already asked memory for lands in the spare buffer and is copied once a buffer is back.
      const response = await bulkGet(bulkRequest(`${raw.url}/video.mp4`));
      const read = await readRecycling(response.chunks, 5);
      assertSameBytes(read.bytes, BODY, 'slow');
      assert.ok(read.buffers.size <= 2, `${read.buffers.size} buffers`);
    });

    it('arrives byte for byte with a consumer that hands a chunk back only after taking the next', async () => {
      // The file writer's pattern: it asks for more while its last chunk is still being written.
      const response = await bulkGet(bulkRequest(`${raw.url}/video.mp4`));
      const parts: Buffer[] = [];
      let previous: Uint8Array | undefined;
      for await (const chunk of response.chunks) {
        if (previous) {
          // The held chunk must still hold its bytes although reading went on meanwhile.
          parts.push(Buffer.from(previous));
          response.chunks.recycle(previous);
        }
        previous = chunk;
        await sleep(1);
      }
      if (previous) parts.push(Buffer.from(previous));
      assertSameBytes(Buffer.concat(parts), BODY, 'recycled one late');
    });

    it('hands on a part of a buffer when the server pauses, and keeps it intact while it is held', async () => {
      // The server sends 600 000 bytes and waits until the consumer has them: only the hand-over of
      // a buffer not yet full lets the download go on. That buffer then holds two pieces; the
      // consumer gives the first back while it still holds the second, which must stay untouched
      // while the rest of the body streams in behind it.
      const first = 600_000;
      let seen: () => void = () => undefined;
      const firstSeen = new Promise<void>((resolve) => (seen = resolve));
      raw.answer = (socket) => {
        socket.write(withLength(BODY));
        socket.write(BODY.subarray(0, first));
        void firstSeen.then(() => socket.end(BODY.subarray(first)));
      };
      const response = await bulkGet(bulkRequest(`${raw.url}/trickle`));
      const parts: Buffer[] = [];
      let previous: Uint8Array | undefined;
      let received = 0;
      for await (const chunk of response.chunks) {
        // On a busy machine the first bytes may come in more than one piece; all of them before the rest.
        if (received < first) assert.ok(received + chunk.length <= first, 'only what the server sent before its pause');
        received += chunk.length;
        if (received === first) seen();
        if (previous) {
          parts.push(Buffer.from(previous));
          response.chunks.recycle(previous);
        }
        previous = chunk;
        await sleep(10); // holding `chunk` meanwhile
      }
      if (previous) parts.push(Buffer.from(previous));
      assertSameBytes(Buffer.concat(parts), BODY, 'paused body');
    });

    it('goes to a file through streamToFileUnique byte for byte', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'bulk-get-'));
      try {
        const { http: client } = clientFor(raw.url, KEY);
        const response = await client.getLarge({ url: `${raw.url}/video.mp4` });
        const file = await streamToFileUnique(dir, 'video', 'mp4', response.chunks);
        assertSameBytes(readFileSync(file), BODY, 'file');
        await client.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('can be read only once', async () => {
      const response = await bulkGet(bulkRequest(`${raw.url}/video.mp4`));
      await readRecycling(response.chunks);
      await assert.rejects(readRecycling(response.chunks), /read once/);
    });
  });

  describe('framing', () => {
    it('decodes a chunked body sent in awkward pieces: split size lines and CRLFs, extensions, a trailer, chunks across the 1 MiB buffers', async () => {
      const body = BODY.subarray(0, 1 + 16 + 5000 + 700_000 + 600_000 + 1_500_000 + 3 + BULK_BUFFER + 65_535 + 9 + 200_000);
      const { encoded, cuts } = chunkedEncoding(
        body,
        [
          { size: 1 },
          { size: 16, ext: ';a=b' },
          { size: 5000, upper: true },
          { size: 700_000, ext: ';name="quoted;value"' },
          { size: 600_000 }, // ends past the first 1 MiB
          { size: 1_500_000, upper: true, ext: ' ;a=b' }, // longer than a buffer
          { size: 3 },
          { size: BULK_BUFFER, ext: ';x' },
          { size: 65_535, upper: true },
          { size: 9 },
          { size: 200_000 },
        ],
        'x-checksum: abc',
      );
      const pieces = piecesAt(encoded, cuts);
      raw.answer = (socket) => void writeApart(socket, [head200('transfer-encoding: chunked\r\n'), ...pieces], 2);
      const fast = await bulkGet(bulkRequest(`${raw.url}/chunked`));
      assert.equal(fast.headers['transfer-encoding'], 'chunked');
      assertSameBytes((await readRecycling(fast.chunks)).bytes, body, 'chunked, recycled');
      // Again with the consumer that holds its chunks: decoding in place must survive the waits.
      const slow = await bulkGet(bulkRequest(`${raw.url}/chunked`));
      assertSameBytes((await readRecycling(slow.chunks, 5)).bytes, body, 'chunked, slow');
      const kept = await bulkGet(bulkRequest(`${raw.url}/chunked`));
      assertSameBytes((await readKeeping(kept.chunks)).bytes, body, 'chunked, kept');
    });

    it('decodes a chunked body that arrives in one go with the head', async () => {
      const body = BODY.subarray(0, 3 * BULK_BUFFER + 77);
      const { encoded } = chunkedEncoding(body, [{ size: 100 }, { size: 2 * BULK_BUFFER }, { size: BULK_BUFFER - 23 }], 'x-a: 1');
      raw.answer = (socket) => socket.end(Buffer.concat([Buffer.from(head200('transfer-encoding: chunked\r\n')), encoded]));
      const response = await bulkGet(bulkRequest(`${raw.url}/chunked`));
      assertSameBytes((await readRecycling(response.chunks)).bytes, body, 'chunked');
    });

    it('reads a close-delimited body (no Content-Length, not chunked) to the end of the connection', async () => {
      const body = BODY.subarray(0, 3 * BULK_BUFFER + 7);
      raw.answer = (socket) => {
        socket.write(head200('content-type: video/mp4\r\n'));
        socket.end(body);
      };
      const response = await bulkGet(bulkRequest(`${raw.url}/close`));
      assertSameBytes((await readRecycling(response.chunks)).bytes, body, 'close-delimited');
      // And with a consumer slow enough that the end of the connection comes while reading is paused.
      const slow = await bulkGet(bulkRequest(`${raw.url}/close`));
      assertSameBytes((await readRecycling(slow.chunks, 5)).bytes, body, 'close-delimited, slow');
    });

    it('reads an empty body (Content-Length: 0) without waiting for the connection to close', async () => {
      // The server keeps the connection open: the body must end by its length alone.
      raw.answer = (socket) => socket.write(head200('content-length: 0\r\n'));
      const response = await bulkGet(bulkRequest(`${raw.url}/empty`));
      assert.equal((await readRecycling(response.chunks)).bytes.length, 0);
    });

    it('reads no body after a 204 or a 304, even with the connection left open', async () => {
      // A Content-Length on a 304 is the length the full answer would have: no body follows it.
      for (const answer of ['HTTP/1.1 204 No Content\r\n\r\n', 'HTTP/1.1 304 Not Modified\r\ncontent-length: 1234\r\n\r\n']) {
        raw.answer = (socket) => socket.write(answer);
        const response = await bulkGet(bulkRequest(`${raw.url}/none`));
        assert.equal((await readRecycling(response.chunks)).bytes.length, 0, answer);
      }
    });

    it('skips a 100 Continue before the real answer, whether it comes apart or with the answer', async () => {
      const body = BODY.subarray(0, BULK_BUFFER + 99);
      raw.answer = (socket) => void writeApart(socket, ['HTTP/1.1 100 Continue\r\n\r\n', withLength(body), body], 20);
      const apart = await bulkGet(bulkRequest(`${raw.url}/continue`));
      assert.equal(apart.status, 200);
      assertSameBytes((await readRecycling(apart.chunks)).bytes, body, '100 apart');

      raw.answer = (socket) => socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n${withLength(body, 'x-real: yes\r\n')}`), body]));
      const together = await bulkGet(bulkRequest(`${raw.url}/continue`));
      assert.equal(together.status, 200);
      assert.equal(together.headers['x-real'], 'yes');
      assertSameBytes((await readRecycling(together.chunks)).bytes, body, '100 together');
    });

    it('ignores bytes after the end of a Content-Length body', async () => {
      const body = BODY.subarray(0, 1000);
      raw.answer = (socket) => socket.end(Buffer.concat([Buffer.from(withLength(body)), body, Buffer.from('GARBAGE AFTER THE BODY')]));
      const response = await bulkGet(bulkRequest(`${raw.url}/extra`));
      assertSameBytes((await readRecycling(response.chunks)).bytes, body, 'length');
    });

    it('sends one GET with the path, query, Host and Connection: close', async () => {
      raw.answer = (socket) => socket.end(head200('content-length: 2\r\n') + 'ok');
      const response = await bulkGet(bulkRequest(`${raw.url}/files/a%20b.mp4?sig=x%2By&n=1`, { headers: { accept: 'video/mp4', host: 'evil.example', connection: 'keep-alive' } }));
      await readRecycling(response.chunks);
      const lines = (raw.heads[0] ?? '').split('\r\n');
      assert.equal(lines[0], 'GET /files/a%20b.mp4?sig=x%2By&n=1 HTTP/1.1');
      // Host and Connection are the reader's own; the caller's are dropped, not sent twice.
      assert.deepEqual(
        lines.filter((l) => /^(host|connection):/i.test(l)),
        [`host: ${new URL(raw.url).host}`, 'connection: close'],
      );
      assert.ok(lines.includes('accept: video/mp4'));
    });
  });

  describe('failures', () => {
    it('fails the reading of a body cut short (the server closes before Content-Length bytes), after handing on what arrived', async () => {
      const whole = BODY.subarray(0, 3 * BULK_BUFFER);
      raw.answer = (socket) => {
        socket.write(withLength(whole));
        socket.end(whole.subarray(0, BULK_BUFFER + BULK_BUFFER / 2));
      };
      const response = await bulkGet(bulkRequest(`${raw.url}/cut`));
      const { bytes, error } = await readUntilError(response.chunks);
      assert.equal((error as { code?: string } | undefined)?.code, 'UND_ERR_SOCKET', String(error));
      assert.ok(bytes.length < whole.length);
      assert.ok(bytes.equals(whole.subarray(0, bytes.length)), 'what arrived is the start of the body');

      const { http: client } = clientFor(raw.url, KEY);
      const large = await client.getLarge({ url: `${raw.url}/cut` });
      const mapped = await readUntilError(large.chunks);
      assert.ok(isGatewayError(mapped.error, 'network'), String(mapped.error));
      assert.match((mapped.error as GatewayError).message, /closed in the middle of the answer/);
    });

    it('fails when the connection closes before any answer', async () => {
      raw.answer = (socket) => socket.end();
      await assert.rejects(bulkGet(bulkRequest(`${raw.url}/nothing`)), (e: unknown) => (e as { code?: string }).code === 'UND_ERR_SOCKET');
    });

    it('fails a malformed chunk size with a protocol error while reading, directly and through getLarge', async () => {
      raw.answer = (socket) => socket.end(`${head200('transfer-encoding: chunked\r\n')}5\r\nhello\r\nzz\r\nmore\r\n0\r\n\r\n`);
      const response = await bulkGet(bulkRequest(`${raw.url}/bad-chunk`));
      const { error } = await readUntilError(response.chunks);
      assert.ok(isGatewayError(error, 'protocol') && /malformed chunked body \(missing chunk size\)/.test(error.message), String(error));

      const { http: client } = clientFor(raw.url, KEY);
      const large = await client.getLarge({ url: `${raw.url}/bad-chunk` });
      const mapped = await readUntilError(large.chunks);
      assert.ok(isGatewayError(mapped.error, 'protocol'), String(mapped.error));
    });

    it('refuses answers that are not HTTP/1.1, an invalid Content-Length and an unknown transfer coding', async () => {
      const cases: Array<[string, RegExp]> = [
        ['SSH-2.0-OpenSSH_9.6\r\n\r\n', /did not answer with valid HTTP/],
        ['HTTP/1.1 200 OK\r\ncontent-length: 12abc\r\n\r\n', /invalid Content-Length/],
        ['HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n', /transfer coding that is not supported/],
        ['HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\n\r\n', /did not answer with valid HTTP/],
      ];
      for (const [answer, why] of cases) {
        raw.answer = (socket) => socket.end(answer);
        await assert.rejects(bulkGet(bulkRequest(`${raw.url}/odd`)), (e: unknown) => isGatewayError(e, 'protocol') && why.test(e.message));
      }
    });

    it('refuses a response head that goes on past 64 KiB without ending', async () => {
      // The connection stays open: only the limit can end the wait.
      raw.answer = (socket) => socket.write(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(70 * 1024)}`);
      await assert.rejects(bulkGet(bulkRequest(`${raw.url}/big-head`)), (e: unknown) => isGatewayError(e, 'protocol') && /longer than 65536 bytes/.test(e.message));
    });

    // Whether an answer is refused must not depend on how TCP cut it: on loopback a complete head
    // nearly always arrives in one read.
    it('refuses a complete response head longer than 64 KiB however it arrives', async () => {
      raw.answer = (socket) => socket.end(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(70 * 1024)}\r\ncontent-length: 0\r\n\r\n`);
      await assert.rejects(bulkGet(bulkRequest(`${raw.url}/big-head`)), (e: unknown) => isGatewayError(e, 'protocol') && /longer than/.test(e.message));
    });

    it('times out when the server accepts but never answers: a timeout GatewayError, not retried', async () => {
      raw.answer = () => undefined;
      const { http: client } = clientFor(raw.url, KEY, { timeouts: FAST });
      await assert.rejects(client.getLarge({ url: `${raw.url}/silent` }), (e: unknown) => isGatewayError(e, 'timeout') && /sent no answer/.test(e.message));
      assert.equal(raw.heads.length, 1, 'a request that may have arrived is not sent again after a timeout');
    });

    it('times out when the server stops sending in the middle of the body', async () => {
      const whole = BODY.subarray(0, 2 * BULK_BUFFER);
      raw.answer = (socket) => {
        socket.write(withLength(whole));
        socket.write(whole.subarray(0, 100_000)); // and then nothing, with the connection left open
      };
      const { http: client } = clientFor(raw.url, KEY, { timeouts: FAST });
      const response = await client.getLarge({ url: `${raw.url}/stall` });
      const { bytes, error } = await readUntilError(response.chunks);
      assert.ok(isGatewayError(error, 'timeout') && /stopped sending/.test(error.message), String(error));
      assert.ok(bytes.equals(whole.subarray(0, 100_000)), 'what arrived before the silence was handed on');
    });

    it('gives up the body when the signal aborts in the middle: cancelled, and the connection is closed', async () => {
      const whole = BODY.subarray(0, 4 * BULK_BUFFER);
      raw.answer = (socket) => {
        socket.write(withLength(whole));
        socket.write(whole.subarray(0, BULK_BUFFER + 1000)); // then stalls, so only the abort can end it
      };
      const controller = new AbortController();
      const { http: client } = clientFor(raw.url, KEY);
      const response = await client.getLarge({ url: `${raw.url}/abort`, signal: controller.signal });
      const { error } = await readUntilError(response.chunks, (n) => n === 1 && controller.abort());
      assert.ok(isGatewayError(error, 'cancelled'), String(error));
      await raw.closed[0];

      // Directly: the error is the AbortError that undici and fetch give.
      const direct = new AbortController();
      const bulk = await bulkGet(bulkRequest(`${raw.url}/abort`, { signal: direct.signal }));
      const result = await readUntilError(bulk.chunks, (n) => n === 1 && direct.abort());
      assert.equal((result.error as Error | undefined)?.name, 'AbortError', String(result.error));
      await raw.closed[1];
    });

    it('gives up the body on abort()', async () => {
      raw.answer = (socket) => {
        socket.write(withLength(BODY));
        socket.write(BODY.subarray(0, 5000));
      };
      const response = await bulkGet(bulkRequest(`${raw.url}/abort`));
      const { error } = await readUntilError(response.chunks, () => response.abort());
      assert.equal((error as Error | undefined)?.name, 'AbortError', String(error));
      await raw.closed[0];
    });

    it('refuses at once, without connecting, when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(bulkGet(bulkRequest(`${raw.url}/x`, { signal: controller.signal })), (e: unknown) => (e as Error).name === 'AbortError');
      const { http: client } = clientFor(raw.url, KEY);
      await assert.rejects(client.getLarge({ url: `${raw.url}/x`, signal: controller.signal }), (e: unknown) => isGatewayError(e, 'cancelled'));
      assert.equal(raw.connections, 0);
    });

    it('gives up waiting for the head when the signal aborts: cancelled', async () => {
      raw.answer = () => undefined;
      const controller = new AbortController();
      const { http: client } = clientFor(raw.url, KEY);
      const pending = client.getLarge({ url: `${raw.url}/slow-head`, signal: controller.signal });
      await until(() => raw.heads.length === 1, 'the request to arrive');
      controller.abort();
      await assert.rejects(pending, (e: unknown) => isGatewayError(e, 'cancelled'));
      await raw.closed[0];
    });

    it('closes the connection when the loop is left early', async () => {
      raw.answer = stallingAnswer(7);
      const response = await bulkGet(bulkRequest(`${raw.url}/leave`));
      for await (const chunk of response.chunks) {
        assert.ok(chunk.length > 0);
        break;
      }
      await raw.closed[0]; // resolves only when the client closed it: the server never ends it

      // The same through getLarge, whose chunks wrap bulkGet's.
      const { http: client } = clientFor(raw.url, KEY);
      const large = await client.getLarge({ url: `${raw.url}/leave` });
      for await (const chunk of large.chunks) {
        assert.ok(chunk.length > 0);
        break;
      }
      await raw.closed[1];
    });

    it('closes the connection when a download fails before reading the body (a folder that cannot be written)', async () => {
      raw.answer = stallingAnswer(8);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'bulk-'));
      try {
        const notAFolder = path.join(dir, 'file');
        writeFileSync(notAFolder, 'x');
        // Long limits: an idle timeout must not be what closes the connection.
        const { http: client } = clientFor(raw.url, KEY, { timeouts: { ...TEST_TIMEOUTS, idleMs: 600_000 } });
        await assert.rejects(downloadVideo(client, `${raw.url}/video.mp4`, { dir: notAFolder, baseName: 'v' }));
        await raw.closed[0]; // resolves only when the client closed it
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('refuses a header value with a line break before connecting', async () => {
      await assert.rejects(
        bulkGet(bulkRequest(`${raw.url}/x`, { headers: { 'x-note': 'a\r\nx-injected: 1' } })),
        (e: unknown) => isGatewayError(e, 'badRequest') && /line break/.test(e.message),
      );
      await assert.rejects(bulkGet(bulkRequest(`${raw.url}/x`, { headers: { 'x-note': 'a\nb' } })), (e: unknown) => isGatewayError(e, 'badRequest'));
      const { http: client } = clientFor(raw.url, KEY);
      await assert.rejects(client.getLarge({ url: `${raw.url}/x`, headers: { 'X-Note': 'a\rb' } }), (e: unknown) => isGatewayError(e, 'badRequest'));
      assert.equal(raw.connections, 0, 'nothing was connected');
    });
  });
});

describe('unchunk and parseHead', () => {
  const body = 'Wiki' + 'pedia' + ' in\r\n\r\nchunks.' + 'abcdefghijklmnopqrstuvwxyz';
  const ENCODED = Buffer.from('4;a=b\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n1a;x="y"\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nx-trailer: yes\r\nx-two: 2\r\n\r\n', 'latin1');

  it('gives the same bytes for every way of cutting the encoding into two or three pieces', () => {
    assert.deepEqual(unchunkInPieces(ENCODED, []), { out: body, done: true, doneEarly: false });
    const n = ENCODED.length;
    for (let i = 1; i < n; i++) {
      const two = unchunkInPieces(ENCODED, [i]);
      assert.deepEqual(two, { out: body, done: true, doneEarly: false }, `cut at ${i}`);
      for (let j = i + 1; j < n; j++) {
        const three = unchunkInPieces(ENCODED, [i, j]);
        if (three.out !== body || !three.done || three.doneEarly) assert.fail(`cuts at ${i} and ${j}: ${JSON.stringify(three)}`);
      }
    }
  });

  it('gives the same bytes fed one byte at a time', () => {
    const cuts = Array.from({ length: ENCODED.length - 1 }, (_, k) => k + 1);
    assert.deepEqual(unchunkInPieces(ENCODED, cuts), { out: body, done: true, doneEarly: false });
  });

  it('stops at the end of the trailer section, leaving what follows alone', () => {
    const buf = Buffer.concat([Buffer.from('3\r\nabc\r\n0\r\n\r\n'), Buffer.from('NEXT')]);
    const result = unchunk(buf, 0, buf.length, { phase: 'size', size: 0, digits: 0, remaining: 0 });
    assert.deepEqual(result, { end: 3, done: true });
    assert.equal(buf.toString('latin1', 0, 3), 'abc');
  });

  it('decodes in place from an offset, not touching the bytes before it', () => {
    const buf = Buffer.from('KEEP2\r\nhi\r\n0\r\n\r\n');
    const result = unchunk(buf, 4, buf.length, { phase: 'size', size: 0, digits: 0, remaining: 0 });
    assert.deepEqual(result, { end: 6, done: true });
    assert.equal(buf.toString('latin1', 0, 6), 'KEEPhi');
  });

  it('reports malformed encodings, however they are cut', () => {
    const cases: Array<[string, string]> = [
      ['zz\r\n', 'missing chunk size'],
      ['\r\n', 'missing chunk size'],
      ['3\r\nabcX\r\n', 'chunk longer than its size'],
      ['3\r\nabc\rX', 'bad line end after chunk data'],
      ['3\rX', 'bad line end after a chunk size'],
      ['0\r\n\rX', 'bad line end after the last chunk'],
      ['1234567890abcdef0\r\n', 'chunk size too large'],
    ];
    for (const [text, error] of cases) {
      const encoded = Buffer.from(text, 'latin1');
      for (let i = 0; i < encoded.length; i++) {
        const result = unchunkInPieces(encoded, i === 0 ? [] : [i]);
        assert.equal(result.error, error, `${JSON.stringify(text)} cut at ${i}`);
      }
    }
  });

  it('parses a response head: status, lower-case names, repeated headers joined; refuses what is not HTTP/1.x', () => {
    assert.deepEqual(parseHead('HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1/2\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nX-Empty:'), {
      status: 206,
      headers: { 'content-range': 'bytes 0-1/2', 'set-cookie': 'a=1, b=2', 'x-empty': '' },
    });
    assert.deepEqual(parseHead('HTTP/1.0 200'), { status: 200, headers: {} });
    assert.equal(parseHead('HTTP/2 200'), undefined);
    assert.equal(parseHead('HTTP/1.1 200 OK\r\nno colon here'), undefined);
    assert.equal(parseHead('HTTP/1.1 200 OK\r\na: 1\r\n\tfolded'), undefined);
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
      (e: unknown) => isGatewayError(e, 'badRequest') && e.status === 404 && e.detail === 'no such video' && e.message.includes('no such video'),
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
    assert.equal((await readRecycling(response.chunks)).bytes.toString('utf8'), NOT_FOUND);
  });

  it('retries a 502 to the GET, reading and dropping the error body in between', async () => {
    const body = BODY.subarray(0, BULK_BUFFER + 3);
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
    assertSameBytes((await readRecycling(response.chunks)).bytes, body, 'after retries');
    assert.equal(seen.length, 3);
  });

  it('sends the key to the gateway origin only: not when anonymous, never to another origin', async () => {
    const { http: client } = clientFor(url, KEY);
    for (const req of [{ url: `${url}/v/a.mp4?x=1` }, { url: `${url}/v/b.mp4`, anonymous: true }, { url: `${otherUrl}/c.mp4`, headers: { Authorization: `Bearer ${KEY}`, 'X-Api-Key': KEY } }]) {
      const response = await client.getLarge(req);
      await readRecycling(response.chunks);
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

describe('bulkGet over TLS', () => {
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

  it('reads a body byte for byte with the authority trusted, directly and through getLarge', async () => {
    const direct = await bulkGet(bulkRequest(`${raw.url}/video.mp4`, { trust: loadTrust(trusting) }));
    assertSameBytes((await readRecycling(direct.chunks)).bytes, body, 'tls direct');

    const { http: client } = clientFor(raw.url, KEY, { trust: trusting });
    const response = await client.getLarge({ url: `${raw.url}/video.mp4` });
    assertSameBytes((await readKeeping(response.chunks)).bytes, body, 'tls getLarge');
  });

  // Over plain TCP, pausing stops reads at once; Node's TLS socket still hands over the records it
  // has already decrypted (16 KiB each), so a read can come while both buffers are out. A consumer
  // slower than the network (the file writer on a slow disk) makes that happen on every run here.
  it('reads a body byte for byte over TLS with a slow consumer that holds each chunk', async () => {
    const direct = await bulkGet(bulkRequest(`${raw.url}/video.mp4`, { trust: loadTrust(trusting) }));
    assertSameBytes((await readRecycling(direct.chunks, 5)).bytes, body, 'tls slow');
  });

  it('refuses a certificate from an authority that is not trusted, naming the problem and the setting', async () => {
    await assert.rejects(bulkGet(bulkRequest(`${raw.url}/video.mp4`)), (e: unknown) => (e as { code?: string }).code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    const { http: client } = clientFor(raw.url, KEY);
    await assert.rejects(
      client.getLarge({ url: `${raw.url}/video.mp4` }),
      (e: unknown) => isGatewayError(e, 'network') && e.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' && /not trust/.test(e.message) && e.message.includes('modelGateway.extraCaCertificates'),
    );
    assert.equal(raw.heads.length, 0, 'no request was sent over the refused connection');
    assert.equal(raw.tcpConnections, 2, 'a refused certificate is not tried again (one connection each)');
  });
});
