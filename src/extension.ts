import * as vscode from 'vscode';
import { COMMANDS } from './host/commands';
import { Services } from './host/services';
import { GatewayStatusBar } from './host/statusBar';
import { ModelsView } from './host/views/modelsView';

/**
 * Builds the services and registers contributions; nothing else. No network call happens here:
 * the first request is made by a command or by a view as it is shown.
 */
export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Model Gateway', { log: true });
  const services = new Services(context, log);
  const models = new ModelsView(services);
  context.subscriptions.push(
    log,
    services,
    models,
    new GatewayStatusBar(services),
    vscode.window.registerTreeDataProvider('modelGateway.models', models),
    ...COMMANDS.map((c) => vscode.commands.registerCommand(c.id, (...args: unknown[]) => c.run(services, ...args))),
  );
}

export function deactivate(): void {
  // Disposables registered in activate() are released by VS Code.
}
