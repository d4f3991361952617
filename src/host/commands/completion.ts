import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { costPer100 } from '../../core/completion/cost';
import { afterKeyOffer, completionCandidates } from '../../core/completion/offer';
import { GatewayError } from '../../core/errors';
import type { ModelInfo } from '../../core/models/types';
import { parseWith } from '../../core/validate';
import { formatNumber } from '../../shared/format';
import { COMPLETIONS, SNOOZE_MS } from '../completion/switch';
import { loadModelsOnFirstUse } from '../setup';
import type { CommandContext, CommandDef } from './types';
import { words } from '../../shared/words';

/**
 * Inline completion's commands: the offer ("Code completion with <model>", with what 100
 * completions cost at its prices), the on/off switch, the menu of the status item (snooze for an
 * hour, the model, the languages), and `completeAt`, which returns the items the provider would show
 * at a place of a document, for tests and scripts.
 */

async function update(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration(COMPLETIONS).update(key, value, vscode.ConfigurationTarget.Global);
}

/** The model: its id, or the Models view's item. */
const modelArg = z.optional(
  z.union([z.string(), z.object({ model: z.union([z.string(), z.object({ id: z.string() })]) })]),
);
const chooseId = 'modelGateway.chooseCompletionModel';

/** "about US$0.02 per 100 completions", or that the price is not known. */
export function priceNote(model: ModelInfo): string {
  const usd = costPer100(model.catalog?.cost);
  return usd === undefined
    ? vscode.l10n.t('price not known here')
    : vscode.l10n.t('about US${0} per 100 completions', formatNumber(usd, usd < 0.1 ? 3 : 2));
}

/** The offer: the chat models, those that take fill-in-the-middle first; the chosen one turns completion on. */
async function offer(ctx: CommandContext, arg: unknown): Promise<string | undefined> {
  const models = await loadModelsOnFirstUse(ctx.services, 'the Models view');
  const refused = await ctx.services.refusals.load(ctx.services.http().endpoints.origin).catch(() => ({}));
  const candidates = completionCandidates(models, refused);
  const given = parseWith(modelArg, arg, vscode.l10n.t('The argument of "{0}"', chooseId));
  const id =
    given === undefined || typeof given === 'string'
      ? given
      : typeof given.model === 'string'
        ? given.model
        : given.model.id;
  let model = id === undefined ? undefined : candidates.find((c) => c.model.id === id)?.model;
  if (id !== undefined && !model)
    throw new GatewayError('badRequest', words('{0} is not a chat model this key may use.', id));
  if (!model) {
    const pick = await vscode.window.showQuickPick(
      candidates.map((c) => ({
        label: vscode.l10n.t('Code completion with {0}', c.model.id),
        description: priceNote(c.model),
        detail: c.fim
          ? vscode.l10n.t('Fill-in-the-middle: made for completion.')
          : vscode.l10n.t('A chat model: it completes slower and worse than a fill-in-the-middle model.'),
        model: c.model,
      })),
      {
        title: vscode.l10n.t('Code completion through the gateway'),
        placeHolder: vscode.l10n.t('Pick the model that completes your code'),
      },
    );
    model = pick?.model;
  }
  if (!model) return undefined;
  await update('model', model.id);
  await update('enabled', true);
  return model.id;
}

const OFFERED_AFTER_KEY = 'completions.offeredAfterKey';

/**
 * The one offer made after a key is set (once the key's models are known): "Code completion with
 * <model>", a fill-in-the-middle model, with its price. Made once per user: whatever the answer,
 * dismissing it included, it is not made again (the palette, the status item and the Models view
 * still offer completion). Returns the model offered, if one was.
 */
export async function offerCompletionAfterKey(ctx: CommandContext): Promise<string | undefined> {
  const memento = ctx.services.context.globalState;
  const refused = await ctx.services.refusals.load(ctx.services.http().endpoints.origin).catch(() => ({}));
  const model = afterKeyOffer(ctx.services.registry.snapshot.models, refused, {
    chosenModel: ctx.completions.settings().model,
    offeredBefore: memento.get<boolean>(OFFERED_AFTER_KEY) === true,
  });
  if (!model) return undefined;
  await memento.update(OFFERED_AFTER_KEY, true);
  const turnOn = vscode.l10n.t('Turn On');
  const other = vscode.l10n.t('Another Model…');
  void vscode.window
    .showInformationMessage(
      vscode.l10n.t(
        'Code completion with {0} ({1}): suggestions as you type, through the gateway. Nothing is sent before you turn it on.',
        model.id,
        priceNote(model),
      ),
      turnOn,
      other,
    )
    .then((choice) => (choice === turnOn ? offer(ctx, model.id) : choice === other ? offer(ctx, undefined) : undefined))
    .then(undefined, (err: unknown) => ctx.services.log.warn(`Turning code completion on failed: ${String(err)}`));
  return model.id;
}

