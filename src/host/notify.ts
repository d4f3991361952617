import * as vscode from 'vscode';
import { GatewayError, isGatewayError } from '../core/errors';

export interface ErrorAction {
  title: string;
  run: () => unknown;
}

/**
 * Shows an error with the actions that fit its kind. Returns the message shown, so commands can
 * also return it to a caller that runs them from a script.
 */
export function showError(err: unknown, log: vscode.LogOutputChannel, extra: ErrorAction[] = []): string {
  const error = isGatewayError(err)
    ? err
    : new GatewayError('protocol', err instanceof Error ? err.message : String(err), { cause: err });
  if (error.kind === 'cancelled') return error.message;
  log.error(error.describe());
  const actions: ErrorAction[] = [...extra, ...actionsFor(error)];
  // The gateway's request id is what its operator needs to find the request in their logs.
  const requestId = error.requestId;
  if (requestId) {
    actions.push({
      title: vscode.l10n.t('Copy Request ID'),
      run: async () => {
        await vscode.env.clipboard.writeText(requestId);
        void vscode.window.setStatusBarMessage(vscode.l10n.t('Copied request id {0}', requestId), 3000);
      },
    });
  }
  actions.push({ title: vscode.l10n.t('Show Log'), run: () => log.show(true) });
  const message = error.describe();
  void vscode.window
    .showErrorMessage(message, ...actions.map((a) => a.title))
    .then((chosen) => actions.find((a) => a.title === chosen)?.run());
  return message;
}

function actionsFor(error: GatewayError): ErrorAction[] {
  switch (error.kind) {
    case 'auth':
      return [
        { title: vscode.l10n.t('Set API Key'), run: () => vscode.commands.executeCommand('modelGateway.setApiKey') },
      ];
    case 'modelUnavailable':
      return [
        {
          title: vscode.l10n.t('Refresh Models'),
          run: () => vscode.commands.executeCommand('modelGateway.refreshModels'),
        },
      ];
    case 'network':
    case 'timeout':
      return [
        {
          title: vscode.l10n.t('Open Settings'),
          run: () => vscode.commands.executeCommand('modelGateway.openSettings'),
        },
      ];
    default:
      return [];
  }
}
