import type { KeyQuota } from '../../core/quota';
import { quotaDisplay, type QuotaDisplay } from '../quota';
import type { CommandContext, CommandDef } from './types';

/** What "Refresh Key Quota" returns: the figures, and what the status bar and the Models view show now. */
export interface QuotaCommandResult {
  display: QuotaDisplay;
  /** Absent when turned off, without a key, or when the gateway does not tell (the reason is in the log). */
  quota?: KeyQuota;
  statusBarText: string;
  statusBarTooltip: string;
  modelsViewDescription?: string;
}

/** Reads the key's quota now (read-only, unbilled) and updates where it is shown. */
export const refreshQuota: CommandDef = {
  id: 'modelGateway.refreshQuota',
  async run(ctx: CommandContext): Promise<QuotaCommandResult> {
    const result = await ctx.services.quota.refresh();
    await ctx.statusBar.update();
    ctx.models.updateHeader();
    const shown = ctx.statusBar.shown();
    return {
      display: quotaDisplay(),
      ...(result?.available ? { quota: result.quota } : {}),
      statusBarText: shown.text,
      statusBarTooltip: shown.tooltip,
      modelsViewDescription: ctx.models.headerText,
    };
  },
};
