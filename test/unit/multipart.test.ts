import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { isGatewayError } from '../../src/core/errors';
import { multipartFromFile } from '../../src/core/tools/multipart';
import { clientFor } from '../support/client';

/**
 * The multipart body reads the file into a few buffers that it reuses; that is safe only because
 * the HTTP client asks for a chunk once the socket has taken the previous one. A receiver that reads
 * slowly makes every socket write wait, which is where a buffer reused too early would show.
 */
const STALL_EVERY = 512 * 1024;

describe('multipart upload body', function () {
  let dir: string;
  let server: http.Server;
  let url: string;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'multipart-'));
    // Stops reading now and then (so that the client's socket writes have to wait) and answers with
    // the hash of the whole body.
    server = http.createServer((req, res) => {
      const hash = createHash('sha256');
      let bytes = 0;
      let nextStall = 0;
      req.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
        if (bytes >= nextStall) {
          nextStall += STALL_EVERY;
          req.pause();
          setTimeout(() => req.resume(), 20);
        }
      });
      req.on('end', () => res.end(JSON.stringify({ bytes, sha256: hash.digest('hex') })));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upload`;
  });

  after(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends a file larger than its buffers byte for byte to a slow receiver', async () => {
    // Every 16-byte line differs, so a buffer overwritten before the socket took it changes the hash.
    const file = path.join(dir, 'numbers.txt');
    const lines: string[] = [];
    for (let i = 0; i < 200_000; i++) lines.push(`${String(i).padStart(15, '0')}\n`);
    writeFileSync(file, lines.join(''));
    const form = await multipartFromFile(
      { purpose: 'file-extract' },
      { name: 'file', path: file, contentType: 'text/plain' },
    );
    const expected = createHash('sha256');
    for await (const chunk of form.chunks()) expected.update(chunk);
    const client = clientFor('http://127.0.0.1:1', undefined, {
      timeouts: { connectMs: 5000, firstByteMs: 30_000, idleMs: 30_000, longMs: 30_000 },
    }).http;
    try {
      const response = await client.send({
        method: 'POST',
        url,
        anonymous: true,
        body: form.chunks(),
        headers: { 'content-type': form.contentType, 'content-length': String(form.length) },
      });
      const answer = JSON.parse(await response.text()) as { bytes: number; sha256: string };
      assert.deepEqual(answer, { bytes: form.length, sha256: expected.digest('hex') });
    } finally {
      await client.close();
    }
  });

  it('computes the length exactly and carries the file unchanged', async () => {
    const file = path.join(dir, 'notes.md');
    writeFileSync(file, '# Notes\n\n' + 'A line of notes.\n'.repeat(40_000));
    const form = await multipartFromFile({ purpose: 'file-extract' }, { name: 'file', path: file });
    const chunks: Buffer[] = [];
    for await (const c of form.chunks()) chunks.push(Buffer.from(c)); // a copy: the chunks' buffers are reused
    const body = Buffer.concat(chunks);
    assert.equal(body.length, form.length);
    assert.ok(body.includes(readFileSync(file)), 'the file part is the file');
    assert.match(body.toString('latin1', 0, 300), /name="purpose"\r\n\r\nfile-extract\r\n/);
  });

  it('refuses to send a file that became shorter after the form was made', async () => {
    const file = path.join(dir, 'shrinking.txt');
    writeFileSync(file, 'x'.repeat(600 * 1024));
    const form = await multipartFromFile({ purpose: 'file-extract' }, { name: 'file', path: file });
    truncateSync(file, 100 * 1024);
    const readAll = async () => {
      for await (const c of form.chunks()) void c;
    };
    await assert.rejects(
      readAll(),
      (e: unknown) =>
        isGatewayError(e, 'badRequest') && /shrinking\.txt changed while it was being sent/.test(e.message),
    );
  });
});
