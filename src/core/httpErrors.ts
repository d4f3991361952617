import { GatewayError } from './errors';
import { words } from '../shared/words';
import type { HttpRequest, Timeouts } from './httpTypes';

/** What a failed connection or a cut body means to the user (HttpClient's error mapping). */

export interface TransportFailure {
  error: GatewayError;
  /** True when the request cannot have reached the server, so even a billed POST may be resent. */
  notSent: boolean;
}

const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function mapTransportError(err: unknown, url: URL, req: HttpRequest, t: Timeouts): TransportFailure {
  if (err instanceof GatewayError) return { error: err, notSent: false };
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const host = url.host;
  const message = e.message ?? String(err);
  // undici also reports a refused proxy tunnel as "aborted"; only the caller's own abort is a cancel.
  if (req.signal?.aborted || (e.name === 'AbortError' && !/proxy/i.test(message))) {
    return {
      error: new GatewayError('cancelled', words('The request was cancelled.'), { cause: err }),
      notSent: false,
    };
  }
  const timeout = timeoutFailure(code, err, host, req, t);
  if (timeout) return timeout;
  // What undici refuses before sending (a header value with a line break) is the request's fault, not the network's.
  if (code === 'UND_ERR_INVALID_ARG') {
    return {
      error: new GatewayError('badRequest', words('The request to {0} could not be sent: {1}.', host, message), {
        cause: err,
      }),
      notSent: true,
    };
  }
  // An answer undici's parser refused (not HTTP, a malformed chunk, a head over the limit, a body
  // longer than its Content-Length): sending it again would get the same answer.
  if (
    e.name === 'HTTPParserError' ||
    code === 'UND_ERR_HEADERS_OVERFLOW' ||
    code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH'
  ) {
    return {
      error: new GatewayError('protocol', words('{0} sent an answer that is not valid HTTP: {1}.', host, message), {
        cause: err,
      }),
      notSent: false,
    };
  }
  if (/proxy/i.test(message)) {
    return {
      error: new GatewayError(
        'network',
        words(
          'The proxy refused or failed the connection to {0}: {1}. Check "http.proxy" and the proxy environment variables.',
          host,
          message,
        ),
        { cause: err },
      ),
      notSent: true,
    };
  }
  const notSent = NOT_SENT_CODES.has(code);
  const what =
    code === 'ENOTFOUND' || code === 'EAI_AGAIN'
      ? words('the host name {0} could not be resolved', url.hostname)
      : code === 'ECONNREFUSED'
        ? words('{0} refused the connection', host)
        : words('the connection to {0} failed ({1})', host, code || message);
  return {
    error: new GatewayError(
      'network',
      words('Could not reach the gateway: {0}. Check the base address, the network and the proxy settings.', what),
      { cause: err },
    ),
    notSent,
  };
}

/** undici's three time limits: connecting, waiting for the answer's head, a pause in its body. */
function timeoutFailure(
  code: string,
  err: unknown,
  host: string,
  req: HttpRequest,
  t: Timeouts,
): TransportFailure | undefined {
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return {
      error: new GatewayError(
        'timeout',
        words(
          'Could not connect to {0} within {1}. Check the network, the proxy settings and the base address.',
          host,
          seconds(t.connectMs),
        ),
        { cause: err },
      ),
      notSent: true,
    };
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    const limit = req.timeout === 'long' ? t.longMs : t.firstByteMs;
    const setting =
      req.timeout === 'long' ? 'modelGateway.timeouts.longRequestSeconds' : 'modelGateway.timeouts.firstByteSeconds';
    return {
      error: new GatewayError(
        'timeout',
        words('{0} sent no answer within {1}. Try again, or raise "{2}".', host, seconds(limit), setting),
        { cause: err },
      ),
      notSent: false,
    };
  }
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    const setting =
      req.timeout === 'long' && idleLimit(t, req) !== t.idleMs
        ? 'modelGateway.timeouts.longRequestSeconds'
        : 'modelGateway.timeouts.idleSeconds';
    return {
      error: new GatewayError(
        'timeout',
        words(
          '{0} stopped sending for more than {1}. Try again, or raise "{2}".',
          host,
          seconds(idleLimit(t, req)),
          setting,
        ),
        { cause: err },
      ),
      notSent: false,
    };
  }
  return undefined;
}

/** A failure while the body was arriving: the request got through, the answer was cut. */
export function mapBodyError(err: unknown, url: URL, req: HttpRequest, t: Timeouts): GatewayError {
  const mapped = mapTransportError(err, url, req, t).error;
  if (mapped.kind !== 'network') return mapped;
  return new GatewayError(
    'network',
    words(
      'The connection to {0} closed in the middle of the answer. What arrived before is kept; try again.',
      url.host,
    ),
    { cause: err },
  );
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/** The longest silence allowed between two chunks: 0 (no limit) wins, else the longer of the limits that apply. */
export function idleLimit(t: Timeouts, req: HttpRequest): number {
  if (req.timeout !== 'long') return t.idleMs;
  return t.idleMs === 0 || t.longMs === 0 ? 0 : Math.max(t.idleMs, t.longMs);
}
