import * as vscode from 'vscode';
import type { ConversationStore } from '../../core/chat/conversationStore';
import { GatewayError } from '../../core/errors';
import type { ModelInfo } from '../../core/models/types';
import type { HostMessage, WebviewMessage } from '../../shared/protocol';
import { openExternalLink } from '../links';
import { runSetupAction } from '../setup';
import type { AnswerRunner } from './answerRunner';
import type { AttachmentTray } from './attachmentTray';
import type { ConversationActions } from './conversationActions';
import type { ConversationPatch } from './modelChoice';
import { askToAllowImageHost } from './remoteImages';
import type { Shown } from './sessions';
import type { ShownConversations } from './shownConversations';

/** What the view's messages ask of the chat controller, each naming its conversation by the view's key. */
export interface ViewIntents {
  readonly conversations: Pick<ShownConversations, 'current' | 'targetNow' | 'target' | 'loadOlder' | 'window'>;
  readonly tray: Pick<
    AttachmentTray,
    'itemsFor' | 'drop' | 'remove' | 'pickImages' | 'attachFromEditor' | 'attachImageData' | 'attachImageUris'
  >;
  readonly answers: Pick<AnswerRunner, 'send'>;
  readonly actions: Pick<ConversationActions, 'rename' | 'delete' | 'exportMarkdown'>;
  readonly link: { port?: { post(message: HostMessage): void } };
  readonly store: Pick<ConversationStore, 'open' | 'images'>;
  sendSnapshot(): Promise<void>;
  refreshView(): void;
  refused(err: unknown): Promise<void>;
  stop(key?: string): void;
  regenerate(messageId: string, key?: string): Promise<unknown>;
  continueAnswer(messageId: string, key?: string): Promise<unknown>;
  editLast(text: string, messageId: string, key?: string): Promise<unknown>;
  chatModels(): ModelInfo[];
  selectModel(id: string, target: Shown): Promise<void>;
  updateConversation(patch: ConversationPatch, quiet: boolean, target: Shown): Promise<void>;
  newConversation(): Promise<void>;
  switchTo(id: string): Promise<unknown>;
}

/**
 * What each message from the chat view does, to the conversation it names (the view may have
 * moved on by the time the host acts). `send`, `regenerate` and `editLast` reach the answer runner
 * without an await before them, so the claim of the conversation's slot is decided in the order
 * the messages came.
 */
export async function routeViewMessage(chat: ViewIntents, msg: WebviewMessage): Promise<void> {
  const actions = chat.actions;
  switch (msg.type) {
    case 'ready':
    case 'needSnapshot':
      return chat.sendSnapshot();
    case 'send':
      return sendFromView(chat, msg.conversationId, msg.text, msg.sendId);
    case 'stop':
      return chat.stop(msg.conversationId);
    case 'regenerate':
      await chat.regenerate(msg.messageId, msg.conversationId);
      return;
    case 'continue':
      await chat.continueAnswer(msg.messageId, msg.conversationId);
      return;
    case 'editLast':
      await chat.editLast(msg.text, msg.messageId, msg.conversationId);
      return;
    case 'selectModel':
      return onTarget(chat, msg.conversationId, (target) => chat.selectModel(msg.model, target));
    case 'setProtocol':
      return onTarget(chat, msg.conversationId, (target) =>
        chat.updateConversation({ protocolOverride: msg.protocol }, false, target),
      );
    case 'setSearch':
      return onTarget(chat, msg.conversationId, (target) =>
        chat.updateConversation({ enableSearch: msg.enabled }, false, target),
      );
    case 'setThinking':
      return onTarget(chat, msg.conversationId, (target) =>
        chat.updateConversation({ thinking: msg.choice }, false, target),
      );
    case 'newConversation':
      return chat.newConversation();
    case 'switchConversation':
      await chat.switchTo(msg.id);
      return;
    case 'renameConversation':
      return actions.rename(msg.id);
    case 'deleteConversation':
      return actions.delete(msg.id);
    case 'exportConversation':
      await actions.exportMarkdown(msg.id);
      return;
    case 'loadOlder':
      // Ignored when the view asked while it showed another one: it gets the snapshot it needs.
      chat.conversations.loadOlder(msg.conversationId);
      return chat.sendSnapshot();
    case 'attach': {
      const what = msg.what;
      return onTarget(chat, msg.conversationId, (target) =>
        what === 'image' ? chat.tray.pickImages(target) : chat.tray.attachFromEditor(target, what),
      );
    }
    case 'attachImage':
      return onTarget(chat, msg.conversationId, (target) => chat.tray.attachImageData(target, msg.name, msg.data));
    case 'attachImageUris':
      return onTarget(chat, msg.conversationId, (target) => chat.tray.attachImageUris(target, msg.uris));
    case 'openImage':
      return openImage(chat, msg.conversationId, msg.id);
    case 'removeAttachment':
      return removeAttachment(chat, msg.conversationId, msg.id);
    case 'copy':
      return copyText(msg.text);
    case 'insertCode':
      return insertAtCursor(msg.code);
    case 'openLink':
      await openExternalLink(msg.url);
      return;
    case 'openSetting':
      return openSetting(msg.id);
    case 'allowRemoteImageHost':
      // The view only asks; a yes is recorded in the user setting, whose change rebuilds the page's CSP.
      await askToAllowImageHost(msg.host);
      return;
    case 'action':
      return runAction(chat, msg.action, msg.messageId, msg.conversationId);
  }
}

