import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { isGatewayError } from '../../src/core/errors';
import { multipartFromFile, type MultipartBody } from '../../src/core/tools/multipart';
import { openFile, type OpenedFile } from '../../src/core/tools/openedFile';
import { clientFor } from '../support/client';
import { withOpened } from '../support/openedFiles';

/**
 * The multipart body streams the file from its open handle, a fresh buffer per chunk. A receiver
 * that reads slowly makes every socket write wait, which is where a buffer reused too early (as an
 * earlier writer did) would show in the hash.
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

  it('sends a file of many chunks byte for byte to a slow receiver', async () => {
    // Every 16-byte line differs, so a buffer overwritten before the socket took it changes the hash.
    const file = path.join(dir, 'numbers.txt');
    const lines: string[] = [];
    for (let i = 0; i < 200_000; i++) lines.push(`${String(i).padStart(15, '0')}\n`);
    writeFileSync(file, lines.join(''));
    const opened = await openFile(file);
    const form = multipartFromFile(
      { purpose: 'file-extract' },
      { name: 'file', file: opened, contentType: 'text/plain' },
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
      await opened.close();
    }
  });

  /** Every chunk of the body, kept as handed out (no copy: a reused buffer would show). */
  async function bodyOf(form: MultipartBody): Promise<Buffer> {
    const chunks: Uint8Array[] = [];
    for await (const c of form.chunks()) chunks.push(c);
    return Buffer.concat(chunks);
  }

  const changedWhileSent = (name: string) => (e: unknown) =>
    isGatewayError(e, 'badRequest') && new RegExp(`${name} changed while it was being sent`).test(e.message);

  it('computes the length exactly and carries the file unchanged, each chunk a buffer of its own', async () => {
    const file = path.join(dir, 'notes.md');
    writeFileSync(file, '# Notes\n\n' + 'A line of notes.\n'.repeat(40_000));
    const body = await withOpened(file, (opened) =>
      bodyOf(multipartFromFile({ purpose: 'file-extract' }, { name: 'file', file: opened })),
    );
    assert.ok(body.includes(readFileSync(file)), 'the file part is the file');
    assert.match(body.toString('latin1', 0, 300), /name="purpose"\r\n\r\nfile-extract\r\n/);
    const form = await withOpened(file, async (opened) =>
      multipartFromFile({ purpose: 'file-extract' }, { name: 'file', file: opened }),
    );
    assert.equal(body.length, form.length);
  });

  it('sends the file that was opened, even when its name is given to another file meanwhile', async () => {
    const file = path.join(dir, 'swapped.txt');
    writeFileSync(file, 'the file that was checked\n'.repeat(10_000));
    const other = path.join(dir, 'other.txt');
    writeFileSync(other, 'something else entirely!!\n'.repeat(10_000));
    const body = await withOpened(file, async (opened) => {
      const form = multipartFromFile({ purpose: 'file-extract' }, { name: 'file', file: opened });
      renameSync(other, file);
      return bodyOf(form);
    });
    assert.ok(body.includes('the file that was checked'));
    assert.ok(!body.includes('something else entirely'));
  });

  async function sendChanged(name: string, change: (file: string) => void): Promise<void> {
    const file = path.join(dir, name);
    writeFileSync(file, 'x'.repeat(600 * 1024));
    const opened: OpenedFile = await openFile(file);
    try {
      const form = multipartFromFile({ purpose: 'file-extract' }, { name: 'file', file: opened });
      change(file);
      await bodyOf(form);
    } finally {
      await opened.close();
    }
  }

  it('refuses to send a file that became shorter after it was opened', async () => {
    await assert.rejects(
      sendChanged('shrinking.txt', (f) => truncateSync(f, 100 * 1024)),
      changedWhileSent('shrinking\\.txt'),
    );
  });

  it('refuses to send a file that grew after it was opened (not a body cut at the old size)', async () => {
    await assert.rejects(
      sendChanged('growing.txt', (f) => appendFileSync(f, 'y'.repeat(1024))),
      changedWhileSent('growing\\.txt'),
    );
  });
});
