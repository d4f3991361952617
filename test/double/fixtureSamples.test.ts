/**
 * The generated sample documents (test/fixtures) are what the demo workspace and later the gateway
 * double's text extraction rely on, so their shape is checked here without any PDF tool installed.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import {
  LINES_PER_PAGE,
  PAGE_BREAK,
  SAMPLE_FILES,
  crc32,
  decodeGrayPng,
  describePdf,
  ensureSampleWorkspace,
  extractPdfPages,
  extractPdfText,
  pngBytes,
  renderText,
  sampleFile,
  scannedPdf,
  textPdf,
} from '../fixtures/samples';

/** Every xref entry must point at its object's header and startxref at the table, byte for byte. */
function assertXrefExact(pdf: Buffer): void {
  const s = pdf.toString('latin1');
  const startxref = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(s)?.[1]);
  assert.ok(s.startsWith('xref', startxref), 'startxref points at the xref table');
  const table = /^xref\n0 (\d+)\n/.exec(s.slice(startxref));
  assert.ok(table, 'xref subsection header');
  const count = Number(table[1]);
  const entriesStart = startxref + table[0].length;
  for (let num = 1; num < count; num++) {
    const entry = s.slice(entriesStart + num * 20, entriesStart + (num + 1) * 20);
    assert.match(entry, /^\d{10} 00000 n \n$/, `entry ${num} is 20 bytes`);
    const offset = Number(entry.slice(0, 10));
    assert.ok(s.startsWith(`${num} 0 obj`, offset), `object ${num} is at ${offset}`);
  }
  const size = Number(/\/Size (\d+)/.exec(s.slice(startxref))?.[1]);
  assert.equal(size, count);
}

describe('fixture samples: text PDF', () => {
  it('reads back exactly the lines written, including blank lines, brackets, backslashes and Windows-1252 letters', () => {
    const lines = ['Invoice (draft) \\ copy', '', 'Total: €1.234,50 — café “quoted”', '   indented line', 'last'];
    const pdf = textPdf(lines);
    assert.ok(pdf.subarray(0, 8).toString('latin1').startsWith('%PDF-1.4'));
    assert.equal(extractPdfText(pdf), lines.join('\n'));
    assertXrefExact(pdf);
  });

  it('keeps its content streams readable (uncompressed) and uses real text operators with Helvetica', () => {
    const s = textPdf(['Hello world']).toString('latin1');
    assert.match(s, /\/BaseFont \/Helvetica/);
    assert.match(s, /BT[\s\S]*\(Hello world\) Tj[\s\S]*ET/);
    assert.doesNotMatch(s, /FlateDecode/);
  });

  it('breaks pages at PAGE_BREAK and every LINES_PER_PAGE lines', () => {
    const lines = Array.from({ length: LINES_PER_PAGE + 3 }, (_, i) => `line ${i + 1}`);
    const pdf = textPdf(['cover', PAGE_BREAK, ...lines]);
    const pages = extractPdfPages(pdf);
    assert.deepEqual(pages, [
      'cover',
      lines.slice(0, LINES_PER_PAGE).join('\n'),
      lines.slice(LINES_PER_PAGE).join('\n'),
    ]);
    assert.equal(describePdf(pdf).pages, 3);
    assert.equal(extractPdfText(pdf), pages.join('\f'));
    assertXrefExact(pdf);
  });

  it('reads FlateDecode content streams', () => {
    const lines = ['compressed text', 'second line'];
    const pdf = textPdf(lines, { compress: true, title: 'Flate' });
    assert.match(pdf.toString('latin1'), /\/Filter \/FlateDecode/);
    assert.doesNotMatch(pdf.toString('latin1'), /compressed text/);
    assert.equal(extractPdfText(pdf), lines.join('\n'));
    assertXrefExact(pdf);
  });

  it('reads text placed by other producers: TJ arrays, Tm and Td positioning, hex strings, an indirect /Length', () => {
    const content = [
      'BT /F1 12 Tf 1 0 0 1 72 700 Tm [(Hel) 20 (lo) -300 (world)] TJ ET',
      'BT /F1 12 Tf 72 680 Td <4E657874> Tj ( line) Tj ET',
      "BT 1 0 0 1 72 660 Tm (third) Tj 0 -14 TD (fourth) Tj (fifth) ' ET",
    ].join('\n');
    const data = zlib.deflateSync(Buffer.from(content, 'latin1'));
    const objects = [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [4 0 R] >>',
    ];
    let pdf = '%PDF-1.5\n';
    objects.forEach((body, i) => (pdf += `${i + 1} 0 obj\n${body}\nendobj\n`));
    const head = Buffer.from(pdf + '4 0 obj\n<< /Length 5 0 R /Filter [/FlateDecode] >>\nstream\r\n', 'latin1');
    const tail = Buffer.from(
      `\r\nendstream\nendobj\n5 0 obj\n${data.length}\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n`,
      'latin1',
    );
    assert.equal(extractPdfText(Buffer.concat([head, data, tail])), 'Hello world\nNext line\nthird\nfourth\nfifth');
  });

  it('refuses a file that is not a PDF', () => {
    assert.throws(() => extractPdfText(Buffer.from('hello')), /not a PDF/);
  });
});

