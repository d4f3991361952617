import { registerResultDocuments } from './host/tools/results';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import * as vscode from 'vscode';
import { ConversationStore, type StoreProblem } from './core/chat/conversationStore';
import { ChatController } from './host/chat/chatController';
import { dropGlobalRemoteImageFlag } from './host/chat/remoteImages';
import { COMMANDS } from './host/commands';
import { registerAgentTools } from './host/lm/agentTools';
import { GatewayChatProvider, VENDOR } from './host/lm/chatProvider';
import { providerRegistration } from './host/lm/lmApi';
import { MediaStudio } from './host/media/mediaStudio';
import { Services } from './host/services';
import { trackSetupContext } from './host/setupContext';
import { GatewayStatusBar } from './host/statusBar';
import { ChatViewProvider } from './host/views/chatView';
import { ModelsView } from './host/views/modelsView';
import { setDisplayLocale } from './shared/format';

/**
 * Builds the services and registers contributions; nothing else. No network call and no file
 * read happens here: the first request is made by a command or by a view as it is shown.
 */
export function activate(context: vscode.ExtensionContext): void {
  // Core's strings (errors, notices) come from the same bundle VS Code loaded for the display
  // language; numbers, sizes and dates follow that language too.
  l10n.config({ contents: vscode.l10n.bundle ?? {} });
  setDisplayLocale(vscode.env.language);
  const log = vscode.window.createOutputChannel('Model Gateway', { log: true });
  const services = new Services(context, log);
  const models = new ModelsView(services);
  // The store reports damaged files it set aside; the controller tells the user once.
  const problems: { report?: (problem: StoreProblem) => void } = {};
  const store = new ConversationStore(path.join(context.globalStorageUri.fsPath, 'conversations'), { onProblem: (problem) => problems.report?.(problem) });
  const chat = new ChatController(services, store);
  problems.report = (problem) => chat.reportStoreProblem(problem);
  const chatView = new ChatViewProvider(context.extensionUri, chat, log);
  void dropGlobalRemoteImageFlag(context.globalState);
  const media = new MediaStudio(services);
  const statusBar = new GatewayStatusBar(services);
  const modelsTree = vscode.window.createTreeView('modelGateway.models', { treeDataProvider: models });
  models.showHeaderIn(modelsTree);
  const commandContext = { services, chat, media, statusBar, models };
  context.subscriptions.push(
    log,
    services,
    models,
    chat,
    store,
    chatView,
    media,
    statusBar,
    trackSetupContext(services),
    modelsTree,
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chatView),
    ...COMMANDS.map((c) => vscode.commands.registerCommand(c.id, (...args: unknown[]) => c.run(commandContext, ...args))),
    ...registerAgentTools(services, () => media),
    registerResultDocuments(),
  );
  // VS Code's own chat gets the gateway's models where the provider API exists (1.104 and newer).
  const registerProvider = providerRegistration();
  if (registerProvider) {
    const provider = new GatewayChatProvider(services);
    context.subscriptions.push(provider, registerProvider(VENDOR, provider));
  }
}

export function deactivate(): void {
  // Disposables registered in activate() are released by VS Code.
}
