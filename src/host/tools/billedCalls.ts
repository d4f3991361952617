import * as vscode from 'vscode';
import { DEFAULT_CALL_PRICE_USD, type BilledTool } from '../../core/tools/billing';
import type { Services } from '../services';

const TOOL_NAMES: Record<BilledTool, string> = { parse: 'File parsing', ocr: 'OCR', upload: 'File upload', search: 'Web search', read: 'Web page reading' };

/**
 * Before the first billed tool call of a session the user is told that it costs money (unless they
 * asked not to be). Returns false when they decline.
 */
export async function confirmBilled(services: Services, tool: BilledTool, interactive: boolean): Promise<boolean> {
  const config = vscode.workspace.getConfiguration('modelGateway.tools');
  if (services.billing.calls > 0 || !interactive || config.get<boolean>('confirmBilledCalls') === false || services.billingConfirmed) return true;
  const choice = await vscode.window.showWarningMessage(
    `${TOOL_NAMES[tool]} is billed per call: US$${DEFAULT_CALL_PRICE_USD.toFixed(2)} by default, from the key's quota. Reading content already extracted is not billed again.`,
    { modal: true },
    'Continue',
    "Continue and Don't Ask Again",
  );
  if (choice === "Continue and Don't Ask Again") await config.update('confirmBilledCalls', false, vscode.ConfigurationTarget.Global);
  if (choice) services.billingConfirmed = true;
  return choice !== undefined;
}

export async function withToolProgress<T>(title: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (_progress, token) => {
    const controller = new AbortController();
    token.onCancellationRequested(() => controller.abort());
    return work(controller.signal);
  });
}
