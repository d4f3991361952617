import * as vscode from 'vscode';
import type { ModelInfo } from '../core/models/types';
import type { Services } from './services';

/**
 * What the chat and the Media Studio share before they can work: the model list loaded on first
 * use (never on activation), the notice that says why they cannot work yet (no address, no key,
 * models loading, the key refused, no suitable model) and the actions that notice offers.
 */

export type SetupAction = 'setKey' | 'openSettings' | 'refreshModels';

export interface SetupNotice {
  message: string;
  action?: SetupAction;
}

/** Loads the key's models once if nothing was loaded yet; a failure is logged and shown by the notice. */
export async function loadModelsOnFirstUse(services: Services, purpose: string): Promise<readonly ModelInfo[]> {
  const registry = services.registry;
  if (registry.snapshot.updatedAt === 0) {
    services.ensureCatalogTimer();
    await registry
      .refresh()
      .catch((err: unknown) => services.log.warn(`Model refresh for ${purpose} failed: ${String(err)}`));
  }
  return registry.snapshot.models;
}

/**
 * Why a view cannot be used right now, with the one action that fixes it; undefined when it can.
 * `texts` are the view's own words for the missing address, key and models.
 */
export async function setupNotice(
  services: Services,
  usableModels: number,
  texts: { noBase: string; noKey: string; noModels: string },
): Promise<SetupNotice | undefined> {
  if (!services.settings().baseUrl.trim()) return { message: texts.noBase, action: 'openSettings' };
  if (!(await services.keys.has())) return { message: texts.noKey, action: 'setKey' };
  const snap = services.registry.snapshot;
  if (snap.updatedAt === 0) return { message: vscode.l10n.t('Loading the models this key may use…') };
  if (snap.keyError)
    return { message: snap.keyError.message, action: snap.keyError.kind === 'auth' ? 'setKey' : 'refreshModels' };
  if (usableModels === 0) return { message: texts.noModels, action: 'refreshModels' };
  return undefined;
}

/** Runs a notice's action. */
export async function runSetupAction(action: SetupAction): Promise<void> {
  const command = {
    setKey: 'modelGateway.setApiKey',
    openSettings: 'modelGateway.openSettings',
    refreshModels: 'modelGateway.refreshModels',
  }[action];
  await vscode.commands.executeCommand(command);
}
