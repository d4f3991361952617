import * as l10n from '@vscode/l10n';
import * as vscode from 'vscode';
import { hasUnfinishedVideoTasks, MEDIA_PANEL_VIEW_TYPE, RESUME_DELAY_MS } from './host/media/studioStart';
import { CompletionSwitch, registerCompletionForwarder } from './host/completion/switch';
import type { Features, Shell } from './host/features';
import { providerRegistration, VENDOR, type LanguageModelChatProvider } from './host/lm/lmApi';
import { Services } from './host/services';
import { trackSetupContext } from './host/setupContext';
import { trackWalkthrough } from './host/walkthrough';
import { GatewayStatusBar } from './host/statusBar';
import { registerResultDocuments } from './host/tools/results';
import { ModelsView } from './host/views/modelsView';
import { setDisplayLocale } from './shared/format';

/** The sidebar chat's webview view (package.json `views`). */
const CHAT_VIEW_ID = 'modelGateway.chat';

/**
 * Builds the services and registers contributions; nothing else. No network call and no file
 * read happens here: the first request is made by a command or by a view as it is shown.
 *
 * Only what must exist from the start is built here: the services, the status bar, the Models view
 * and the setup context. Everything else (the chat, the Media Studio, the commands' code, the agent
 * tools, the provider for VS Code's chat) is in src/host/features.ts, which the production build
 * puts in dist/features.js; the contributions are registered as forwarders that load it on first
 * use, so activation does not read or run it (`npm run bench` reports what activation loads).
 */
export function activate(context: vscode.ExtensionContext): void {
  // Core's strings (errors, notices) come from the same bundle VS Code loaded for the display
  // language; numbers, sizes and dates follow that language too.
  l10n.config({ contents: vscode.l10n.bundle ?? {} });
  setDisplayLocale(vscode.env.language);
  const log = vscode.window.createOutputChannel('Model Gateway', { log: true });
  const services = new Services(context, log);
  const models = new ModelsView(services);
  void dropGlobalRemoteImageFlag(context.globalState);
  const statusBar = new GatewayStatusBar(services);
  const modelsTree = vscode.window.createTreeView('modelGateway.models', { treeDataProvider: models });
  models.showHeaderIn(modelsTree);
  const completions = new CompletionSwitch(context.globalState);
  const load = lazyFeatures({ context, log, services, statusBar, models, completions });
  const manifest = context.extension.packageJSON as {
    contributes?: { commands?: { command: string }[]; languageModelTools?: { name: string }[] };
  };
  context.subscriptions.push(
    log,
    services,
    models,
    statusBar,
    completions,
    registerCompletionForwarder(completions, () => load().completion),
    trackSetupContext(services),
    trackWalkthrough(services),
    modelsTree,
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, {
      resolveWebviewView: (view, resolveContext, token) =>
        load().chatView.resolveWebviewView(view, resolveContext, token),
    }),
    ...(manifest.contributes?.commands ?? []).map(({ command }) =>
      vscode.commands.registerCommand(command, (...args: unknown[]) => {
        const run = load().command(command);
        if (!run) throw new Error(`Model Gateway has no code for the command ${command}.`);
        return run(...args);
      }),
    ),
    ...(manifest.contributes?.languageModelTools ?? []).map(({ name }) =>
      vscode.lm.registerTool(name, toolForwarder(name, load)),
    ),
    registerResultDocuments(),
    // A Media Studio panel open at a reload comes back through this serializer; it must exist at
    // activation, since restoring the panel is what activated the extension.
    vscode.window.registerWebviewPanelSerializer(MEDIA_PANEL_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel) => load().revivePanel(panel),
    }),
  );
  // Video tasks the last session left running resume soon after start-up, with the studio's code.
  if (hasUnfinishedVideoTasks(context.workspaceState)) {
    const resume = setTimeout(() => load(), RESUME_DELAY_MS);
    context.subscriptions.push({ dispose: () => clearTimeout(resume) });
  }
  // VS Code's own chat gets the gateway's models where the provider API exists (1.104 and newer).
  const registerProvider = providerRegistration();
  if (registerProvider)
    context.subscriptions.push(...providerForwarder(load, (provider) => registerProvider(VENDOR, provider)));
}

export function deactivate(): void {
  // Disposables registered in activate() are released by VS Code.
}

/** Loads the features once, on first use. */
function lazyFeatures(shell: Shell): () => Features {
  let features: Features | undefined;
  return () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose: keeps the features off the activation path (see esbuild.js)
    features ??= (require('./host/features') as typeof import('./host/features')).startFeatures(shell);
    return features;
  };
}

function toolForwarder(name: string, load: () => Features): vscode.LanguageModelTool<unknown> {
  const tool = (): vscode.LanguageModelTool<unknown> => {
    const found = load().tool(name);
    if (!found) throw new Error(`Model Gateway has no code for the tool ${name}.`);
    return found;
  };
  return {
    invoke: (options, token) => tool().invoke(options, token),
    prepareInvocation: (options, token) => tool().prepareInvocation?.(options, token),
  };
}

/** The provider for VS Code's chat, registered at once and loaded when VS Code first asks it something. */
function providerForwarder(
  load: () => Features,
  register: (provider: LanguageModelChatProvider) => vscode.Disposable,
): vscode.Disposable[] {
  const changed = new vscode.EventEmitter<void>();
  let forwarding: vscode.Disposable | undefined;
  const provider = (): LanguageModelChatProvider => {
    const found = load().lmProvider;
    if (!found) throw new Error("Model Gateway has no provider for VS Code's chat here.");
    if (!forwarding && found.onDidChangeLanguageModelChatInformation)
      forwarding = found.onDidChangeLanguageModelChatInformation(() => changed.fire());
    return found;
  };
  return [
    changed,
    { dispose: () => forwarding?.dispose() },
    register({
      onDidChangeLanguageModelChatInformation: changed.event,
      provideLanguageModelChatInformation: (options, token) =>
        provider().provideLanguageModelChatInformation(options, token),
      provideLanguageModelChatResponse: (model, messages, options, progress, token) =>
        provider().provideLanguageModelChatResponse(model, messages, options, progress, token),
      provideTokenCount: (model, text, token) => provider().provideTokenCount(model, text, token),
    }),
  ];
}

/** The old switch that let every https image in; per-host consent replaces it and it is dropped. */
async function dropGlobalRemoteImageFlag(state: vscode.Memento): Promise<void> {
  if (state.get('chat.allowRemoteImages') !== undefined) await state.update('chat.allowRemoteImages', undefined);
}
