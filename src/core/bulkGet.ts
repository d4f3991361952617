import * as l10n from '@vscode/l10n';
import { isIP } from 'node:net';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { GatewayError } from './errors';
import type { Trust } from './tls';

/**
 * A GET whose body is read from the socket straight into a few large buffers that are used over and
 * over: for big downloads (a generated video) over a direct connection.
 *
 * Why not the HTTP client's undici: every socket read there lands in a fresh 64 KiB buffer, which
 * then goes through the HTTP parser and a stream. On a 2-core machine a 100 MB body read that way
 * and dropped came in at 0.35–0.47× the speed of `curl -o` from the same server, the socket alone
 * (read into fresh buffers, no parser) at 0.6×, and the socket read into one reused buffer (Node's
 * `onread` option, also for TLS since Node 15) at curl's speed. The file writer hands each chunk
 * back once it is on disk (`recycle`), so the whole download lives in a few megabytes.
 *
 * HTTP/1.1 only, one request per connection (`Connection: close`), no redirects, no content coding
 * (none is asked for): what a result link needs. Proxied requests stay with undici's ProxyAgent.
 */

export interface BulkRequest {
  url: URL;
  /** Lower-case names; Host and Connection are set here. */
  headers: Record<string, string>;
  trust: Trust;
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
  signal?: AbortSignal;
}

/** Chunks that stay valid until they are handed back with `recycle` (or forever, if never). */
export interface RecyclingChunks extends AsyncIterable<Uint8Array> {
  /** The chunk's bytes may now be overwritten with later data of the same body. */
  recycle(chunk: Uint8Array): void;
}

export interface BulkResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The body, once; leaving the loop early closes the connection. */
  chunks: RecyclingChunks;
  /** Closes the connection; the body is not read further. */
  abort(): void;
}

/**
 * Errors carry the codes undici gives the same failures, so that the HTTP client's one mapping of
 * transport errors to GatewayErrors serves both.
 */
function transportError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** What undici and fetch reject with when the caller's signal aborts. */
function abortError(): Error {
  return Object.assign(new Error('The request was aborted.'), { name: 'AbortError' });
}

/** Bytes per buffer: many socket reads fill one, and the disk gets it in one write. */
export const BULK_BUFFER = 1024 * 1024;
/** A read into less room than this is not worth a system call: the buffer is handed on first. */
const MIN_READ = 64 * 1024;
/** Chunks read ahead of the consumer before the socket is paused. */
const READ_AHEAD = 2;
/**
 * Buffers in use while the consumer gives them back: one being read into while the other is being
 * written out. Reading waits for one to come back; a consumer that asks for more while holding them
 * all (it keeps its chunks) gets a new one instead.
 */
const RECYCLED_BUFFERS = 2;
/** A buffer not yet full is handed on after this long, so a slow link still shows progress. */
const FLUSH_MS = 50;
const MAX_HEAD = 64 * 1024;

interface Slot {
  buffer: Buffer;
  /** Pieces handed out and not yet recycled. */
  out: number;
  /** No longer the buffer being read into. */
  retired: boolean;
}

type Framing = { kind: 'length'; remaining: number } | { kind: 'close' } | { kind: 'chunked'; state: ChunkedState };

interface ChunkedState {
  phase: 'size' | 'ext' | 'sizeLf' | 'data' | 'dataCr' | 'dataLf' | 'trailer' | 'trailerLf' | 'trailerLine';
  size: number;
  digits: number;
  remaining: number;
}

