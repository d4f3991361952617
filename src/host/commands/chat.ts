import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { protocolSchema, thinkingChoiceSchema } from '../../shared/protocol';
import { GatewayError, isGatewayError } from '../../core/errors';
import { parseWith } from '../../core/validate';
import { toUri } from '../chat/ask';
import { showError } from '../notify';
import type { CommandContext, CommandDef } from './types';
import { words } from '../../shared/words';

/** The options of a question, the same for "Ask" and "Ask About This Image". */
const askOptions = {
  model: z.optional(z.string()),
  protocol: z.optional(protocolSchema),
  system: z.optional(z.string()),
  conversationId: z.optional(z.string()),
  enableSearch: z.optional(z.boolean()),
  thinking: z.optional(thinkingChoiceSchema),
};

const askArgs = z.object({
  prompt: z.string(),
  ...askOptions,
  /** Image files (URIs or paths) sent with the prompt. */
  images: z.optional(z.array(z.string())),
  /** Also send what the user attached to the conversation and has not sent yet. */
  withAttachments: z.optional(z.boolean()),
});

/** `{uri}` / `{uris}` (strings or vscode.Uri), optionally with a prompt and the ask options. */
const imageArgs = z.object({
  uri: z.optional(z.unknown()),
  uris: z.optional(z.array(z.unknown())),
  prompt: z.optional(z.string()),
  ...askOptions,
});

const IMAGE_EXTENSIONS = ['png', 'jpg', 'jpeg', 'gif', 'webp'];

/** The sidebar chat's commands: asking, images, context, export, stop. */
export const chatCommands: CommandDef[] = [
  {
    id: 'modelGateway.ask',
    async run(ctx: CommandContext, arg: unknown) {
      const given =
        arg === undefined ? await promptFor() : parseWith(askArgs, arg, vscode.l10n.t('The argument of "Ask"'));
      if (!given) return undefined;
      try {
        return await ctx.chat.ask(given);
      } catch (err) {
        showError(err, ctx.services.log);
        throw err;
      }
    },
  },
  {
    /**
     * "Ask About This Image": from the explorer (the clicked file, or every selected one), from
     * another view with `{uri}` (attaches and shows the chat, returns what was attached), or with
     * `{uri, prompt}` (sends the question with the image and returns the answer, like `ask`).
     * Without an argument it asks for image files.
     */
    id: 'modelGateway.askAboutImage',
    async run(ctx: CommandContext, arg: unknown, selected: unknown) {
      const request = imageRequest(arg, selected);
      let uris = request.uris;
      if (!uris.length) {
        uris =
          (await vscode.window.showOpenDialog({
            canSelectMany: true,
            openLabel: vscode.l10n.t('Ask About Image'),
            title: vscode.l10n.t('Choose images to ask about'),
            filters: { [vscode.l10n.t('Images')]: IMAGE_EXTENSIONS },
          })) ?? [];
        if (!uris.length) return undefined;
      }
      const { prompt, ...options } = request.options;
      if (prompt !== undefined) {
        try {
          return await ctx.chat.ask({ ...options, prompt, images: uris });
        } catch (err) {
          showError(err, ctx.services.log);
          throw err;
        }
      }
      await vscode.commands.executeCommand('modelGateway.chat.focus');
      try {
        const result = await ctx.chat.attachImages(uris, {
          switchModel: !options.model,
          ...(options.conversationId ? { conversationId: options.conversationId } : {}),
          ...(options.model ? { model: options.model } : {}),
        });
        await ctx.chat.focusInput();
        return result;
      } catch (err) {
        showError(err, ctx.services.log);
        return {
          attached: [],
          error: {
            kind: isGatewayError(err) ? err.kind : 'badRequest',
            message: err instanceof Error ? err.message : String(err),
          },
        };
      }
    },
  },
  {
    id: 'modelGateway.newChat',
    async run(ctx: CommandContext) {
      await vscode.commands.executeCommand('modelGateway.chat.focus');
      await ctx.chat.newConversation();
      return { conversationId: ctx.chat.currentConversationId };
    },
  },
  {
    id: 'modelGateway.exportChat',
    async run(ctx: CommandContext, arg: unknown) {
      // `uri` names the file to write without asking (scripts and tests); otherwise a save dialog asks.
      const args = parseWith(
        z.optional(z.object({ conversationId: z.optional(z.string()), uri: z.optional(z.string()) })),
        arg,
        vscode.l10n.t('The argument of "Export Chat"'),
      );
      const exported = await ctx.chat.exportMarkdown(
        args?.conversationId,
        args?.uri ? vscode.Uri.parse(args.uri) : undefined,
      );
      return exported ? { uri: exported.uri.toString(), markdown: exported.markdown } : undefined;
    },
  },
  {
    id: 'modelGateway.addSelectionToChat',
    async run(ctx: CommandContext) {
      await vscode.commands.executeCommand('modelGateway.chat.focus');
      await ctx.chat.handle({ type: 'attach', what: 'selection', conversationId: ctx.chat.shown.key });
    },
  },
  {
    id: 'modelGateway.addFileToChat',
    async run(ctx: CommandContext) {
      await vscode.commands.executeCommand('modelGateway.chat.focus');
      await ctx.chat.handle({ type: 'attach', what: 'file', conversationId: ctx.chat.shown.key });
    },
  },
  {
    id: 'modelGateway.stopChat',
    run(ctx: CommandContext) {
      ctx.chat.stop();
    },
  },
];

function imageRequest(
  arg: unknown,
  selected: unknown,
): { uris: vscode.Uri[]; options: Omit<z.infer<typeof imageArgs>, 'uri' | 'uris'> } {
  if (arg === undefined || arg === null) return { uris: [], options: {} };
  // From the explorer: the clicked file and the whole selection (which includes it).
  if (arg instanceof vscode.Uri) {
    const all = Array.isArray(selected) ? selected.filter((u): u is vscode.Uri => u instanceof vscode.Uri) : [];
    return { uris: all.some((u) => u.toString() === arg.toString()) ? all : [arg], options: {} };
  }
  if (typeof arg === 'string') return { uris: [toUri(arg)], options: {} };
  const { uri, uris, ...options } = parseWith(imageArgs, arg, vscode.l10n.t('The argument of "Ask About This Image"'));
  const list = [...(uri === undefined ? [] : [uri]), ...(uris ?? [])].map((u) => {
    if (u instanceof vscode.Uri) return u;
    if (typeof u === 'string') return toUri(u);
    throw new GatewayError(
      'badRequest',
      words('The argument of "Ask About This Image": `uri` must be a file URI (a string or a vscode.Uri).'),
    );
  });
  if (!list.length)
    throw new GatewayError(
      'badRequest',
      words('The argument of "Ask About This Image" needs `uri` (or `uris`): the image file to ask about.'),
    );
  return { uris: list, options };
}

async function promptFor(): Promise<{ prompt: string } | undefined> {
  const prompt = await vscode.window.showInputBox({
    title: vscode.l10n.t('Model Gateway: Ask'),
    prompt: vscode.l10n.t('The message to send in the chat view'),
  });
  if (!prompt) return undefined;
  await vscode.commands.executeCommand('modelGateway.chat.focus');
  return { prompt };
}
