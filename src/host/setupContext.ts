import * as vscode from 'vscode';
import type { Services } from './services';

/**
 * `modelGateway.setup`, the context key the views' welcome content (`viewsWelcome`) reads:
 * `noBaseUrl` until the gateway's address is set, then `noKey` until a key is, then `ready`.
 * It follows the settings and the key (also when another window sets or clears it).
 */
export function trackSetupContext(services: Services): vscode.Disposable {
  let last: string | undefined;
  const update = async (): Promise<void> => {
    const state = !services.settings().baseUrl.trim() ? 'noBaseUrl' : (await services.keys.has()) ? 'ready' : 'noKey';
    if (state === last) return;
    last = state;
    await vscode.commands.executeCommand('setContext', 'modelGateway.setup', state);
  };
  // The first value is worked out in the task after activation: reading the settings (VS Code's
  // configuration inspected for the user-only ones) is the costliest step activation would take,
  // and the welcome content can wait a moment for it.
  const first = setTimeout(() => void update(), 0);
  return vscode.Disposable.from(
    { dispose: () => clearTimeout(first) },
    services.keys.onDidChange(() => void update()),
    services.onDidChangeSettings(() => void update()),
  );
}
