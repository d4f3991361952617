import * as vscode from 'vscode';
import { isGatewayError } from '../../core/errors';
import { formatNumber } from '../../shared/format';
import { showError } from '../notify';
import type { Services } from '../services';
import type { ResultSource } from './results';

/** What a tool command returns when it failed (scripts read it; the user saw the error). */
export type Failure = { error: string; kind?: string };

export function failure(err: unknown, services: Services, extra: Parameters<typeof showError>[2] = []): Failure {
  const message = showError(err, services.log, extra);
  return { error: message, ...(isGatewayError(err) ? { kind: err.kind } : {}) };
}

/** Offers what can be done with a shown result: save it (next to its source file), or use it as chat context. */
export function offerResultActions(result: ResultSource, doc: vscode.TextDocument, services: Services): void {
  const save = typeof result.source === 'string' ? vscode.l10n.t('Save…') : vscode.l10n.t('Save Next to File');
  const addToChat = vscode.l10n.t('Add to Chat');
  // Counted as shown and as Add to Chat attaches it (readableText: page breaks become separators), so the chip says the same.
  void vscode.window
    .showInformationMessage(
      vscode.l10n.t('{0}: {1} characters.', result.label, formatNumber(doc.getText().length)),
      save,
      addToChat,
    )
    .then(async (choice) => {
      try {
        if (choice === save) await vscode.commands.executeCommand('modelGateway.saveResult', doc.uri);
        else if (choice === addToChat) await vscode.commands.executeCommand('modelGateway.addResultToChat', doc.uri);
      } catch (err) {
        showError(err, services.log);
      }
    });
}
