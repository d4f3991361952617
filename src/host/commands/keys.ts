import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { checkApiKey, maskKey } from '../../core/config';
import { GatewayError } from '../../core/errors';
import { keyNameProblem, type KeyEntry } from '../../core/keys';
import { parseWith } from '../../core/validate';
import { loadModelsOnFirstUse } from '../setup';
import type { Services } from '../services';
import type { CommandContext, CommandDef } from './types';
import { words } from '../../shared/words';

/**
 * Several named keys: add, rename, remove and reorder them, and pick the key a model is called
 * with. Each takes a Models view item, `{key: name or id}` or nothing (then asks), so they can be
 * scripted as well as clicked.
 */

const keyRef = z.union([z.string(), z.object({ key: z.union([z.string(), z.object({ id: z.string() })]) })]);

/** The key an argument names (by id or name), or the one the user picks; undefined when cancelled. */
async function keyFor(services: Services, arg: unknown, what: string): Promise<KeyEntry | undefined> {
  const keys = await services.keys.list();
  if (arg !== undefined) {
    const given = parseWith(z.optional(keyRef), arg, vscode.l10n.t('The argument of "{0}"', what));
    const ref = typeof given === 'string' ? given : typeof given?.key === 'string' ? given.key : given?.key.id;
    const key =
      keys.find((k) => k.id === ref) ?? keys.find((k) => k.name.toLocaleLowerCase() === ref?.toLocaleLowerCase());
    if (!key) throw new GatewayError('badRequest', words('There is no key named "{0}".', ref ?? ''));
    return key;
  }
  if (!keys.length)
    throw new GatewayError(
      'auth',
      words('No API key is set. Run "Model Gateway: Set API Key" and paste the key from the console.'),
    );
  const shown = await services.keys.shown();
  const pick = await vscode.window.showQuickPick(
    shown.map((k) => ({ label: k.name, description: k.masked, key: k as KeyEntry })),
    { title: what, placeHolder: vscode.l10n.t('Pick a key') },
  );
  return pick?.key;
}

function askName(
  title: string,
  keys: readonly KeyEntry[],
  value?: string,
  except?: string,
): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title,
    prompt: vscode.l10n.t(
      'A name for the key, e.g. "default" or "team-claude". Only the name and the last four characters of the key are ever shown.',
    ),
    value,
    ignoreFocusOut: true,
    validateInput: (v) => keyNameProblem(v, keys, except),
  });
}

/**
 * The keys changed: each key's model list (and so the Models view, the status bar and which key a
 * model goes with) is read again now, as after Set API Key, rather than when a view next asks.
 */
async function reloadModels(services: Services): Promise<void> {
  if (!services.settings().baseUrl.trim()) return;
  await services.registry
    .refresh()
    .catch((err: unknown) =>
      services.log.warn(
        `Reading the models after a key change failed: ${err instanceof Error ? err.message : String(err)}`,
      ),
    );
}

const addArgs = z.optional(z.object({ name: z.string(), key: z.string() }));

export const addApiKey: CommandDef = {
  id: 'modelGateway.addApiKey',
  async run(ctx: CommandContext, arg): Promise<{ added: boolean; name?: string; masked?: string; reason?: string }> {
    const given = parseWith(addArgs, arg, vscode.l10n.t('The argument of "{0}"', vscode.l10n.t('Add API Key')));
    const keys = await ctx.services.keys.list();
    const title = vscode.l10n.t('Model Gateway: Add API Key');
    const name = given?.name ?? (await askName(title, keys));
    if (name === undefined) return { added: false, reason: 'cancelled' };
    const problem = keyNameProblem(name, keys);
    if (problem) throw new GatewayError('badRequest', problem);
    const raw =
      given?.key ??
      (await vscode.window.showInputBox({
        title,
        prompt: vscode.l10n.t(
          'Paste the API key for "{0}" exactly as copied from the console. It is kept in VS Code\'s secret storage only.',
          name.trim(),
        ),
        password: true,
        ignoreFocusOut: true,
        validateInput: (value) =>
          !value || checkApiKey(value).ok ? undefined : (checkApiKey(value) as { reason: string }).reason,
      }));
    if (raw === undefined) return { added: false, reason: 'cancelled' };
    const check = checkApiKey(raw);
    if (!check.ok) throw new GatewayError('badRequest', words('The API key was not saved. {0}', check.reason));
    const entry = await ctx.services.keys.add(name, check.key);
    const masked = maskKey(check.key);
    ctx.services.log.info(`API key "${entry.name}" (${masked}) added.`);
    await reloadModels(ctx.services);
    if (!given)
      void vscode.window.showInformationMessage(
        vscode.l10n.t(
          'API key "{0}" ({1}) added. Models it lists that no earlier key lists are called with it.',
          entry.name,
          masked,
        ),
      );
    return { added: true, name: entry.name, masked };
  },
};

const renameArgs = z.optional(z.object({ key: z.string(), name: z.string() }));

export const renameApiKey: CommandDef = {
  id: 'modelGateway.renameApiKey',
  async run(ctx: CommandContext, arg): Promise<{ renamed: boolean; name?: string }> {
    const title = vscode.l10n.t('Rename API Key');
    const scripted = z.safeParse(renameArgs, arg);
    const key = await keyFor(ctx.services, scripted.success && scripted.data ? scripted.data.key : arg, title);
    if (!key) return { renamed: false };
    const name =
      scripted.success && scripted.data
        ? scripted.data.name
        : await askName(title, await ctx.services.keys.list(), key.name, key.id);
    if (name === undefined) return { renamed: false };
    await ctx.services.keys.rename(key.id, name);
    await reloadModels(ctx.services);
    return { renamed: true, name: name.trim() };
  },
};

