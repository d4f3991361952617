import * as vscode from 'vscode';
import { GatewayError, isGatewayError, type ErrorKind } from '../../core/errors';

/**
 * The codes of VS Code's `LanguageModelError` (`NoPermissions`, `Blocked`, `NotFound`) for the kinds
 * that have one; any other kind has none.
 */
const CODE_OF: Partial<Record<ErrorKind, string>> = {
  auth: 'NoPermissions',
  modelUnavailable: 'NotFound',
  quota: 'Blocked',
  upstreamBalance: 'Blocked',
  upstreamBlocked: 'Blocked',
  contentRefused: 'Blocked',
  rateLimited: 'Blocked',
};

/**
 * A gateway error as VS Code's chat shows it: the gateway error's own words (what happened and what
 * to do, with the request id) once, and nothing else: no stack, no file path.
 *
 * Why not a `vscode.LanguageModelError`: a provider's error crosses two processes on its way to the
 * Chat view, and at each hop VS Code rebuilds an error named "LanguageModelError" with a new stack of
 * its own (`LanguageModelError.tryDeserialize` of the extension API, called by microsoft/vscode's
 * `mainThreadLanguageModels.ts` and `extHostLanguageModels.ts` as VS Code 1.139 does). The Chat
 * view's endpoint for a contributed model then words the failure with `toErrorMessage(error, true)`
 * (microsoft/vscode-copilot-chat `src/platform/endpoint/vscode-node/extChatEndpoint.ts`), which for an
 * error with a stack gives "message: stack" — the message twice, then the stack with file paths. Any
 * other error crosses with its own name, message, code and stack as given (`transformErrorForSerialization`
 * in `src/vs/base/common/errors.ts`), so an error with an empty stack is shown as its message alone.
 * VS Code's own wrapper of its BYOK models throws a plain `Error(reason)` the same way for most failures.
 * The code an extension calling `vscode.lm` would read from a LanguageModelError is kept as `code`.
 */
export function toLanguageModelError(err: unknown): Error {
  if (err instanceof vscode.CancellationError) return err;
  if (err instanceof vscode.LanguageModelError) return shownAsIs(err.message, err.code || undefined);
  const error = isGatewayError(err)
    ? err
    : new GatewayError('protocol', err instanceof Error ? err.message : String(err), { cause: err });
  if (error.kind === 'cancelled') return new vscode.CancellationError();
  return shownAsIs(error.describe(), CODE_OF[error.kind]);
}

/** An error that carries only its message (and code): no stack, no cause, no name VS Code rebuilds. */
function shownAsIs(message: string, code: string | undefined): Error {
  const error = new Error(message) as Error & { code?: string };
  error.name = 'ModelGatewayError';
  error.stack = '';
  if (code) error.code = code;
  return error;
}
