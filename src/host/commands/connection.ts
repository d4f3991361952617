import * as vscode from 'vscode';
import * as z from 'zod/mini';
import {
  buildReport,
  formatReport,
  keyChecks,
  reportFacts,
  summariseReport,
  type ConnectionReport,
} from '../../core/connection';
import { isGatewayError } from '../../core/errors';
import type { ChatProtocol, ModelKind } from '../../core/models/types';
import { parseWith } from '../../core/validate';
import { formatNumber } from '../../shared/format';
import { manageModelsAction, openManageModels } from '../lm/nativeChatSetup';
import { showError } from '../notify';
import type { Services } from '../services';
import type { CommandContext, CommandDef } from './types';

/**
 * `silent`: no notice (a script's check). `report`: the report itself instead of a notice that
 * offers it, for the status bar item's click: a notice would open under the pointer, where the
 * item's tooltip covers its buttons.
 */
const checkArgs = z.optional(z.object({ silent: z.optional(z.boolean()), report: z.optional(z.boolean()) }));

export const checkConnection: CommandDef = {
  id: 'modelGateway.checkConnection',
  async run(ctx: CommandContext, arg): Promise<ConnectionReport | { error: string }> {
    const args = parseWith(checkArgs, arg, vscode.l10n.t('The argument of "Check Connection"'));
    const silent = args?.silent ?? false;
    try {
      // Before anything else: the report says which workspace values were ignored.
      await ctx.services.checkOverrides();
      const base = ctx.services.base();
      const report = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: vscode.l10n.t('Model Gateway: checking the connection…'),
          cancellable: true,
        },
        async (_progress, token) => {
          const signal = abortSignalFor(token);
          const snap = await ctx.services.registry.refresh(signal);
          const report = buildReport(base, await ctx.services.keys.has(), await ctx.services.keys.masked(), snap);
          // Read-only and unbilled; a gateway without the endpoints leaves the line out.
          const quota = snap.keyModels ? await ctx.services.quota.refresh(signal) : undefined;
          // With several keys, each key is checked on its own: its list, its refusal, its quota.
          const masked = new Map((await ctx.services.keys.shown()).map((k) => [k.id, k.masked]));
          const keys =
            (snap.keyLists?.length ?? 0) > 1
              ? keyChecks(
                  snap,
                  (id) => masked.get(id) ?? '',
                  (id) => ctx.services.quota.forKey(id),
                )
              : undefined;
          return {
            ...report,
            ignoredSettings: [...ctx.services.overrides.notices],
            ...(quota?.available ? { quota: quota.quota } : {}),
            ...(keys ? { keys } : {}),
          };
        },
      );
      ctx.services.log.info(`Connection check:\n${formatReport(report)}`);
      if (!silent) {
        void showReport(report, ctx.services, args?.report ?? false).catch((err: unknown) =>
          ctx.services.log.warn(`The connection report could not be shown: ${messageOf(err)}`),
        );
      }
      return report;
    } catch (err) {
      return { error: silent ? messageOf(err) : showError(err, ctx.services.log) };
    }
  },
};

/** What the report offers to do next: set the key when it is missing or refused, or open Manage Language Models. */
interface NextStep {
  label: string;
  icon: string;
  run: () => Promise<unknown>;
}

/**
 * A short notice with the outcome; the facts behind it (address, key, models, quota, catalog,
 * ignored settings) are one "Show Report" away, one per line, instead of one run-on sentence.
 * `direct`: the report at once, without the notice.
 */
async function showReport(report: ConnectionReport, services: Services, direct: boolean): Promise<void> {
  const ok = report.keyAccepted === true && !report.catalogError;
  const steps: NextStep[] = [];
  if (report.keyAccepted === true) {
    // With a working key, VS Code's own Chat view needs Manage Language Models run once (until it is).
    const manage = await manageModelsAction(services, false);
    if (manage)
      steps.push({ label: manage.label, icon: 'settings', run: () => openManageModels(services, manage.run) });
  } else if (report.keyAccepted === false || !report.keySet) {
    steps.push({
      label: vscode.l10n.t('Set API Key'),
      icon: 'key',
      run: () => Promise.resolve(vscode.commands.executeCommand('modelGateway.setApiKey')),
    });
  }
  if (direct) return showFacts(report, services, steps);
  const details = vscode.l10n.t('Show Report');
  const show = ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  const choice = await show(summariseReport(report), ...steps.map((s) => s.label), details);
  if (choice === details) await showFacts(report, services, steps);
  else await steps.find((s) => s.label === choice)?.run();
}

const FACT_ICONS = { ok: 'pass', problem: 'warning', info: 'info' } as const;

