import * as vscode from 'vscode';
import { DEFAULT_CALL_PRICE_USD, type BilledTool } from '../../core/tools/billing';
import { formatAmount } from '../../shared/format';
import type { Services } from '../services';

const toolName = (tool: BilledTool): string =>
  ({
    parse: vscode.l10n.t('File parsing'),
    ocr: vscode.l10n.t('OCR'),
    upload: vscode.l10n.t('File upload'),
    search: vscode.l10n.t('Web search'),
    read: vscode.l10n.t('Web page reading'),
  })[tool];

/**
 * Before the first billed tool call of a session the user is told that it costs money (unless they
 * asked not to be). Returns false when they decline.
 */
export async function confirmBilled(services: Services, tool: BilledTool, interactive: boolean): Promise<boolean> {
  const config = vscode.workspace.getConfiguration('modelGateway.tools');
  if (
    services.billing.calls > 0 ||
    !interactive ||
    config.get<boolean>('confirmBilledCalls') === false ||
    services.billingConfirmed
  )
    return true;
  const dontAsk = vscode.l10n.t("Continue and Don't Ask Again");
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t(
      "{0} is billed per call: US${1} by default, from the key's quota. Reading content already extracted is not billed again.",
      toolName(tool),
      formatAmount(DEFAULT_CALL_PRICE_USD),
    ),
    { modal: true },
    vscode.l10n.t('Continue'),
    dontAsk,
  );
  if (choice === dontAsk) await config.update('confirmBilledCalls', false, vscode.ConfigurationTarget.Global);
  if (choice) services.billingConfirmed = true;
  return choice !== undefined;
}

export async function withToolProgress<T>(title: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (_progress, token) => {
      const controller = new AbortController();
      token.onCancellationRequested(() => controller.abort());
      return work(controller.signal);
    },
  );
}

/** Runs a billed tool call of a command with the notice, progress, cancel and the session's meter. */
export async function billedCall<T>(
  services: Services,
  tool: BilledTool,
  title: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T | undefined> {
  if (!(await confirmBilled(services, tool, true))) return undefined;
  const result = await withToolProgress(title, work);
  services.billing.record(tool);
  return result;
}
