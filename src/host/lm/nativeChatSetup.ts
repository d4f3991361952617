import * as vscode from 'vscode';
import { formatAmount } from '../../shared/format';
import type { Services } from '../services';
import { VENDOR } from './lmApi';
import {
  hasManageModels,
  MAIN_AGENT,
  MANAGE_MODELS_COMMAND,
  UTILITY_DEFAULT,
  UTILITY_MODEL,
  UTILITY_SMALL_MODEL,
  utilityModelState,
} from './nativeChatState';
import { chatModelsForVsCode, cheapestToolModel } from './modelInfo';

/**
 * What a signed-out user of VS Code's own Chat view (VS Code 1.139 and its bundled chat) must do
 * once before the gateway's models work there, offered in one click each:
 *
 * - Until **Chat: Manage Language Models** (`workbench.action.chat.manage`) has run once, the
 *   built-in chat stays disabled: sending opens a GitHub sign-in dialog, and setting our key does
 *   not change that. The command enables it and lists the provider's models.
 * - Without Copilot no utility model is set: titles and progress messages are not made and a box
 *   asks for one, until `chat.byokUtilityModelDefault` is `mainAgent` or `chat.utilityModel` /
 *   `chat.utilitySmallModel` name a model as `<vendor>/<id>`.
 *
 * Both are feature-detected (the command in the command list, the settings by their definition),
 * asked once per user (globalState), and the settings are written only on the user's click, as
 * user settings.
 */

const MANAGE_STATE = 'modelGateway.nativeChat.manageModels';
const UTILITY_STATE = 'modelGateway.nativeChat.utilityModelOffered';

type ManageState = 'offered' | 'opened';

/**
 * The button that opens Chat: Manage Language Models, where it helps: this VS Code has the
 * command and the user has not run it from here yet. `once`: not again after it was offered
 * (the prompt after Set API Key); otherwise as long as it was not run (Check Connection, which
 * the user asked for).
 */
export async function manageModelsAction(
  services: Services,
  once: boolean,
): Promise<{ label: string; run: () => Promise<void> } | undefined> {
  const state = services.context.globalState.get<ManageState>(MANAGE_STATE);
  if (state === 'opened' || (once && state === 'offered')) return undefined;
  if (!(await hasManageModels())) return undefined;
  await services.context.globalState.update(MANAGE_STATE, 'offered');
  return {
    label: vscode.l10n.t('Open Chat: Manage Language Models'),
    run: async () => {
      await services.context.globalState.update(MANAGE_STATE, 'opened');
      await vscode.commands.executeCommand(MANAGE_MODELS_COMMAND);
    },
  };
}

/** Runs Manage Language Models from one of our buttons, then offers the utility model (once). */
export async function openManageModels(services: Services, run: () => Promise<void>): Promise<void> {
  await run();
  await offerUtilityModel(services);
}

/**
 * Offers to choose a utility model once, when this VS Code has the settings and none is set
 * (called when the gateway's models are first used in the Chat view). Dismissing it is final; the
 * palette command asks again.
 */
export async function offerUtilityModel(services: Services): Promise<void> {
  const memento = services.context.globalState;
  if (memento.get<boolean>(UTILITY_STATE)) return;
  const state = utilityModelState();
  if (!state.known || state.set) return;
  await memento.update(UTILITY_STATE, true);
  const choose = vscode.l10n.t('Choose Utility Model…');
  const choice = await vscode.window.showInformationMessage(
    vscode.l10n.t(
      "VS Code's chat needs a utility model for titles and progress messages. Without Copilot, choose one; its requests go to the gateway and are billed.",
    ),
    choose,
  );
  if (choice === choose) await chooseUtilityModel(services);
}

export interface UtilityChoice {
  /** What was written: `mainAgent`, a model as `<vendor>/<id>`, or nothing. */
  chosen?: string;
  /** Why nothing was offered. */
  reason?: 'unsupported' | 'cancelled';
}

/**
 * The quick pick: the chat's own model (`mainAgent`), or the cheapest gateway chat model with tool
 * calling this key may use, with its price. The choice is written as a user setting.
 */
export async function chooseUtilityModel(services: Services): Promise<UtilityChoice> {
  if (!utilityModelState().known) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('This VS Code has no utility model settings for its chat; nothing to set.'),
    );
    return { reason: 'unsupported' };
  }
  const cheapest = cheapestToolModel(chatModelsForVsCode(services.registry.snapshot.models));
  type Item = vscode.QuickPickItem & { value: string };
  const items: Item[] = [
    {
      label: vscode.l10n.t("The chat's own model"),
      description: MAIN_AGENT,
      detail: vscode.l10n.t('Titles and progress messages are made by the model you chat with, at its price.'),
      value: MAIN_AGENT,
    },
  ];
  if (cheapest) {
    items.push({
      label: cheapest.model.name || cheapest.model.id,
      description: `${VENDOR}/${cheapest.model.id}`,
      detail: vscode.l10n.t(
        'Cheapest with tool calling: US${0} in, US${1} out per million tokens.',
        formatAmount(cheapest.input),
        formatAmount(cheapest.output),
      ),
      value: `${VENDOR}/${cheapest.model.id}`,
    });
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Model Gateway: Set Utility Model for VS Code Chat'),
    placeHolder: vscode.l10n.t(
      'Written to your user settings. Each title or summary is a request to the gateway, billed.',
    ),
  });
  if (!picked) return { reason: 'cancelled' };
  const chat = vscode.workspace.getConfiguration('chat');
  if (picked.value === MAIN_AGENT) {
    await chat.update(UTILITY_DEFAULT, MAIN_AGENT, vscode.ConfigurationTarget.Global);
  } else {
    await chat.update(UTILITY_MODEL, picked.value, vscode.ConfigurationTarget.Global);
    await chat.update(UTILITY_SMALL_MODEL, picked.value, vscode.ConfigurationTarget.Global);
  }
  services.log.info(`VS Code chat utility model set to ${picked.value} (user settings).`);
  return { chosen: picked.value };
}
