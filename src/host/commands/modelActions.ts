import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { GatewayError } from '../../core/errors';
import type { ModelInfo, ModelKind } from '../../core/models/types';
import { parseWith } from '../../core/validate';
import { loadModelsOnFirstUse } from '../setup';
import type { CommandContext, CommandDef } from './types';

/**
 * "Chat with this model" and "Generate with this model" on the Models view's items (and in the
 * palette, where they ask which model). The argument is the view's item, `{model: id}` or the id.
 */
const modelArg = z.optional(
  z.union([z.string(), z.object({ model: z.union([z.string(), z.object({ id: z.string() })]) })]),
);

function givenId(arg: unknown, what: string): string | undefined {
  const given = parseWith(modelArg, arg, vscode.l10n.t('The argument of "{0}"', what));
  if (given === undefined || typeof given === 'string') return given;
  return typeof given.model === 'string' ? given.model : given.model.id;
}

/** The available model of one of `kinds` the argument names, or the one the user picks. */
async function modelFor(
  ctx: CommandContext,
  arg: unknown,
  kinds: readonly ModelKind[],
  what: string,
  notListed: (id: string) => string,
): Promise<ModelInfo | undefined> {
  const models = (await loadModelsOnFirstUse(ctx.services, 'the Models view')).filter(
    (m) => m.available && kinds.includes(m.kind),
  );
  const id = givenId(arg, what);
  if (id !== undefined) {
    const model = models.find((m) => m.id === id);
    if (!model) throw new GatewayError('badRequest', notListed(id));
    return model;
  }
  const pick = await vscode.window.showQuickPick(
    models.map((m) => ({ label: m.id, description: m.provider, model: m })),
    { title: what, placeHolder: vscode.l10n.t('Pick a model') },
  );
  return pick?.model;
}

export const chatWithModel: CommandDef = {
  id: 'modelGateway.chatWithModel',
  async run(ctx: CommandContext, arg: unknown) {
    const model = await modelFor(ctx, arg, ['chat'], vscode.l10n.t('Chat with This Model'), (id) =>
      vscode.l10n.t('{0} is not a chat model this key may use.', id),
    );
    if (!model) return undefined;
    await vscode.commands.executeCommand('modelGateway.chat.focus');
    await ctx.chat.ensureLoaded();
    // A conversation under way keeps its model (and its thinking choice): the model gets a new chat.
    if (ctx.chat.currentConversationId !== undefined) await ctx.chat.newConversation();
    await ctx.chat.selectModel(model.id);
    return { model: ctx.chat.selectedModel()?.id };
  },
};

export const generateWithModel: CommandDef = {
  id: 'modelGateway.generateWithModel',
  async run(ctx: CommandContext, arg: unknown) {
    const model = await modelFor(ctx, arg, ['image', 'video'], vscode.l10n.t('Generate with This Model'), (id) =>
      vscode.l10n.t('{0} is not an image or video model this key may use.', id),
    );
    if (!model) return undefined;
    const tab = model.kind === 'video' ? 'video' : 'images';
    await ctx.media.choices.remember(model.kind === 'video' ? { videoModel: model.id } : { imageModel: model.id });
    ctx.media.open(tab);
    return { opened: true, tab, model: model.id };
  },
};
