import * as l10n from '@vscode/l10n';

/**
 * The one error type of the extension. Every failure the user can see is a GatewayError whose
 * `kind` decides how the UI reacts and whose `message` says what to do next.
 */
export type ErrorKind =
  | 'auth'
  | 'quota'
  | 'modelUnavailable'
  | 'rateLimited'
  | 'upstreamBlocked'
  /** The gateway's content check refused the request's text (`prompt_blocked`, `sensitive_words_detected`). */
  | 'contentRefused'
  | 'upstreamBalance'
  | 'badRequest'
  | 'tooLarge'
  | 'timeout'
  | 'network'
  | 'protocol'
  | 'server'
  | 'notImplemented'
  | 'cancelled';

export interface GatewayErrorInit {
  status?: number;
  /** The gateway's or provider's own code, e.g. `insufficient_user_quota` or `1113`. */
  code?: string;
  requestId?: string;
  /** The upstream's own wording, without the request-id suffix, for logs and details. */
  detail?: string;
  retryAfterMs?: number;
  /** The error came as a JSON body (the gateway's own), not a proxy's HTML page or plain text. */
  jsonBody?: boolean;
  cause?: unknown;
}

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly status?: number;
  readonly code?: string;
  readonly requestId?: string;
  readonly detail?: string;
  readonly retryAfterMs?: number;
  readonly jsonBody?: boolean;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    init: GatewayErrorInit = {},
  ) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.detail = init.detail;
    this.retryAfterMs = init.retryAfterMs;
    if (init.jsonBody) this.jsonBody = true;
  }

  /** The message plus the request id, as shown in notifications and logs. */
  describe(): string {
    return this.requestId ? l10n.t('{0} (request id: {1})', this.message, this.requestId) : this.message;
  }
}

export function isGatewayError(value: unknown, kind?: ErrorKind): value is GatewayError {
  return value instanceof GatewayError && (kind === undefined || value.kind === kind);
}
