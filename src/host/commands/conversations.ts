import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { parseWith } from '../../core/validate';
import { formatNumber, formatWhen } from '../../shared/format';
import type { ConversationSummary } from '../../shared/protocol';
import type { CommandContext, CommandDef } from './types';

interface HistoryItem extends vscode.QuickPickItem {
  id: string;
}

const idArg = z.optional(z.object({ conversationId: z.optional(z.string()) }));

/** One history row: title, then when it last changed and how many messages it holds (searchable too). */
function historyItem(
  c: ConversationSummary,
  current: string | undefined,
  buttons: vscode.QuickInputButton[],
): HistoryItem {
  const count =
    c.messageCount === 1 ? vscode.l10n.t('1 message') : vscode.l10n.t('{0} messages', formatNumber(c.messageCount));
  return {
    id: c.id,
    label: c.title,
    description: `${formatWhen(c.updatedAt)} · ${count}`,
    detail: c.id === current ? vscode.l10n.t('Shown now') : undefined,
    iconPath: new vscode.ThemeIcon(c.id === current ? 'comment-discussion' : 'comment'),
    buttons,
  };
}

/**
 * History as a quick pick, as VS Code's own chat shows it: newest first, filtered as you type
 * (title, date and count all match), Enter opens the conversation, and each row has Rename and
 * Delete buttons. The list follows other windows' changes while it is open.
 */
async function pickConversation(ctx: CommandContext): Promise<string | undefined> {
  await ctx.chat.ensureLoaded();
  const rename: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('edit'), tooltip: vscode.l10n.t('Rename') };
  const remove: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('trash'), tooltip: vscode.l10n.t('Delete') };
  const pick = vscode.window.createQuickPick<HistoryItem>();
  pick.title = vscode.l10n.t('Chat History');
  pick.placeholder = vscode.l10n.t('Search conversations by title or date');
  pick.matchOnDescription = true;
  const refresh = async (): Promise<void> => {
    const list = (await ctx.chat.store.list()).slice().sort((a, b) => b.updatedAt - a.updatedAt);
    const active = pick.activeItems[0]?.id;
    pick.items = list.map((c) => historyItem(c, ctx.chat.currentConversationId, [rename, remove]));
    const again = pick.items.find((i) => i.id === active);
    if (again) pick.activeItems = [again];
    if (!list.length) pick.placeholder = vscode.l10n.t('No conversations yet: start one in the chat');
  };
  pick.busy = true;
  await refresh();
  pick.busy = false;
  const watching = ctx.chat.store.onDidChange(() => void refresh());
  return new Promise<string | undefined>((resolve) => {
    // A row's Rename or Delete opens an input box or a modal, which hides the pick for a while
    // without ending it: it is shown again afterwards.
    let acting = false;
    let done = false;
    const finish = (id: string | undefined): void => {
      if (done) return;
      done = true;
      watching.dispose();
      pick.dispose();
      resolve(id);
    };
    // A single-select pick reports Enter or a click as a selection; accept covers the rest.
    pick.onDidChangeSelection((items) => {
      if (items[0]) finish(items[0].id);
    });
    pick.onDidAccept(() => finish((pick.selectedItems[0] ?? pick.activeItems[0])?.id));
    pick.onDidHide(() => {
      if (!acting) finish(undefined);
    });
    pick.onDidTriggerItemButton(async ({ item, button }) => {
      acting = true;
      try {
        await ctx.chat.handle({ type: button === rename ? 'renameConversation' : 'deleteConversation', id: item.id });
        await refresh();
      } finally {
        acting = false;
      }
      pick.show();
    });
    pick.show();
  });
}

/**
 * Rename or Delete Chat: the conversation named by `{conversationId}`, else the one shown, through
 * the same path as the view's own buttons (which ask for the title or confirm the delete).
 */
function conversationAction(
  id: string,
  type: 'renameConversation' | 'deleteConversation',
  argName: () => string,
  none: () => string,
): CommandDef {
  return {
    id,
    async run(ctx: CommandContext, arg: unknown) {
      const target = parseWith(idArg, arg, argName())?.conversationId ?? ctx.chat.currentConversationId;
      if (!target) return void vscode.window.showInformationMessage(none());
      await ctx.chat.handle({ type, id: target });
      return { conversationId: target };
    },
  };
}

/** Focus Chat (a keybinding), and History, Rename and Delete of the chat view's title bar (and the palette). */
export const conversationCommands: CommandDef[] = [
  {
    // The view's own `.focus` command shows the view; the cursor also goes into its message box.
    id: 'modelGateway.focusChat',
    async run(ctx: CommandContext) {
      await vscode.commands.executeCommand('modelGateway.chat.focus');
      await ctx.chat.focusInput();
    },
  },
  {
    id: 'modelGateway.showChatHistory',
    async run(ctx: CommandContext) {
      const id = await pickConversation(ctx);
      if (!id) return undefined;
      await vscode.commands.executeCommand('modelGateway.chat.focus');
      await ctx.chat.switchTo(id);
      return { conversationId: id };
    },
  },
  conversationAction(
    'modelGateway.renameChat',
    'renameConversation',
    () => vscode.l10n.t('The argument of "Rename Chat"'),
    () => vscode.l10n.t('There is no conversation to rename yet.'),
  ),
  conversationAction(
    'modelGateway.deleteChat',
    'deleteConversation',
    () => vscode.l10n.t('The argument of "Delete Chat"'),
    () => vscode.l10n.t('There is no conversation to delete yet.'),
  ),
];
