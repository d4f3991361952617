import * as l10n from '@vscode/l10n';
import { say, type Words } from '../shared/words';

/**
 * The one error type of the extension. Every failure the user can see is a GatewayError whose
 * `kind` decides how the UI reacts and whose `message` says what to do next. Made from `words(…)`
 * (shared/words.ts), it keeps them, so that a kept record of it (a failed chat answer) can be
 * worded again in the display language of the day it is shown.
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
  /** What the message was worded from; absent when it was given as a text (shown as it came). */
  readonly words?: Words;

  constructor(
    readonly kind: ErrorKind,
    message: string | Words,
    init: GatewayErrorInit = {},
  ) {
    super(say(message), init.cause === undefined ? undefined : { cause: init.cause });
    if (typeof message !== 'string') this.words = message;
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.detail = init.detail;
    this.retryAfterMs = init.retryAfterMs;
    if (init.jsonBody) this.jsonBody = true;
  }

  /** The message as it was made: its words, or the text it was given. */
  get said(): string | Words {
    return this.words ?? this.message;
  }

  /** The message plus the request id, as shown in notifications and logs. */
  describe(): string {
    return this.requestId ? l10n.t('{0} (request id: {1})', this.message, this.requestId) : this.message;
  }
}

export function isGatewayError(value: unknown, kind?: ErrorKind): value is GatewayError {
  return value instanceof GatewayError && (kind === undefined || value.kind === kind);
}