/**
 * A send from the view into the conversation it names, with what waits in that conversation's
 * tray. The view is told as soon as the question is stored (it may forget the text) or that it was
 * refused (it puts the text back), and why.
 */
async function sendFromView(chat: ViewIntents, key: string, text: string, sendId: string): Promise<void> {
  let accepted = false;
  const reply = (ok: boolean): void => chat.link.port?.post({ type: 'sendResult', sendId, accepted: ok });
  try {
    const target = chat.conversations.targetNow(key);
    if (!target)
      throw new GatewayError(
        'badRequest',
        vscode.l10n.t('That new chat is no longer open; your message was put back in the message box.'),
      );
    const attachments = chat.tray.itemsFor(target);
    const onAccepted = (): void => {
      accepted = true;
      chat.tray.drop(target, attachments);
      reply(true);
    };
    await chat.answers.send(text, { attachments, onAccepted }, target);
    if (!accepted) reply(false);
  } catch (err) {
    if (accepted) throw err;
    reply(false);
    await chat.refused(err);
  }
}

async function removeAttachment(chat: ViewIntents, key: string, id: string): Promise<void> {
  const target = chat.conversations.targetNow(key);
  if (target) chat.tray.remove(target, id);
  return chat.sendSnapshot();
}

/** An image of the conversation (sent, or waiting in its tray) opened in an editor. */
async function openImage(chat: ViewIntents, key: string, id: string): Promise<void> {
  const { conversations, store } = chat;
  const target = conversations.targetNow(key);
  if (!target) return;
  const limit = key === conversations.current.key ? conversations.window : Number.POSITIVE_INFINITY;
  const page = target.id ? await store.open(target.id, { limit }) : undefined;
  const ref =
    page?.messages.flatMap((m) => m.images ?? []).find((i) => i.id === id) ??
    chat.tray.itemsFor(target).find((a) => a.image?.id === id)?.image;
  if (!ref) return;
  await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(store.images.file(ref)), { preview: true });
}

/** Runs `work` on the conversation the view named; one that is gone meanwhile gets a fresh snapshot instead. */
async function onTarget(chat: ViewIntents, key: string, work: (target: Shown) => Promise<void>): Promise<void> {
  const target = await chat.conversations.target(key);
  if (target) return work(target);
  chat.refreshView();
}

async function copyText(text: string): Promise<void> {
  await vscode.env.clipboard.writeText(text);
  void vscode.window.setStatusBarMessage(vscode.l10n.t('Copied to the clipboard'), 2000);
}

/** A setting the view's text names, opened in the Settings editor. */
async function openSetting(id: string): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.openSettings', id);
}

async function runAction(
  chat: ViewIntents,
  action: 'setKey' | 'openSettings' | 'refreshModels' | 'retry' | 'pickModel',
  messageId: string | undefined,
  key: string | undefined,
): Promise<void> {
  switch (action) {
    case 'setKey':
    case 'openSettings':
    case 'refreshModels':
      return runSetupAction(action);
    case 'retry':
      if (!messageId) {
        void vscode.window.showWarningMessage(
          vscode.l10n.t('Retry needs the answer it refers to; nothing was changed.'),
        );
        return;
      }
      await chat.regenerate(messageId, key);
      return;
    case 'pickModel': {
      const target = await chat.conversations.target(key);
      if (!target) return;
      const pick = await vscode.window.showQuickPick(
        chat.chatModels().map((m) => ({ label: m.id, description: m.provider })),
        { title: vscode.l10n.t('Pick a chat model') },
      );
      if (pick) await chat.selectModel(pick.label, target);
      return;
    }
  }
}

async function insertAtCursor(code: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor) {
    await editor.edit((edit) => {
      for (const selection of editor.selections) edit.replace(selection, code);
    });
    return;
  }
  const doc = await vscode.workspace.openTextDocument({ content: code });
  await vscode.window.showTextDocument(doc);
}
