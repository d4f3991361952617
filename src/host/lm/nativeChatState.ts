import * as vscode from 'vscode';

/**
 * What this VS Code's own chat has and what the user set there, read without loading the chat
 * provider (the walkthrough reads it at start-up; see nativeChatSetup.ts for why each matters).
 */

export const MANAGE_MODELS_COMMAND = 'workbench.action.chat.manage';

/** The utility model settings of VS Code's chat, in the `chat` section. */
export const UTILITY_DEFAULT = 'byokUtilityModelDefault';
export const UTILITY_MODEL = 'utilityModel';
export const UTILITY_SMALL_MODEL = 'utilitySmallModel';
export const MAIN_AGENT = 'mainAgent';

/** Whether this VS Code has the Chat view's Manage Language Models command. */
export async function hasManageModels(): Promise<boolean> {
  return (await vscode.commands.getCommands(true)).includes(MANAGE_MODELS_COMMAND);
}

/** Whether this VS Code has the utility model settings, and whether the user has set any of them. */
export function utilityModelState(): { known: boolean; set: boolean } {
  const chat = vscode.workspace.getConfiguration('chat');
  let known = false;
  let set = false;
  for (const key of [UTILITY_DEFAULT, UTILITY_MODEL, UTILITY_SMALL_MODEL]) {
    const inspected = chat.inspect<unknown>(key);
    // A setting this VS Code does not define has no default value.
    if (!inspected || inspected.defaultValue === undefined) continue;
    known = true;
    const chosen = [inspected.globalValue, inspected.workspaceValue, inspected.workspaceFolderValue].find(
      (v) => v !== undefined && v !== '' && v !== inspected.defaultValue,
    );
    if (chosen !== undefined) set = true;
  }
  return { known, set };
}