/** The report's facts in a list: each fact its own row, named, its value below; then the next steps and the log. */
async function showFacts(report: ConnectionReport, services: Services, steps: NextStep[]): Promise<void> {
  const showLog = vscode.l10n.t('Show the log');
  const items: (vscode.QuickPickItem & { run?: () => Promise<unknown> })[] = reportFacts(report).map((f) => ({
    label: `$(${FACT_ICONS[f.state]}) ${f.label}`,
    // The value on a line of its own: a quota or a problem is too long to sit beside the label.
    detail: f.detail ? `${f.value} (${f.detail})` : f.value,
  }));
  items.push(
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    ...steps.map((s) => ({ label: `$(${s.icon}) ${s.label}`, run: s.run })),
    { label: `$(output) ${showLog}`, run: () => Promise.resolve(services.log.show(true)) },
  );
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Model Gateway: Connection Report'),
    placeHolder: summariseReport(report),
    matchOnDescription: true,
    matchOnDetail: true,
  });
  await picked?.run?.();
}

export interface ModelSummary {
  id: string;
  name: string;
  provider: string;
  kind: ModelKind;
  protocols: ChatProtocol[];
  available: boolean;
}

export const refreshModels: CommandDef = {
  id: 'modelGateway.refreshModels',
  async run(ctx: CommandContext): Promise<ModelSummary[]> {
    ctx.services.ensureCatalogTimer();
    try {
      // The Models view shows its progress bar while the lists load, then the result is said.
      const snap = await vscode.window.withProgress(
        { location: { viewId: 'modelGateway.models' }, title: vscode.l10n.t('Refreshing the models…') },
        () => ctx.services.registry.refresh(),
      );
      if (snap.keyError && snap.keyError.kind !== 'cancelled') showError(snap.keyError, ctx.services.log);
      else if (snap.keyModels) {
        const available = snap.models.filter((m) => m.available).length;
        void vscode.window.showInformationMessage(
          available === 1
            ? vscode.l10n.t('Models refreshed: 1 model is available to this key.')
            : vscode.l10n.t('Models refreshed: {0} models are available to this key.', formatNumber(available)),
        );
      }
      if (snap.catalogError) showError(snap.catalogError, ctx.services.log);
      return snap.models.map((m) => ({
        id: m.id,
        name: m.name,
        provider: m.provider,
        kind: m.kind,
        protocols: m.protocols,
        available: m.available,
      }));
    } catch (err) {
      showError(err, ctx.services.log);
      return [];
    }
  },
};

/** Forgets the protocols the relay refused (per gateway and model): each model offers every protocol its gateway lists again. */
export const resetProtocolRefusals: CommandDef = {
  id: 'modelGateway.resetProtocolRefusals',
  async run(ctx: CommandContext) {
    try {
      await ctx.services.registry.resetRefusals();
      void vscode.window.showInformationMessage(
        vscode.l10n.t(
          'Remembered protocol refusals were reset: every model offers each protocol its gateway lists again.',
        ),
      );
      return { reset: true };
    } catch (err) {
      return { reset: false, error: showError(err, ctx.services.log) };
    }
  },
};

export const refreshCatalog: CommandDef = {
  id: 'modelGateway.refreshCatalog',
  async run(ctx: CommandContext) {
    ctx.services.ensureCatalogTimer();
    try {
      const snap = await ctx.services.registry.refresh();
      if (!ctx.services.settings().catalogUrl) {
        void vscode.window.showInformationMessage(
          vscode.l10n.t(
            'No catalog address is set ("modelGateway.catalogUrl"); models come from the key\'s own list only.',
          ),
        );
        return { configured: false };
      }
      if (snap.catalogError) {
        showError(snap.catalogError, ctx.services.log);
        return { configured: true, error: snap.catalogError.message };
      }
      const c = snap.catalog;
      if (c?.problem)
        void vscode.window.showWarningMessage(vscode.l10n.t('Using the cached catalog: {0}', c.problem.message));
      return c
        ? {
            configured: true,
            url: c.url,
            format: c.format,
            models: c.entries.length,
            source: c.source,
            fetchedAt: c.fetchedAt,
            problem: c.problem?.message,
          }
        : { configured: true };
    } catch (err) {
      return { configured: true, error: showError(err, ctx.services.log) };
    }
  },
};

export const openSettings: CommandDef = {
  id: 'modelGateway.openSettings',
  run() {
    return vscode.commands.executeCommand('workbench.action.openSettings', '@ext:model-gateway.model-gateway');
  },
};

export const showLog: CommandDef = {
  id: 'modelGateway.showLog',
  run(ctx: CommandContext) {
    ctx.services.log.show(true);
  },
};

export function abortSignalFor(token: vscode.CancellationToken): AbortSignal {
  const controller = new AbortController();
  if (token.isCancellationRequested) controller.abort();
  token.onCancellationRequested(() => controller.abort());
  return controller.signal;
}

function messageOf(err: unknown): string {
  return isGatewayError(err) ? err.describe() : err instanceof Error ? err.message : String(err);
}
