import * as z from 'zod/mini';
import type { KeyQuota } from '../../core/quota';
import { parseWith } from '../../core/validate';
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
  /** See QuotaWatcher.activity. */
  activity: { billedCalls: number; readPending: boolean };
}

/** `{read: false}` only reports what is shown, without asking the gateway. */
const refreshArgs = z.optional(z.object({ read: z.optional(z.boolean()) }));

/** Reads the key's quota now (read-only, unbilled) and updates where it is shown. */
export const refreshQuota: CommandDef = {
  id: 'modelGateway.refreshQuota',
  async run(ctx: CommandContext, arg): Promise<QuotaCommandResult> {
    const read = parseWith(refreshArgs, arg, 'The argument of "Refresh Key Quota"')?.read ?? true;
    if (read) await ctx.services.quota.refresh();
    await ctx.statusBar.update();
    ctx.models.updateHeader();
    const shown = ctx.statusBar.shown();
    const quota = ctx.services.quota.current;
    return {
      display: quotaDisplay(),
      ...(quota ? { quota } : {}),
      statusBarText: shown.text,
      statusBarTooltip: shown.tooltip,
      modelsViewDescription: ctx.models.headerText,
      activity: ctx.services.quota.activity,
    };
  },
};
