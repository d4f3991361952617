import * as vscode from 'vscode';
import { hasManageModels, utilityModelState } from './lm/nativeChatState';
import type { Services } from './services';

/**
 * The first-run walkthrough (`contributes.walkthroughs` in package.json): key → the gateway's models
 * in VS Code's chat → a utility model → agent mode. Each step is marked done by VS Code when its
 * completion event happens; the context keys below are those events where VS Code has none of its own.
 */
export const WALKTHROUGH_ID = 'firstRun';
const OPENED_STATE = 'modelGateway.walkthrough.opened';

/** Set where this VS Code has its own Chat view with Manage Language Models (1.104 and newer): the chat steps show. */
const NATIVE_CHAT_CONTEXT = 'modelGateway.nativeChat';
/** A utility model is set in the user's settings (also one set before the walkthrough). */
const UTILITY_SET_CONTEXT = 'modelGateway.utilityModelSet';
/** VS Code's chat sent the gateway a request with tools (agent mode) in this window. */
const AGENT_ANSWERED_CONTEXT = 'modelGateway.agentAnswered';

/** The walkthrough's full id, as `workbench.action.openWalkthrough` takes it. */
export function walkthroughId(context: vscode.ExtensionContext): string {
  return `${context.extension.id}#${WALKTHROUGH_ID}`;
}

export function openWalkthrough(context: vscode.ExtensionContext): Thenable<unknown> {
  return vscode.commands.executeCommand('workbench.action.openWalkthrough', walkthroughId(context), false);
}

/** Agent mode used the gateway's models: the last step is done. */
export function agentAnswered(): void {
  void vscode.commands.executeCommand('setContext', AGENT_ANSWERED_CONTEXT, true);
}

/** Keeps the walkthrough's context keys, and opens it once after install (see openOnceAfterInstall). */
export function trackWalkthrough(services: Services): vscode.Disposable {
  const utility = (): Thenable<unknown> =>
    vscode.commands.executeCommand('setContext', UTILITY_SET_CONTEXT, utilityModelState().set);
  // In the task after activation, as the setup context is: nothing here is needed at once.
  const first = setTimeout(() => {
    void (async () => {
      await utility();
      await vscode.commands.executeCommand('setContext', NATIVE_CHAT_CONTEXT, await hasManageModels());
      await openOnceAfterInstall(services);
    })().catch((err: unknown) => services.log.warn(`Starting the walkthrough failed: ${String(err)}`));
  }, 0);
  const changes = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('chat')) void utility();
  });
  return {
    dispose: () => {
      clearTimeout(first);
      changes.dispose();
    },
  };
}

/**
 * Opens the walkthrough once per user while no key is set. VS Code opens an extension's walkthrough
 * itself when it is installed from the Extensions view; this covers an install from a .vsix or the
 * command line, at the extension's first start. A user who turned off
 * `workbench.welcomePage.walkthroughs.openOnInstall` is not shown it. Returns whether it opened it.
 */
export async function openOnceAfterInstall(services: Services): Promise<boolean> {
  const memento = services.context.globalState;
  const openOnInstall = vscode.workspace
    .getConfiguration('workbench.welcomePage')
    .get<boolean>('walkthroughs.openOnInstall', true);
  if (memento.get<boolean>(OPENED_STATE) || !openOnInstall || (await services.keys.has())) return false;
  await memento.update(OPENED_STATE, true);
  await openWalkthrough(services.context);
  return true;
}
