import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { checkApiKey, maskKey } from '../../core/config';
import { parseWith } from '../../core/validate';
import { manageModelsAction, openManageModels } from '../lm/nativeChatSetup';
import { showError } from '../notify';
import { offerCompletionAfterKey } from './completion';
import type { Services } from '../services';
import type { CommandContext, CommandDef } from './types';

/** The key alone (the first key's, or "default" when there is none), or with the name of the key it is for (added when new). */
const setArgs = z.optional(z.union([z.string(), z.object({ key: z.string(), name: z.optional(z.string()) })]));

export interface SetKeyResult {
  stored: boolean;
  masked?: string;
  /** Why the key was refused, when it was. */
  reason?: string;
  /** Spaces or line breaks around the key were removed (nothing inside it is ever changed). */
  trimmed?: boolean;
  /** The name of the key that was set. */
  name?: string;
}

export const setApiKey: CommandDef = {
  id: 'modelGateway.setApiKey',
  async run(ctx: CommandContext, arg): Promise<SetKeyResult> {
    const given = parseWith(setArgs, arg, vscode.l10n.t('The argument of "Set API Key"'));
    const raw = typeof given === 'string' ? given : given?.key;
    const keys = await ctx.services.keys.list();
    const named = typeof given === 'object' ? given.name : undefined;
    // With several keys, which one this replaces: the one named, else the one the user picks.
    let target =
      named === undefined
        ? undefined
        : keys.find((k) => k.name.toLocaleLowerCase() === named.trim().toLocaleLowerCase());
    if (named !== undefined && !target) {
      const check = checkApiKey(raw ?? '');
      if (!check.ok) return { stored: false, reason: check.reason };
      const entry = await ctx.services.keys.add(named, check.key);
      return { stored: true, masked: maskKey(check.key), trimmed: check.trimmed, name: entry.name };
    }
    if (!target && raw === undefined && keys.length > 1) {
      const shown = await ctx.services.keys.shown();
      const pick = await vscode.window.showQuickPick(
        shown.map((k) => ({ label: k.name, description: k.masked, key: k })),
        {
          title: vscode.l10n.t('Model Gateway: Set API Key'),
          placeHolder: vscode.l10n.t('Which key to replace (Add API Key adds another)'),
        },
      );
      if (!pick) return { stored: false, reason: 'cancelled' };
      target = pick.key;
    }
    const input =
      raw ??
      (await vscode.window.showInputBox({
        title: vscode.l10n.t('Model Gateway: Set API Key'),
        prompt: vscode.l10n.t(
          "Paste the API key exactly as copied from the console's API Keys page. It is kept in VS Code's secret storage only.",
        ),
        password: true,
        ignoreFocusOut: true,
        validateInput: (value) => {
          if (!value) return undefined;
          const check = checkApiKey(value);
          return check.ok ? undefined : { message: check.reason, severity: vscode.InputBoxValidationSeverity.Error };
        },
      }));
    if (input === undefined) return { stored: false, reason: 'cancelled' };
    const check = checkApiKey(input);
    if (!check.ok) {
      void vscode.window.showErrorMessage(vscode.l10n.t('The API key was not saved. {0}', check.reason));
      return { stored: false, reason: check.reason };
    }
    const entry = await ctx.services.keys.set(check.key, target?.id);
    const masked = maskKey(check.key);
    ctx.services.log.info(`API key ${masked} stored${check.trimmed ? ' (surrounding whitespace removed)' : ''}.`);
    if (raw === undefined) {
      const saved = check.trimmed
        ? vscode.l10n.t('API key {0} saved (spaces around it were removed).', masked)
        : vscode.l10n.t('API key {0} saved.', masked);
      void announceKey(ctx.services, saved);
      // Once the key's models are known: the one offer of code completion (made once per user).
      void verifyKey(ctx.services)
        .then(() => offerCompletionAfterKey(ctx))
        .catch((err: unknown) => ctx.services.log.warn(`The code completion offer failed: ${String(err)}`));
    }
    return { stored: true, masked, trimmed: check.trimmed, name: entry.name };
  },
};

/**
 * "Saved", with Check Connection and, the first time where VS Code has its own Chat view, the one
 * command that makes the gateway's models usable there for a signed-out user.
 */
async function announceKey(services: Services, saved: string): Promise<void> {
  const check = vscode.l10n.t('Check Connection');
  const manage = await manageModelsAction(services, true).catch((err: unknown) => {
    services.log.warn(`Looking for VS Code's Chat view failed: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  });
  // The next step of the first run is the first button, which VS Code shows as the primary one.
  const choice = await vscode.window.showInformationMessage(saved, ...(manage ? [manage.label] : []), check);
  if (choice === check) await vscode.commands.executeCommand('modelGateway.checkConnection');
  if (manage && choice === manage.label) await openManageModels(services, manage.run);
}

/**
 * A key typed in by hand is checked at once with the free model list, so the status bar shows
 * whether it works and a refused key is reported now rather than at the first chat.
 */
async function verifyKey(services: Services): Promise<void> {
  if (!services.settings().baseUrl.trim()) return;
  try {
    const snap = await services.registry.refresh();
    if (snap.keyError?.kind === 'auth' && snap.keyError.status !== undefined) showError(snap.keyError, services.log);
  } catch (err) {
    services.log.warn(`Checking the new key failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `{all: true}` removes every key without asking (scripts, tests); with no argument several keys are asked about. */
const clearArgs = z.optional(z.object({ all: z.boolean() }));

export interface ClearKeyResult {
  cleared: boolean;
  /** The names of the keys removed. */
  removed: string[];
}

/**
 * Removes the key, or with several keys the one the user picks or all of them (the first choice
 * says how many), and says which were removed.
 */
export const clearApiKey: CommandDef = {
  id: 'modelGateway.clearApiKey',
  async run(ctx: CommandContext, arg): Promise<ClearKeyResult> {
    const given = parseWith(clearArgs, arg, vscode.l10n.t('The argument of "{0}"', vscode.l10n.t('Clear API Key')));
    const shown = await ctx.services.keys.shown();
    let removed = shown;
    if (shown.length > 1 && !given?.all) {
      const all = { label: vscode.l10n.t('All {0} keys', shown.length), keys: shown };
      const pick = await vscode.window.showQuickPick(
        [all, ...shown.map((k) => ({ label: k.name, description: k.masked, keys: [k] }))],
        {
          title: vscode.l10n.t('Model Gateway: Clear API Key'),
          placeHolder: vscode.l10n.t('Which key to remove from this computer'),
        },
      );
      if (!pick) return { cleared: false, removed: [] };
      removed = pick.keys;
    }
    if (removed.length === shown.length) await ctx.services.keys.clear();
    else for (const key of removed) await ctx.services.keys.remove(key.id);
    ctx.services.log.info(`API keys removed: ${removed.map((k) => `"${k.name}"`).join(', ') || 'none was stored'}.`);
    const named = removed.map((k) => vscode.l10n.t('"{0}" ({1})', k.name, k.masked)).join(', ');
    void vscode.window.showInformationMessage(
      removed.length === 0
        ? vscode.l10n.t('No API key was stored.')
        : removed.length === 1
          ? vscode.l10n.t('API key {0} was removed from secret storage.', named)
          : vscode.l10n.t('All {0} API keys were removed from secret storage: {1}.', removed.length, named),
    );
    return { cleared: removed.length > 0, removed: removed.map((k) => k.name) };
  },
};