/** Sends the request and resolves with the status and headers; the body follows through `chunks`. */
export function bulkGet(req: BulkRequest): Promise<BulkResponse> {
  return new Promise<BulkResponse>((resolve, reject) => {
    if (req.signal?.aborted) return reject(abortError());
    const { url } = req;
    // Built first: a header that cannot be sent is refused before anything is connected.
    const request = requestHead(url, req.headers);
    const secure = url.protocol === 'https:';
    const port = Number(url.port) || (secure ? 443 : 80);
    const host = url.hostname.replace(/^\[|\]$/g, '');

    /** Every buffer of this body, by its memory: a recycled chunk finds its buffer here. */
    const slots = new Map<ArrayBufferLike, Slot>();
    const free: Slot[] = [];
    /** A buffer to read into: a free one, a new one while there are fewer than RECYCLED_BUFFERS (or when `force`d), or none. */
    const takeSlot = (force = false): Slot | undefined => {
      let slot = free.pop();
      if (!slot && (force || slots.size < RECYCLED_BUFFERS)) {
        slot = { buffer: Buffer.allocUnsafe(BULK_BUFFER), out: 0, retired: false };
        slots.set(slot.buffer.buffer, slot);
      }
      if (slot) slot.retired = false;
      return slot;
    };
    /** Makes `slot` the buffer read into, after waiting for one, and reads on. */
    const readInto = (slot: Slot) => {
      current = slot;
      start = end = 0;
      waitingForSlot = false;
      resumeIfRoom();
    };
    let current = takeSlot() as Slot;
    /** Start of the bytes of `current` not yet handed on (body bytes only), and their end. */
    let start = 0;
    let end = 0;
    /** `current` is full and every buffer is out: reading waits for a chunk to come back. */
    let waitingForSlot = false;
    /**
     * Where the socket reads while no buffer has room. Node asks for the next read's memory right
     * after each read, also when reading is about to stop; the read after a resume lands here and is
     * copied into the buffer that came back meanwhile.
     */
    let spare: Buffer | undefined;
    let intoSpare = false;
    let head: { status: number; headers: Record<string, string> } | undefined;
    let framing: Framing | undefined;
    let bodyDone = false;
    let failure: Error | undefined;
    const ready: Uint8Array[] = [];
    let wake: (() => void) | undefined;
    let paused = false;
    let flushTimer: NodeJS.Timeout | undefined;
    let phaseTimer: NodeJS.Timeout | undefined;
    let settled = false;

    const notify = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };

    const fail = (err: Error) => {
      if (failure || bodyDone) return;
      failure = err;
      clearTimeout(phaseTimer);
      clearTimeout(flushTimer);
      socket.destroy();
      if (!settled) {
        settled = true;
        reject(err);
      }
      notify();
    };

    /** Hands on the body bytes read since the last hand-over; takes a fresh buffer when this one is (nearly) full. */
    const handOn = () => {
      clearTimeout(flushTimer);
      flushTimer = undefined;
      if (end > start) {
        ready.push(current.buffer.subarray(start, end));
        current.out++;
        start = end;
      }
      if (current.buffer.length - end < MIN_READ && !bodyDone && !waitingForSlot) {
        current.retired = true;
        if (current.out === 0) free.push(current);
        const next = takeSlot();
        if (next) {
          current = next;
          start = end = 0;
        } else {
          waitingForSlot = true;
          if (!paused) pause();
        }
      }
      if (ready.length >= READ_AHEAD && !paused && !bodyDone) pause();
      notify();
    };

    const pause = () => {
      paused = true;
      socket.setTimeout(0); // waiting for the consumer is not the server's silence
      socket.pause(); // with `onread`, this stops reading at once
    };

    const resumeIfRoom = () => {
      if (paused && !waitingForSlot && ready.length < READ_AHEAD && !failure && !bodyDone) {
        paused = false;
        socket.setTimeout(req.idleMs);
        socket.resume();
      }
    };

    const finishBody = () => {
      bodyDone = true;
      clearTimeout(flushTimer);
      if (end > start) {
        ready.push(current.buffer.subarray(start, end));
        current.out++;
        start = end;
      }
      socket.destroy();
      notify();
    };

    /** Body bytes at [from, to) of `current`, as read: unframed in place, ending at `end`. */
    const takeBody = (from: number, to: number) => {
      if (!framing) return;
      if (framing.kind === 'close') {
        end = to;
      } else if (framing.kind === 'length') {
        const take = Math.min(framing.remaining, to - from);
        framing.remaining -= take;
        end = from + take;
        if (framing.remaining === 0) return finishBody();
      } else {
        const result = unchunk(current.buffer, from, to, framing.state);
        if (result.error) return fail(new GatewayError('protocol', l10n.t('{0} sent a malformed chunked body ({1}).', url.host, result.error)));
        end = result.end;
        if (result.done) return finishBody();
      }
      if (current.buffer.length - end < MIN_READ) handOn();
      else if (end > start && !flushTimer) flushTimer = setTimeout(handOn, FLUSH_MS);
    };

    /** Response head bytes at [start, end); once complete, the body bytes after it. */
    const takeHead = () => {
      for (;;) {
        const bytes = current.buffer.subarray(start, end);
        const at = bytes.indexOf('\r\n\r\n');
        if (at < 0 ? bytes.length > MAX_HEAD : at > MAX_HEAD) {
          return fail(new GatewayError('protocol', l10n.t('{0} sent response headers longer than {1} bytes.', url.host, MAX_HEAD)));
        }
        if (at < 0) return;
        const parsed = parseHead(bytes.toString('latin1', 0, at));
        if (!parsed) return fail(new GatewayError('protocol', l10n.t('{0} did not answer with valid HTTP/1.1.', url.host)));
        const bodyFrom = start + at + 4;
        if (parsed.status >= 100 && parsed.status < 200) {
          start = bodyFrom; // an interim answer (100 Continue): the real one follows
          continue;
        }
        head = parsed;
        clearTimeout(phaseTimer);
        const te = (parsed.headers['transfer-encoding'] ?? '').toLowerCase();
        const length = parsed.headers['content-length'];
        if (parsed.status === 204 || parsed.status === 304) {
          framing = { kind: 'length', remaining: 0 }; // never a body (RFC 9112 §6.3)
        } else if (te !== '' && te !== 'identity') {
          if (!/^\s*chunked\s*$/.test(te)) return fail(new GatewayError('protocol', l10n.t('{0} answered with a transfer coding that is not supported ({1}).', url.host, te)));
          framing = { kind: 'chunked', state: { phase: 'size', size: 0, digits: 0, remaining: 0 } };
        } else if (length !== undefined) {
          if (!/^\d+$/.test(length.trim())) return fail(new GatewayError('protocol', l10n.t('{0} answered with an invalid Content-Length ({1}).', url.host, length)));
          framing = { kind: 'length', remaining: Number(length.trim()) };
        } else {
          framing = { kind: 'close' };
        }
        socket.setTimeout(req.idleMs);
        const rawEnd = end;
        start = end = bodyFrom;
        settled = true;
        resolve({ status: head.status, headers: head.headers, chunks, abort: () => fail(abortError()) });
        if (framing.kind === 'length' && framing.remaining === 0) finishBody();
        else takeBody(bodyFrom, rawEnd);
        return;
      }
    };

    const onRead = (n: number): boolean => {
      if (failure || bodyDone) return false;
      if (intoSpare) {
        // Over TCP, no read comes between pausing and a buffer coming back. Node's TLS socket still
        // hands over the records it has already decrypted; such a read gets a buffer of its own.
        if (waitingForSlot) {
          current = takeSlot(true) as Slot;
          start = end = 0;
          waitingForSlot = false;
        }
        if (current.buffer.length - end < n) {
          fail(transportError('UND_ERR_SOCKET', 'a read arrived while no buffer had room'));
          return false;
        }
        (spare as Buffer).copy(current.buffer, end, 0, n);
      }
      const from = end;
      if (!head) {
        end += n;
        takeHead();
      } else {
        takeBody(from, from + n);
      }
      return !(failure || bodyDone || paused);
    };
    /** Memory for the next read: the rest of the current buffer, or the spare while it has no room. */
    const nextRead = (): Buffer => {
      intoSpare = waitingForSlot || current.buffer.length - end < MIN_READ;
      if (!intoSpare) return current.buffer.subarray(end);
      spare ??= Buffer.allocUnsafe(MIN_READ);
      return spare;
    };

    const options = {
      host,
      port,
      onread: { buffer: nextRead, callback: onRead },
    };
    const socket: net.Socket = secure
      ? tls.connect({
          ...options,
          servername: isIP(host) ? undefined : host,
          ALPNProtocols: ['http/1.1'],
          // Both, as the HTTP client's connections do (see proxy.ts): `secureContext` is what Node uses.
          ...(req.trust.tls ? { ca: req.trust.tls.ca, secureContext: req.trust.tls.secureContext } : {}),
        })
      : net.connect(options);

    phaseTimer = setTimeout(() => fail(transportError('UND_ERR_CONNECT_TIMEOUT', `connect timeout (${req.connectMs} ms)`)), req.connectMs);
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(phaseTimer);
      phaseTimer = setTimeout(() => fail(transportError('UND_ERR_HEADERS_TIMEOUT', `headers timeout (${req.firstByteMs} ms)`)), req.firstByteMs);
      socket.setNoDelay(true);
      socket.write(request);
    });
    socket.on('timeout', () => fail(transportError('UND_ERR_BODY_TIMEOUT', `body timeout (${req.idleMs} ms)`)));
    socket.on('error', (err) => fail(err));
    socket.on('end', () => {
      if (bodyDone || failure) return;
      if (head && framing?.kind === 'close') return finishBody();
      fail(transportError('UND_ERR_SOCKET', head ? 'the connection closed before the end of the body' : 'the connection closed before the response'));
    });
    socket.on('close', () => {
      if (!bodyDone && !failure) fail(transportError('UND_ERR_SOCKET', 'the connection closed'));
    });

    const onAbort = () => fail(abortError());
    req.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('close', () => req.signal?.removeEventListener('abort', onAbort));

    let iterated = false;
    const chunks: RecyclingChunks = {
      recycle(chunk: Uint8Array) {
        const slot = slots.get(chunk.buffer);
        if (!slot || slot.out === 0) return;
        slot.out--;
        if (!slot.retired || slot.out > 0) return;
        slot.retired = false;
        if (waitingForSlot) readInto(slot);
        else free.push(slot);
      },
      async *[Symbol.asyncIterator]() {
        if (iterated) throw new Error('the body can be read once');
        iterated = true;
        try {
          for (;;) {
            const chunk = ready.shift();
            if (chunk) {
              resumeIfRoom();
              yield chunk;
              continue;
            }
            if (failure) throw failure;
            if (bodyDone) return;
            // Everything handed on is with the consumer, which wants more without giving any back:
            // it keeps its chunks (they are never reused), so it gets a new buffer.
            if (waitingForSlot) readInto(takeSlot(true) as Slot);
            resumeIfRoom();
            await new Promise<void>((resolve) => (wake = resolve));
          }
        } finally {
          if (!bodyDone && !failure) fail(abortError());
          clearTimeout(flushTimer);
        }
      },
    };
  });
}