describe('fixture samples: scans', () => {
  it('a scanned PDF holds one image per page and no text at all', () => {
    const pdf = scannedPdf('PAGE ONE\fPAGE TWO');
    assert.deepEqual(describePdf(pdf), { pages: 2, images: 2, hasText: false });
    assert.equal(extractPdfText(pdf), PAGE_BREAK);
    const s = pdf.toString('latin1');
    // Only the page content streams are plain text; the image data is binary and may hold any bytes.
    const contents = [...s.matchAll(/<< \/Length (\d+) >>\nstream\n/g)].map((m) =>
      s.substr(m.index + m[0].length, Number(m[1])),
    );
    assert.equal(contents.length, 2);
    for (const content of contents) assert.match(content, /^q\n[\d. ]+ cm\n\/Im1 Do\nQ\n$/);
    assert.ok(!s.includes('/Font') && !s.includes('PAGE ONE'), 'no font and no text in the file');
    assert.match(s, /\/Subtype \/Image \/Width \d+ \/Height \d+ \/ColorSpace \/DeviceGray \/BitsPerComponent 8/);
    assertXrefExact(pdf);
  });

  it('the image stream is the rendered picture, pixel for pixel', () => {
    const pdf = scannedPdf('HELLO');
    const s = pdf.toString('latin1');
    const m = /\/Width (\d+) \/Height (\d+) [^>]*\/Length (\d+) \/Filter \/FlateDecode >>\nstream\n/.exec(s);
    assert.ok(m);
    const start = m.index + m[0].length;
    const pixels = zlib.inflateSync(pdf.subarray(start, start + Number(m[3])));
    assert.equal(pixels.length, Number(m[1]) * Number(m[2]));
    // Ink: the letters are dark, so a clearly black pixel must be there; paper is near white.
    assert.ok(pixels.some((p) => p < 80));
    assert.ok(pixels.filter((p) => p > 200).length > pixels.length * 0.9);
  });

  it('PNGs have valid chunk CRCs and decode to the rendered pixels', () => {
    const image = renderText('Receipt 12.70');
    const png = pngBytes(image);
    const decoded = decodeGrayPng(png);
    assert.equal(decoded.width, image.width);
    assert.equal(decoded.height, image.height);
    assert.deepEqual(Buffer.from(decoded.pixels), Buffer.from(image.pixels));
  });

  it('crc32 matches the standard check value', () => {
    assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  });

  it('renders the same text to the same pixels (regenerated samples are byte-identical)', () => {
    assert.deepEqual(pngBytes(renderText('same')), pngBytes(renderText('same')));
    assert.notDeepEqual(pngBytes(renderText('same')), pngBytes(renderText('different')));
  });
});

describe('fixture samples: the demo workspace', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mg-samples-'));
  });
  afterEach(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('writes every sample, each holding its own text', async () => {
    const { written, kept } = await ensureSampleWorkspace(dir);
    assert.deepEqual(written.sort(), SAMPLE_FILES.map((s) => s.name).sort());
    assert.deepEqual(kept, []);
    const report = sampleFile('quarterly-report.pdf');
    const reportPdf = fs.readFileSync(path.join(dir, report.name));
    assert.equal(extractPdfText(reportPdf), report.text);
    assert.equal(describePdf(reportPdf).pages, 2);
    const letter = fs.readFileSync(path.join(dir, 'scanned-letter.pdf'));
    assert.deepEqual(describePdf(letter), { pages: 1, images: 1, hasText: false });
    const png = decodeGrayPng(fs.readFileSync(path.join(dir, 'scan.png')));
    assert.ok(png.width > 100 && png.height > 100);
    assert.equal(fs.readFileSync(path.join(dir, 'notes.md'), 'utf8'), sampleFile('notes.md').text);
    for (const sample of SAMPLE_FILES) {
      assert.ok(sample.text.includes(sample.marker), `${sample.name}'s text holds its marker`);
      for (const other of SAMPLE_FILES) if (other !== sample) assert.ok(!other.text.includes(sample.marker));
    }
    assert.deepEqual(fs.readdirSync(dir).sort(), SAMPLE_FILES.map((s) => s.name).sort(), 'no partial files left');
  });

  it('regenerates only what is missing and keeps edits', async () => {
    await ensureSampleWorkspace(dir);
    fs.writeFileSync(path.join(dir, 'notes.md'), 'my own notes\n');
    fs.rmSync(path.join(dir, 'scan.png'));
    const { written, kept } = await ensureSampleWorkspace(dir);
    assert.deepEqual(written, ['scan.png']);
    assert.equal(kept.length, SAMPLE_FILES.length - 1);
    assert.equal(fs.readFileSync(path.join(dir, 'notes.md'), 'utf8'), 'my own notes\n');
  });
});
