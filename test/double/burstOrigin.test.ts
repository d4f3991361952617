/**
 * The bench's burst front of the double (test/bench/burstOrigin.ts): the bytes it serves again are
 * the double's own, only the chunking changes.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { BurstOrigin, CHUNK } from '../bench/burstOrigin';
import { DEMO_KEY, GatewayDouble } from '../gateway';

interface Answer {
  status: number;
  contentType: string | undefined;
  body: Buffer;
  /** How many pieces the body arrived in ('data' events: one per HTTP chunk, or per read). */
  pieces: number;
}

function post(url: string, body: string, key = DEMO_KEY): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    };
    const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: res.headers['content-type'],
          body: Buffer.concat(chunks),
          pieces: chunks.length,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('bench: the burst front of the double', () => {
  let gw: GatewayDouble;
  let front: BurstOrigin;

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    front = new BurstOrigin(gw.url);
    await front.start();
  });
  after(async () => {
    await front.stop();
    await gw.stop();
  });

  it('serves the answer it passed on the first time again from memory, the same bytes in fewer, larger pieces', async () => {
    const body = JSON.stringify({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: '[[long:64]] the burst front' }],
    });
    const first = await post(`${front.url}/v1/chat/completions`, body);
    const again = await post(`${front.url}/v1/chat/completions`, body);
    assert.equal(first.status, 200);
    assert.equal(again.status, 200);
    assert.equal(again.contentType, first.contentType);
    assert.ok(first.body.length > 4 * CHUNK, `${first.body.length} bytes`);
    assert.ok(again.body.equals(first.body), 'the same bytes');
    assert.ok(again.pieces <= Math.ceil(again.body.length / 1024), `${again.pieces} pieces`);
    assert.deepEqual(front.counts, { replayed: 1, passed: 1 });
    assert.equal(gw.log.filter((e) => e.path === '/v1/chat/completions').length, 1, 'the double answered once');
  });

  it('passes on, and does not keep, an answer that is not a 200', async () => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hello' }] });
    const refused = await post(`${front.url}/v1/chat/completions`, body, 'sk-not-a-key');
    const again = await post(`${front.url}/v1/chat/completions`, body, 'sk-not-a-key');
    assert.equal(refused.status, 401);
    assert.equal(again.status, 401);
    assert.deepEqual(front.counts, { replayed: 1, passed: 3 });
  });
});
