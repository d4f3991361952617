import * as path from 'node:path';
import * as vscode from 'vscode';
import { ConversationStore } from '../core/chat/conversationStore';
import { type StoreProblem } from '../core/chat/store/core';
import { ChatController } from './chat/chatController';
import { CompletionService } from './completion/service';
import type { CompletionSwitch } from './completion/switch';
import { COMMANDS } from './commands';
import type { CommandContext } from './commands/types';
import { agentTools } from './lm/agentTools';
import { GatewayChatProvider } from './lm/chatProvider';
import { providerRegistration, type LanguageModelChatProvider } from './lm/lmApi';
import { MediaStudio } from './media/mediaStudio';
import type { Services } from './services';
import type { GatewayStatusBar } from './statusBar';
import { ChatViewProvider } from './views/chatView';
import type { ModelsView } from './views/modelsView';

/** What the extension's entry built at activation and hands to the features. */
export interface Shell {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  services: Services;
  statusBar: GatewayStatusBar;
  models: ModelsView;
  completions: CompletionSwitch;
}

/** The features the entry's forwarders reach: commands, the chat view, agent tools, the chat provider. */
export interface Features {
  /** Runs a command of COMMANDS; `undefined` for an id that is not one. */
  command(id: string): ((...args: unknown[]) => unknown) | undefined;
  readonly chatView: vscode.WebviewViewProvider;
  tool(name: string): vscode.LanguageModelTool<unknown> | undefined;
  /** Restores a Media Studio panel after a window reload. */
  revivePanel(panel: vscode.WebviewPanel): void;
  /** VS Code's chat provider, where the running VS Code has the API. */
  readonly lmProvider?: LanguageModelChatProvider;
  /** The inline completion provider (forwarded to only while completion is on). */
  readonly completion: CompletionService;
}

/**
 * The extension's features: the chat, the Media Studio, the commands, the agent tools and the
 * provider for VS Code's chat. The production build puts this module and what only it uses in
 * dist/features.js, which the entry (src/extension.ts) requires the first time a command runs, the
 * chat view is shown, a tool is called or VS Code's chat asks for models, so activation never reads
 * it. Modules the entry also uses (services, settings, errors, zod…) are not copied into that file:
 * it reaches the entry's own instances (see esbuild.js).
 */
export function startFeatures(shell: Shell): Features {
  const { context, log, services, statusBar, models, completions } = shell;
  // The store reports damaged files it set aside; the controller tells the user once.
  const problems: { report?: (problem: StoreProblem) => void } = {};
  const store = new ConversationStore(path.join(context.globalStorageUri.fsPath, 'conversations'), {
    onProblem: (problem) => problems.report?.(problem),
  });
  const chat = new ChatController(services, store);
  problems.report = (problem) => chat.reportStoreProblem(problem);
  const chatView = new ChatViewProvider(context.extensionUri, chat, log, (url, signal) =>
    services.http().routeTo(url, signal),
  );
  const media = new MediaStudio(services);
  const completion = new CompletionService(services, completions);
  const commandContext: CommandContext = { services, chat, media, statusBar, models, completions, completion };
  const commands = new Map(COMMANDS.map((c) => [c.id, (...args: unknown[]) => c.run(commandContext, ...args)]));
  const tools = agentTools(services, () => media);
  const lmProvider = providerRegistration() ? new GatewayChatProvider(services) : undefined;
  context.subscriptions.push(chat, store, chatView, media, completion, ...(lmProvider ? [lmProvider] : []));
  return {
    command: (id) => commands.get(id),
    chatView,
    tool: (name) => tools.get(name),
    revivePanel: (panel) => media.revive(panel),
    lmProvider,
    completion,
  };
}
