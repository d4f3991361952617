/**
 * A small multipart/form-data parser (RFC 7578) that takes the body in chunks of any size: a
 * delimiter or a header block split across chunks is found all the same, and part data is handed
 * on as it is recognised, with only a delimiter's length of bytes held back. No dependency.
 */

export interface FormPart {
  name: string;
  /** Present on file parts, even when empty (`filename=""`). */
  filename?: string;
  contentType?: string;
  data: Buffer;
}

export class MultipartError extends Error {}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADER_BYTES = 16 * 1024;
const MAX_PARTS = 100;

/** The boundary of a `multipart/form-data` Content-Type, or undefined for anything else. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType || !/^\s*multipart\/form-data\s*(;|$)/i.test(contentType)) return undefined;
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  return boundary && boundary.length <= 70 ? boundary : undefined;
}

type State = 'preamble' | 'afterDelimiter' | 'headers' | 'data' | 'done';

export class MultipartParser {
  /** `\r\n--boundary`; the first one may also open the body without its CRLF (see `opening`). */
  private readonly delimiter: Buffer;
  private state: State = 'preamble';
  /** Nothing consumed yet: the body may start with `--boundary` itself. */
  private opening = true;
  private pending: Buffer = Buffer.alloc(0);
  private current?: { name: string; filename?: string; contentType?: string; chunks: Buffer[] };
  readonly parts: FormPart[] = [];

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  write(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    this.run();
  }

  /** The parts, once the closing delimiter has been seen; throws for a truncated body. */
  end(): FormPart[] {
    if (this.state !== 'done') throw new MultipartError('multipart body ends before its closing boundary');
    return this.parts;
  }

  private run(): void {
    while (this.step()) {
      // each step consumes input or changes state
    }
  }

  /** One step of the state machine; false when it needs more input. */
  private step(): boolean {
    const buf = this.pending;
    switch (this.state) {
      case 'preamble': {
        if (this.opening) {
          // Checked in place rather than by putting a CRLF in front of the body, which would copy all of it.
          const open = this.delimiter.subarray(CRLF.length);
          if (buf.length < open.length && open.subarray(0, buf.length).equals(buf)) return false;
          this.opening = false;
          if (buf.subarray(0, open.length).equals(open)) {
            this.pending = buf.subarray(open.length);
            this.state = 'afterDelimiter';
            return true;
          }
        }
        const at = buf.indexOf(this.delimiter);
        if (at < 0) {
          this.keepTail(this.delimiter.length - 1);
          return false;
        }
        this.pending = buf.subarray(at + this.delimiter.length);
        this.state = 'afterDelimiter';
        return true;
      }
      case 'afterDelimiter': {
        // `--` closes the body; otherwise optional transport padding, then CRLF and the part headers.
        if (buf.length < 2) return false;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          this.state = 'done';
          this.pending = Buffer.alloc(0);
          return true;
        }
        const eol = buf.indexOf(CRLF);
        if (eol < 0) {
          if (buf.length > 256) throw new MultipartError('malformed boundary line');
          return false;
        }
        if (buf.subarray(0, eol).toString('latin1').trim() !== '') throw new MultipartError('malformed boundary line');
        this.pending = buf.subarray(eol + 2);
        this.state = 'headers';
        return true;
      }
      case 'headers': {
        // A form-data part must have headers (Content-Disposition), so a blank line right away is an error.
        if (buf.length >= 2 && buf[0] === 0x0d && buf[1] === 0x0a) throw new MultipartError('part without headers');
        const end = buf.indexOf(HEADER_END);
        if (end < 0) {
          if (buf.length > MAX_HEADER_BYTES) throw new MultipartError('part headers too long');
          return false;
        }
        this.pending = buf.subarray(end + 4);
        this.startPart(buf.subarray(0, end).toString('utf8'));
        this.state = 'data';
        return true;
      }
      case 'data': {
        const at = buf.indexOf(this.delimiter);
        if (at < 0) {
          // Everything but a possible delimiter prefix at the end is data.
          const keep = Math.min(buf.length, this.delimiter.length - 1);
          if (buf.length > keep) this.current?.chunks.push(buf.subarray(0, buf.length - keep));
          this.pending = buf.subarray(buf.length - keep);
          return false;
        }
        this.current?.chunks.push(buf.subarray(0, at));
        this.finishPart();
        this.pending = buf.subarray(at + this.delimiter.length);
        this.state = 'afterDelimiter';
        return true;
      }
      case 'done':
        this.pending = Buffer.alloc(0); // the epilogue is ignored
        return false;
    }
  }

  private keepTail(n: number): void {
    if (this.pending.length > n) this.pending = this.pending.subarray(this.pending.length - n);
  }

  private startPart(headerText: string): void {
    if (this.parts.length >= MAX_PARTS) throw new MultipartError(`more than ${MAX_PARTS} parts`);
    const headers = new Map<string, string>();
    for (const line of headerText.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) throw new MultipartError(`malformed part header: ${line.slice(0, 80)}`);
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const disposition = headers.get('content-disposition');
    if (!disposition || !/^form-data\b/i.test(disposition))
      throw new MultipartError('part without Content-Disposition: form-data');
    const name = param(disposition, 'name');
    if (name === undefined) throw new MultipartError('part without a name');
    const filename = extendedParam(disposition, 'filename') ?? param(disposition, 'filename');
    const contentType = headers.get('content-type');
    this.current = {
      name,
      ...(filename === undefined ? {} : { filename }),
      ...(contentType === undefined ? {} : { contentType }),
      chunks: [],
    };
  }

  private finishPart(): void {
    if (!this.current) return;
    const { chunks, ...rest } = this.current;
    // A part that arrived in one piece is a view of the body, not a copy (a 20 MiB upload is one piece).
    this.parts.push({ ...rest, data: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) });
    this.current = undefined;
  }
}

/** `name="value"` (browsers and undici escape `"` as %22 and line breaks as %0A/%0D) or a bare token. */
function param(header: string, key: string): string | undefined {
  const m = new RegExp(`;\\s*${key}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'i').exec(header);
  if (!m) return undefined;
  if (m[1] !== undefined)
    return m[1].replace(/\\(.)/g, '$1').replace(/%22/g, '"').replace(/%0A/gi, '\n').replace(/%0D/gi, '\r');
  return m[2];
}

/** RFC 5987 `filename*=UTF-8''…`, which wins over the plain form when both are sent. */
function extendedParam(header: string, key: string): string | undefined {
  const m = new RegExp(`;\\s*${key}\\*=([\\w!#$&+.^\`|~-]+)'[^']*'([^;\\s]*)`, 'i').exec(header);
  if (!m) return undefined;
  const bytes: number[] = [];
  const text = m[2] ?? '';
  for (let i = 0; i < text.length; i++) {
    const hex = text[i] === '%' ? /^[0-9a-f]{2}$/i.exec(text.slice(i + 1, i + 3)) : null;
    if (hex) {
      bytes.push(parseInt(hex[0], 16));
      i += 2;
    } else bytes.push(text.charCodeAt(i) & 0xff);
  }
  return Buffer.from(bytes).toString(/utf-?8/i.test(m[1] ?? '') ? 'utf8' : 'latin1');
}

/** Parses a whole body; `chunkSize` feeds it in pieces (tests use it to prove splits do not matter). */
export function parseMultipart(body: Buffer, boundary: string, chunkSize = body.length || 1): FormPart[] {
  const parser = new MultipartParser(boundary);
  for (let at = 0; at < body.length; at += chunkSize) parser.write(body.subarray(at, at + chunkSize));
  return parser.end();
}
