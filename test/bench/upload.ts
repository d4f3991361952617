/**
 * Row 7: a 20 MiB PDF (just under the first provider's limit, counting the multipart form) sent to
 * the double's synchronous parser by our `parsePdf` (streamed from disk as multipart) in a child
 * process, against `curl -F` to the same endpoint. Runs alternate; medians. Each child warms up first
 * (see transferChild.ts for how and why).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Endpoints } from '../../src/core/config';
import { UPLOAD_LIMIT_BYTES } from '../../src/core/tools/glm';
import { multipartFromFile } from '../../src/core/tools/multipart';
import { resultLink, WARM_UP_MB } from './download';
import { alternate, bytes, max, mbps, median, ratio, runJsonChild, runProcess, type BenchContext, type Row } from './lib';
import type { GatewayInfo } from './streams';

interface TransferResult {
  ms: number;
  rssGrowth: number;
  sampledGrowth: number;
  baseRss: number;
  bytes: number;
  peakReset: boolean;
}

/**
 * A valid one-page PDF whose bulk is an image stream of random (incompressible) bytes, as in a
 * scanned or photo-heavy document; `size` is the exact file size.
 */
export function imagePdf(size: number, title: string): Buffer {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let length = 0;
  const push = (b: Buffer) => {
    parts.push(b);
    length += b.length;
  };
  const object = (num: number, body: Buffer | string) => {
    offsets[num] = length;
    push(Buffer.from(`${num} 0 obj\n`, 'latin1'));
    push(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
    push(Buffer.from('\nendobj\n', 'latin1'));
  };
  const stream = (dict: string, data: Buffer) => Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);
  const build = (imageBytes: number): Buffer => {
    parts.length = 0;
    offsets.length = 0;
    length = 0;
    push(Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1'));
    object(1, '<< /Type /Catalog /Pages 2 0 R >>');
    object(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
    object(3, '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> /XObject << /Im1 6 0 R >> >> /Contents 5 0 R >>');
    object(4, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
    object(5, stream('', Buffer.from(`BT /F1 11 Tf 56 770 Td (${title}) Tj ET\nq 480 0 0 360 56 360 cm /Im1 Do Q\n`, 'latin1')));
    object(6, stream('/Type /XObject /Subtype /Image /Width 4000 /Height 3000 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode', randomBytes(imageBytes)));
    const xref = length;
    const rows = offsets.slice(1).map((o) => `${String(o).padStart(10, '0')} 00000 n \n`);
    push(Buffer.from(`xref\n0 ${offsets.length}\n0000000000 65535 f \n${rows.join('')}trailer\n<< /Size ${offsets.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`, 'latin1'));
    return Buffer.concat(parts);
  };
  // The overhead does not depend on the image size except through the digits of two numbers.
  const overhead = build(16).length - 16;
  let pdf = build(size - overhead);
  if (pdf.length !== size) pdf = build(size - overhead - (pdf.length - size));
  return pdf;
}

export async function uploadRows(ctx: BenchContext, gw: GatewayInfo): Promise<Row[]> {
  // Single requests swing from 0.5× to 2× their median either way, ours and curl's alike (the
  // transfer shares two busy cores with the double, which then parses the file): fifteen rounds of
  // each keep the ratio of the medians steady where nine still ranged from 0.77× to 1.3×.
  const runs = ctx.quick ? 3 : 15;
  const file = path.join(ctx.work, 'upload.pdf');
  const small = path.join(ctx.work, 'warmup.pdf');
  fs.writeFileSync(small, imagePdf(64 * 1024, 'Warm-up'));
  // Size the file so that our whole form is 4 KiB under the limit (curl's form is a little larger).
  fs.writeFileSync(file, imagePdf(1024, 'probe'));
  const probe = await multipartFromFile({ tool_type: 'prime-sync', file_type: 'PDF' }, { name: 'file', path: file, contentType: 'application/pdf' });
  const overhead = probe.length - probe.fileBytes;
  const size = UPLOAD_LIMIT_BYTES - overhead - 4096;
  fs.writeFileSync(file, imagePdf(size, 'Benchmark upload'));
  const url = new Endpoints(gw.url).glm('files/parser/sync');
  const warmUp = await resultLink(gw, WARM_UP_MB);
  ctx.log(`upload: ${bytes(size)} PDF, ${runs} rounds of ours and curl`);

  const ours: TransferResult[] = [];
  const curl: number[] = [];
  await alternate(runs, {
    ours: async () => {
      const r = await runJsonChild<TransferResult>('transferChild.ts', ['upload', gw.url, gw.key, file, small, warmUp], 300_000);
      ours.push(r);
      return r.ms;
    },
    curl: async () => {
      const out = path.join(ctx.work, 'curl-upload.json');
      const r = await runProcess(
        'curl',
        ['-sS', '-o', out, '-w', '%{time_total} %{http_code} %{size_upload}', '-H', `Authorization: Bearer ${gw.key}`, '-F', `file=@${file};type=application/pdf`, '-F', 'tool_type=prime-sync', '-F', 'file_type=PDF', url],
        { timeoutMs: 300_000 },
      );
      const [seconds, code] = r.stdout.trim().split(' ');
      const body = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
      if (r.code !== 0 || code !== '200' || !body.includes('"succeeded"')) throw new Error(`curl upload failed: exit ${r.code}, HTTP ${code}: ${r.stderr}${body.slice(0, 300)}`);
      const ms = Number(seconds) * 1000;
      curl.push(ms);
      return ms;
    },
  });
  const oursMs = median(ours.map((r) => r.ms));
  const curlMs = median(curl);
  const oursRate = (size / oursMs) * 1000;
  const curlRate = (size / curlMs) * 1000;
  const growth = median(ours.map((r) => r.rssGrowth));
  const growthMax = max(ours.map((r) => r.rssGrowth));
  return [
    {
      id: '7',
      what: `Upload: ${bytes(size)} PDF to the parser, throughput vs curl -F`,
      ours: mbps(oursRate),
      reference: mbps(curlRate),
      ratio: ratio(oursRate / curlRate),
      goal: '≥ 0.8× curl',
      pass: oursRate / curlRate >= 0.8,
      note: `median request time ours ${oursMs.toFixed(0)} ms, curl ${curlMs.toFixed(0)} ms (time_total), ${runs} alternating rounds; includes the double parsing the file`,
      data: { size, ours, curlMs: curl },
    },
    {
      id: '7',
      what: 'Upload: peak RSS growth of the sending process',
      ours: bytes(growth),
      reference: bytes(size),
      ratio: ratio(growth / size),
      goal: '≤ 0.5× file',
      pass: growth / size <= 0.5,
      note: `median of ${runs} (max ${bytes(growthMax)}); peak RSS (VmHWM, reset after the warm-up: a small upload, then 10 MB of responses read, see transferChild.ts) minus RSS before the upload${ours.every((r) => r.peakReset) ? '' : ' — peak could not be reset: sampled every 5 ms instead'}`,
    },
  ];
}
