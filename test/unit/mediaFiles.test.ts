import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isGatewayError } from '../../src/core/errors';
import { decodeBase64, validateImageSize } from '../../src/core/media/images';
import { streamToFileUnique, writeFileUnique } from '../../src/core/outputFiles';
import {
  checkMp4File,
  describeBytes,
  detectImageFormat,
  mediaBaseName,
  readPixelSize,
  slugify,
  timestampForName,
} from '../../src/core/media/mediaFiles';
import { drawImage, materialize, buildMp4 } from '../gateway';

/** A box: 32-bit size, 4-character type, body. */
function box(type: string, ...body: Buffer[]): Buffer {
  const content = Buffer.concat(body);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(content.length + 8, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, content]);
}

const ftyp = box('ftyp', Buffer.from('isom\0\0\x02\0isomavc1', 'latin1'));
const moov = box('moov', box('mvhd', Buffer.alloc(100)), box('trak', box('tkhd', Buffer.alloc(84))));
const mdat = box('mdat', Buffer.alloc(2048, 7));

async function* chunksOf(...parts: Buffer[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield p;
}

describe('media files: names, atomic unique writes, formats and the MP4 check', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'media-files-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('names', () => {
    it('names files from the date, a slug of the prompt and an index', () => {
      const date = new Date(2026, 8, 21, 14, 30, 5);
      assert.equal(timestampForName(date), '20260921-143005');
      assert.equal(
        mediaBaseName('A red fox, in the SNOW!', 2, date, 'image'),
        '20260921-143005-a-red-fox-in-the-snow-2',
      );
    });

    it('keeps letters of any script, drops accents and marks, cuts long prompts at a word', () => {
      assert.equal(slugify('Crème brûlée à la mode'), 'creme-brulee-a-la-mode');
      assert.equal(slugify('一只猫在草地上奔跑'), '一只猫在草地上奔跑');
      assert.equal(slugify('[[slow:200]] ../../etc/passwd'), 'slow-200-etc-passwd');
      const long = slugify('one two three four five six seven eight nine ten eleven twelve', 20);
      assert.ok(long.length <= 20 && !long.endsWith('-'), long);
      assert.equal(slugify('!!!', 40, 'video'), 'video');
    });
  });

  describe('writing', () => {
    it('writes under a unique name and never overwrites an existing file', async () => {
      const first = await writeFileUnique(dir, 'pic-1', 'png', Buffer.from('first'));
      const second = await writeFileUnique(dir, 'pic-1', 'png', Buffer.from('second'));
      writeFileSync(path.join(dir, 'pic-1_3.png'), 'someone else');
      const third = await writeFileUnique(dir, 'pic-1', 'png', Buffer.from('third'));
      assert.deepEqual(
        [first, second, third].map((p) => path.basename(p)),
        ['pic-1.png', 'pic-1_2.png', 'pic-1_4.png'],
      );
      assert.equal(readFileSync(first, 'utf8'), 'first');
      assert.equal(
        readFileSync(path.join(dir, 'pic-1_3.png'), 'utf8'),
        'someone else',
        'an existing file is untouched',
      );
      assert.deepEqual(
        readdirSync(dir).filter((f) => f.startsWith('.')),
        [],
        'no temporary file is left',
      );
    });

    it('gives concurrent writers of the same name different files', async () => {
      const paths = await Promise.all(
        Array.from({ length: 8 }, (_, i) => writeFileUnique(dir, 'same', 'png', Buffer.from(String(i)))),
      );
      assert.equal(new Set(paths).size, 8);
      const contents = paths.map((p) => readFileSync(p, 'utf8')).sort();
      assert.deepEqual(contents, ['0', '1', '2', '3', '4', '5', '6', '7']);
    });

    it('creates the folder, and leaves nothing behind when the stream fails or the check refuses', async () => {
      const nested = path.join(dir, 'generated', 'videos');
      async function* broken(): AsyncGenerator<Uint8Array> {
        yield Buffer.from('part');
        throw new Error('connection reset');
      }
      await assert.rejects(streamToFileUnique(nested, 'v-1', 'mp4', broken()), /connection reset/);
      assert.deepEqual(readdirSync(nested), [], 'no partial file and no temp file');
      await assert.rejects(
        streamToFileUnique(nested, 'v-1', 'mp4', chunksOf(Buffer.from('<html>')), {
          verify: async () => {
            throw new Error('not playable');
          },
        }),
        /not playable/,
      );
      assert.deepEqual(readdirSync(nested), []);
      const ok = await streamToFileUnique(nested, 'v-1', 'mp4', chunksOf(ftyp, moov, mdat));
      assert.equal(path.basename(ok), 'v-1.mp4');
      assert.deepEqual(readdirSync(nested), ['v-1.mp4']);
    });

    it('writes a long stream in order, whatever arrives while a write is in flight, and counts every byte', async () => {
      // 40 MiB in chunks of varying size, some arriving at once and some after a pause: the writes
      // are batched (and flushed in the background every 16 MiB) but must keep the order.
      const expected: Buffer[] = [];
      async function* varied(): AsyncGenerator<Uint8Array> {
        for (let i = 0, size = 0; size < 40 * 1024 * 1024; i++) {
          const chunk = Buffer.alloc(1 + ((i * 7919) % (256 * 1024)), i % 251);
          expected.push(chunk);
          size += chunk.length;
          if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
          yield chunk;
        }
      }
      const seen: number[] = [];
      const file = await streamToFileUnique(dir, 'long', 'bin', varied(), { onBytes: (total) => seen.push(total) });
      const written = readFileSync(file);
      const whole = Buffer.concat(expected);
      assert.equal(written.length, whole.length);
      assert.ok(written.equals(whole), 'the bytes are the stream, in order');
      assert.equal(seen.at(-1), whole.length);
      rmSync(file);
    });

    it('is atomic: the final name appears only with the complete content', async () => {
      const seen: string[][] = [];
      async function* slow(): AsyncGenerator<Uint8Array> {
        for (let i = 0; i < 5; i++) {
          seen.push(readdirSync(dir).filter((f) => !f.startsWith('.')));
          yield Buffer.alloc(1000, i);
        }
      }
      const file = await streamToFileUnique(dir, 'atomic', 'bin', slow());
      assert.ok(
        seen.every((names) => names.length === 0),
        'nothing under a final name while writing',
      );
      assert.equal(readFileSync(file).length, 5000);
    });
  });

  describe('formats', () => {
    it('detects PNG, JPEG and WebP from the bytes, whatever the name says', () => {
      assert.equal(detectImageFormat(drawImage('fox', 64, 48, 'png')), 'png');
      assert.equal(detectImageFormat(drawImage('fox', 64, 48, 'jpeg')), 'jpeg');
      assert.equal(detectImageFormat(drawImage('fox', 64, 48, 'webp')), 'webp');
      assert.equal(detectImageFormat(Buffer.from('<html><body>error</body></html>')), undefined);
      assert.equal(detectImageFormat(Buffer.from('GIF89a......')), undefined);
      assert.equal(detectImageFormat(Buffer.alloc(0)), undefined);
    });

    it('describes what arrived instead', () => {
      assert.match(
        describeBytes(Buffer.from('<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head></html>')),
        /HTML page .*"502 Bad Gateway"/,
      );
      assert.match(
        describeBytes(
          Buffer.from(
            '<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Request has expired.</Message></Error>',
          ),
        ),
        /XML document .*AccessDenied: Request has expired\./,
      );
      assert.match(describeBytes(Buffer.from('{"error":{"message":"nope"}}')), /JSON body .*"nope"/);
      assert.match(
        describeBytes(Buffer.from([0, 1, 2, 3, 250, 251])),
        /binary data \(6 B\) starting with 00 01 02 03 fa fb/,
      );
      assert.equal(describeBytes(Buffer.alloc(0)), 'an empty body');
    });

    it('decodes Base64, standard, URL-safe or as a data URL, and refuses what is not', () => {
      const png = drawImage('x', 16, 16, 'png');
      assert.deepEqual(decodeBase64(png.toString('base64'), 'x'), png);
      assert.deepEqual(decodeBase64(png.toString('base64url'), 'x'), png);
      assert.deepEqual(decodeBase64(`data:image/png;base64,${png.toString('base64')}`, 'x'), png);
      assert.throws(
        () => decodeBase64('not base64 at all!', 'The image'),
        (e: unknown) => isGatewayError(e, 'protocol') && /not valid Base64/.test(e.message),
      );
      assert.throws(() => decodeBase64('', 'The image'), /not valid Base64/);
    });

    it('validates image sizes and sends them as <width>x<height>', () => {
      assert.equal(validateImageSize(' 1024x1536 '), '1024x1536');
      assert.equal(validateImageSize('1024*1024'), '1024x1024');
      assert.equal(validateImageSize('1024 × 1024'), '1024x1024');
      assert.throws(() => validateImageSize('auto-ish'), /not a width and a height/);
      assert.throws(() => validateImageSize('0x100'), /out of range/);
    });
  });

  describe('the real pixel size of a saved file', () => {
    const write = (name: string, data: Buffer) => {
      const file = path.join(dir, name);
      writeFileSync(file, data);
      return file;
    };
    /** A track header (version 0 or 1) with a 16.16 width and height, as ISO/IEC 14496-12 lays it out. */
    const tkhd = (version: 0 | 1, width: number, height: number) => {
      const times = Buffer.alloc(version === 1 ? 32 : 20);
      const dims = Buffer.alloc(8);
      dims.writeUInt32BE(width * 65536, 0);
      dims.writeUInt32BE(height * 65536, 4);
      return box('tkhd', Buffer.from([version, 0, 0, 3]), times, Buffer.alloc(52), dims);
    };

    it('reads PNG, JPEG and WebP images from their headers, whatever size was asked for', async () => {
      for (const format of ['png', 'jpeg', 'webp'] as const) {
        const file = write(`small.${format}`, drawImage('fox', 48, 36, format));
        assert.deepEqual(await readPixelSize(file, 'image'), { width: 48, height: 36 }, format);
      }
      // GIF: logical screen width and height, little-endian, right after the signature.
      const gif = Buffer.concat([
        Buffer.from('GIF89a', 'latin1'),
        Buffer.from([0x40, 0x01, 0xf0, 0x00]),
        Buffer.alloc(8),
      ]);
      assert.deepEqual(await readPixelSize(write('a.gif', gif), 'image'), { width: 320, height: 240 });
    });

    it('reads an MP4 from its first visual track header (tkhd, version 0 or 1), wherever the movie box sits', async () => {
      const real = materialize(buildMp4({ seedText: 'fox', width: 832, height: 480, durationSec: 1 }));
      assert.deepEqual(await readPixelSize(write('real.mp4', real), 'video'), { width: 832, height: 480 });
      const audio = box('trak', tkhd(0, 0, 0));
      const v1 = Buffer.concat([
        ftyp,
        mdat,
        box('moov', box('mvhd', Buffer.alloc(100)), audio, box('trak', tkhd(1, 1280, 720))),
      ]);
      assert.deepEqual(
        await readPixelSize(write('v1.mp4', v1), 'video'),
        { width: 1280, height: 720 },
        'the audio track (0 × 0) is passed over; moov after mdat is found',
      );
    });

    it('says nothing rather than guess: no header size, an audio-only MP4, a missing file', async () => {
      assert.equal(
        await readPixelSize(
          write('audio.mp4', Buffer.concat([ftyp, box('moov', box('trak', tkhd(0, 0, 0))), mdat])),
          'video',
        ),
        undefined,
      );
      assert.equal(await readPixelSize(write('page.png', Buffer.from('<html>expired</html>')), 'image'), undefined);
      assert.equal(await readPixelSize(write('empty.mp4', Buffer.alloc(0)), 'video'), undefined);
      assert.equal(await readPixelSize(path.join(dir, 'gone.png'), 'image'), undefined);
    });
  });

  describe('the MP4 check', () => {
    const write = (name: string, data: Buffer) => {
      const file = path.join(dir, name);
      writeFileSync(file, data);
      return file;
    };

    it('accepts an MP4 with ftyp, moov (with a track) and media data, in either order', async () => {
      assert.deepEqual(await checkMp4File(write('a.mp4', Buffer.concat([ftyp, moov, mdat]))), {
        ok: true,
        boxes: ['ftyp', 'moov', 'mdat'],
        size: ftyp.length + moov.length + mdat.length,
      });
      assert.equal((await checkMp4File(write('b.mp4', Buffer.concat([ftyp, mdat, moov])))).ok, true);
      const real = materialize(buildMp4({ seedText: 'fox', width: 832, height: 480, durationSec: 1 }));
      const check = await checkMp4File(write('real.mp4', real));
      assert.equal(check.ok, true, check.reason);
    });

    it('accepts 64-bit box sizes and a last box that runs to the end of the file', async () => {
      const large = Buffer.alloc(16 + 100, 1);
      large.writeUInt32BE(1, 0);
      large.write('mdat', 4, 'latin1');
      large.writeBigUInt64BE(BigInt(large.length), 8);
      assert.equal((await checkMp4File(write('large.mp4', Buffer.concat([ftyp, moov, large])))).ok, true);
      const toEnd = Buffer.concat([Buffer.from([0, 0, 0, 0]), Buffer.from('mdat', 'latin1'), Buffer.alloc(50)]);
      assert.equal((await checkMp4File(write('toend.mp4', Buffer.concat([ftyp, moov, toEnd])))).ok, true);
    });

    it('refuses an HTML error page, an XML error and JSON, saying what they were', async () => {
      const html = await checkMp4File(
        write(
          'h.mp4',
          Buffer.from('<!DOCTYPE html><html><head><title>Link expired</title></head><body>expired</body></html>'),
        ),
      );
      assert.equal(html.ok, false);
      assert.match(html.reason ?? '', /not an MP4 video: the download was an HTML page .*"Link expired"/);
      const xml = await checkMp4File(
        write(
          'x.mp4',
          Buffer.from(
            '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired.</Message></Error>',
          ),
        ),
      );
      assert.match(xml.reason ?? '', /XML document .*AccessDenied/);
      const json = await checkMp4File(
        write('j.mp4', Buffer.from('{"code":"task_not_exist","message":"task_not_exist"}')),
      );
      assert.match(json.reason ?? '', /JSON body/);
      assert.match((await checkMp4File(write('e.mp4', Buffer.alloc(0)))).reason ?? '', /empty body/);
    });

    it('refuses a truncated file, one without moov, without media data or without tracks', async () => {
      const all = Buffer.concat([ftyp, moov, mdat]);
      const cut = await checkMp4File(write('cut.mp4', all.subarray(0, all.length - 100)));
      assert.match(cut.reason ?? '', /cut off: the "mdat" box needs/);
      const noMoov = await checkMp4File(
        write(
          'nomoov.mp4',
          materialize(buildMp4({ seedText: 'fox', width: 832, height: 480, durationSec: 1, withoutMoov: true })),
        ),
      );
      assert.match(noMoov.reason ?? '', /no "moov" box/);
      assert.match(
        (await checkMp4File(write('nodata.mp4', Buffer.concat([ftyp, moov, box('mdat')])))).reason ?? '',
        /no media data/,
      );
      assert.match(
        (
          await checkMp4File(
            write('notrak.mp4', Buffer.concat([ftyp, box('moov', box('mvhd', Buffer.alloc(100))), mdat])),
          )
        ).reason ?? '',
        /no tracks/,
      );
      assert.match(
        (await checkMp4File(write('stray.mp4', Buffer.concat([ftyp, moov, mdat, Buffer.from([1, 2, 3])])))).reason ??
          '',
        /cut off: 3 stray bytes/,
      );
    });
  });
});