/** The request line and headers; a header value with a line break would split the request, so it is refused. */
function requestHead(url: URL, headers: Record<string, string>): string {
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`];
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'host' || name === 'connection') continue;
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) throw new GatewayError('badRequest', l10n.t('A request header contains a line break: {0}.', name));
    lines.push(`${name}: ${value}`);
  }
  lines.push('connection: close', '', '');
  return lines.join('\r\n');
}

/** `HTTP/1.1 200 OK` and its header lines, or undefined when it is not an HTTP/1.x response head. */
export function parseHead(text: string): { status: number; headers: Record<string, string> } | undefined {
  const lines = text.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
  if (!status) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || /^\s/.test(line)) return undefined; // obsolete line folding is refused (RFC 9112 §5.2)
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { status: Number(status[1]), headers };
}

/**
 * Removes the chunked coding (RFC 9112 §7.1) from the raw bytes at [from, to) of `buf`, in place:
 * the data bytes are moved down to start at `from`. Returns where they end, and whether the last
 * chunk and the trailer section have been read. The state carries over between calls.
 */
export function unchunk(buf: Buffer, from: number, to: number, s: ChunkedState): { end: number; done: boolean; error?: string } {
  let out = from;
  let i = from;
  while (i < to) {
    const c = buf[i] as number;
    switch (s.phase) {
      case 'size': {
        const digit = hexValue(c);
        if (digit >= 0) {
          if (++s.digits > 15) return { end: out, done: false, error: 'chunk size too large' };
          s.size = s.size * 16 + digit;
          i++;
        } else if (s.digits === 0) {
          return { end: out, done: false, error: 'missing chunk size' };
        } else {
          s.phase = c === 0x0d ? 'sizeLf' : 'ext';
          i++;
        }
        break;
      }
      case 'ext': // chunk extensions are ignored, as the RFC allows
        if (c === 0x0d) s.phase = 'sizeLf';
        i++;
        break;
      case 'sizeLf':
        if (c !== 0x0a) return { end: out, done: false, error: 'bad line end after a chunk size' };
        i++;
        s.remaining = s.size;
        s.phase = s.size === 0 ? 'trailer' : 'data';
        s.size = 0;
        s.digits = 0;
        break;
      case 'data': {
        const take = Math.min(s.remaining, to - i);
        if (out !== i) buf.copyWithin(out, i, i + take);
        out += take;
        i += take;
        s.remaining -= take;
        if (s.remaining === 0) s.phase = 'dataCr';
        break;
      }
      case 'dataCr':
        if (c !== 0x0d) return { end: out, done: false, error: 'chunk longer than its size' };
        s.phase = 'dataLf';
        i++;
        break;
      case 'dataLf':
        if (c !== 0x0a) return { end: out, done: false, error: 'bad line end after chunk data' };
        s.phase = 'size';
        i++;
        break;
      case 'trailer': // at the start of a trailer line: CRLF ends the body
        s.phase = c === 0x0d ? 'trailerLf' : 'trailerLine';
        i++;
        break;
      case 'trailerLine':
        if (c === 0x0a) s.phase = 'trailer';
        i++;
        break;
      case 'trailerLf':
        if (c !== 0x0a) return { end: out, done: false, error: 'bad line end after the last chunk' };
        return { end: out, done: true };
    }
  }
  return { end: out, done: false };
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}
