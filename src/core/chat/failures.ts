import type { ErrorInfo } from '../../shared/protocol';
import { say } from '../../shared/words';
import { GatewayError, isGatewayError } from '../errors';

/**
 * How a failed answer keeps its error: the facts (kind, request id, the words of the message) and
 * the message as worded at the time, which versions that do not read the words show.
 */
export function failureRecord(err: unknown): ErrorInfo {
  const error = isGatewayError(err) ? err : new GatewayError('protocol', String(err));
  return {
    kind: error.kind,
    message: error.message,
    ...(error.words ? { words: error.words } : {}),
    ...(error.requestId ? { requestId: error.requestId } : {}),
  };
}

/** A kept failure's message in the display language now; one kept without its words, as it was worded then. */
export function failureText(error: ErrorInfo): string {
  return error.words ? say(error.words) : error.message;
}

/** A kept failure as the view gets it: its message worded now, without the words it was worded from. */
export function shownFailure(error: ErrorInfo): ErrorInfo {
  const { words: _words, ...shown } = error;
  return { ...shown, message: failureText(error) };
}