export const removeApiKey: CommandDef = {
  id: 'modelGateway.removeApiKey',
  async run(ctx: CommandContext, arg): Promise<{ removed: boolean }> {
    const key = await keyFor(ctx.services, arg, vscode.l10n.t('Remove API Key'));
    if (!key) return { removed: false };
    if (arg === undefined || typeof arg === 'object') {
      const remove = vscode.l10n.t('Remove');
      const choice = await vscode.window.showWarningMessage(
        vscode.l10n.t(
          'Remove the API key "{0}" from this computer? Conversations that use it ask for another model, and its video tasks and uploaded files can no longer be reached from here.',
          key.name,
        ),
        { modal: true },
        remove,
      );
      if (choice !== remove) return { removed: false };
    }
    await ctx.services.keys.remove(key.id);
    ctx.services.log.info(`API key "${key.name}" removed.`);
    await reloadModels(ctx.services);
    return { removed: true };
  },
};

function moveCommand(id: string, delta: -1 | 1, title: () => string): CommandDef {
  return {
    id,
    async run(ctx: CommandContext, arg): Promise<{ order: string[] }> {
      const key = await keyFor(ctx.services, arg, title());
      if (key) {
        await ctx.services.keys.move(key.id, delta);
        await reloadModels(ctx.services);
      }
      return { order: (await ctx.services.keys.list()).map((k) => k.name) };
    },
  };
}

export const moveApiKeyUp = moveCommand('modelGateway.moveApiKeyUp', -1, () => vscode.l10n.t('Move Key Up'));
export const moveApiKeyDown = moveCommand('modelGateway.moveApiKeyDown', 1, () => vscode.l10n.t('Move Key Down'));

const useKeyArgs = z.optional(
  z.union([
    z.string(),
    z.object({ model: z.union([z.string(), z.object({ id: z.string() })]), key: z.optional(z.nullable(z.string())) }),
  ]),
);

/**
 * The model a key is picked for: the one the argument names, or (from the Command Palette, with no
 * argument) the one the user picks among those more than one key lists; undefined when cancelled or
 * when no model gives a choice (the user is told why).
 */
async function modelToChooseKeyFor(ctx: CommandContext, given: z.infer<typeof useKeyArgs>, title: string) {
  if (given !== undefined)
    return typeof given === 'string' ? given : typeof given.model === 'string' ? given.model : given.model.id;
  const models = await loadModelsOnFirstUse(ctx.services, 'Call Model with Key');
  const shared = models.filter((m) => (m.keyIds?.length ?? 0) > 1);
  if (!shared.length) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t(
        'No model is listed by more than one of your keys, so there is no key to choose: each model is called with the key that lists it.',
      ),
    );
    return undefined;
  }
  const names = new Map((await ctx.services.keys.list()).map((k) => [k.id, k.name]));
  const pick = await vscode.window.showQuickPick(
    shared.map((m) => ({
      label: m.id,
      description: m.keyId ? vscode.l10n.t('called with {0}', names.get(m.keyId) ?? m.keyId) : undefined,
      id: m.id,
    })),
    { title, placeHolder: vscode.l10n.t('Pick the model to choose a key for (models more than one key lists)') },
  );
  return pick?.id;
}

/** Calls a model that several keys list with the key the user picks (or, `key: null`, the first in order again). */
export const useKeyForModel: CommandDef = {
  id: 'modelGateway.useKeyForModel',
  async run(ctx: CommandContext, arg): Promise<{ model: string; key?: string } | undefined> {
    const title = vscode.l10n.t('Call Model with Key');
    const given = parseWith(useKeyArgs, arg, vscode.l10n.t('The argument of "{0}"', title));
    const modelId = await modelToChooseKeyFor(ctx, given, title);
    if (modelId === undefined) return undefined;
    const model = ctx.services.registry.find(modelId);
    if (!model?.keyIds?.length)
      throw new GatewayError('modelUnavailable', words('{0} is not a model any of your keys may use.', modelId));
    const keys = (await ctx.services.keys.list()).filter((k) => model.keyIds?.includes(k.id));
    let chosen: string | null | undefined = given === undefined || typeof given === 'string' ? undefined : given.key;
    if (chosen === undefined) {
      const pick = await vscode.window.showQuickPick(
        keys.map((k, i) => ({
          label: k.name,
          description: i === 0 ? vscode.l10n.t('first in your order') : undefined,
          picked: k.id === model.keyId,
          id: k.id,
        })),
        { title, placeHolder: vscode.l10n.t('Which key {0} is called with', modelId) },
      );
      if (!pick) return undefined;
      chosen = pick.id === keys[0]?.id ? null : pick.id;
    }
    const key = chosen === null ? undefined : keys.find((k) => k.id === chosen || k.name === chosen);
    if (chosen !== null && !key)
      throw new GatewayError('badRequest', words('No key of yours named "{0}" lists {1}.', chosen, modelId));
    await ctx.services.keys.chooseForModel(modelId, key?.id);
    ctx.services.registry.chooseKey(modelId, key?.id);
    await reloadModels(ctx.services);
    return { model: modelId, key: (key ?? keys[0])?.name };
  },
};

export const keyCommands: readonly CommandDef[] = [
  addApiKey,
  renameApiKey,
  removeApiKey,
  moveApiKeyUp,
  moveApiKeyDown,
  useKeyForModel,
];