export const chooseCompletionModel: CommandDef = {
  id: chooseId,
  run: async (ctx, arg) => ({ model: await offer(ctx, arg) }),
};

export const toggleCompletions: CommandDef = {
  id: 'modelGateway.toggleCompletions',
  async run(ctx) {
    const s = ctx.completions.settings();
    if (!s.model) return { enabled: (await offer(ctx, undefined)) !== undefined };
    await update('enabled', !s.enabled);
    if (!s.enabled) await ctx.completions.snooze(0);
    return { enabled: !s.enabled };
  },
};

export const completionMenu: CommandDef = {
  id: 'modelGateway.completionMenu',
  async run(ctx) {
    const s = ctx.completions.settings();
    const language = vscode.window.activeTextEditor?.document.languageId;
    const snoozed = ctx.completions.snoozedUntil > Date.now();
    type Item = vscode.QuickPickItem & { act: () => Promise<unknown> };
    const items: Item[] = [
      s.enabled && s.model
        ? { label: `$(circle-slash) ${vscode.l10n.t('Turn code completion off')}`, act: () => update('enabled', false) }
        : {
            label: `$(sparkle) ${vscode.l10n.t('Turn code completion on')}`,
            act: () => toggleCompletions.run(ctx) as Promise<unknown>,
          },
      snoozed
        ? { label: `$(play) ${vscode.l10n.t('Resume code completion')}`, act: () => ctx.completions.snooze(0) }
        : {
            label: `$(clock) ${vscode.l10n.t('Snooze code completion for an hour')}`,
            act: () => ctx.completions.snooze(Date.now() + SNOOZE_MS),
          },
      {
        label: `$(symbol-method) ${vscode.l10n.t('Choose the completion model…')}`,
        description: s.model,
        act: () => offer(ctx, undefined),
      },
    ];
    if (language) {
      const on = s.languages[language] !== false;
      items.push({
        label: on
          ? `$(eye-closed) ${vscode.l10n.t('Turn code completion off for {0}', language)}`
          : `$(eye) ${vscode.l10n.t('Turn code completion on for {0}', language)}`,
        act: () => update('languages', { ...s.languages, [language]: !on }),
      });
    }
    const pick = await vscode.window.showQuickPick(items, { title: ctx.completions.shown().tooltip.split('\n')[0] });
    await pick?.act();
    return { picked: pick?.label };
  },
};

const placeArg = z.object({
  uri: z.string(),
  position: z.object({ line: z.number(), character: z.number() }),
});

/** The items the provider would show at `{uri, position}`: `{insertText, range}` each (none while off). */
export const completeAt: CommandDef = {
  id: 'modelGateway.completeAt',
  async run(ctx, arg) {
    const place = parseWith(placeArg, arg, vscode.l10n.t('The argument of "{0}"', 'modelGateway.completeAt'));
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(place.uri));
    if (!ctx.completions.on(document.languageId)) return [];
    const position = document.validatePosition(new vscode.Position(place.position.line, place.position.character));
    const source = new vscode.CancellationTokenSource();
    try {
      const items = await ctx.completion.provide(
        document,
        position,
        { triggerKind: vscode.InlineCompletionTriggerKind.Invoke, selectedCompletionInfo: undefined },
        source.token,
      );
      return (items ?? []).map((i) => ({
        insertText: typeof i.insertText === 'string' ? i.insertText : i.insertText.value,
        range: i.range && {
          start: { line: i.range.start.line, character: i.range.start.character },
          end: { line: i.range.end.line, character: i.range.end.character },
        },
      }));
    } finally {
      source.dispose();
    }
  },
};

export const completionCommands: readonly CommandDef[] = [
  chooseCompletionModel,
  toggleCompletions,
  completionMenu,
  completeAt,
];
