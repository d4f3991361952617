import * as vscode from 'vscode';
import type { ModelInfo } from '../../core/models/types';
import type { WebviewMessage } from '../../shared/protocol';
import { openExternalLink } from '../links';
import type { AttachmentTray } from './attachmentTray';
import type { ConversationActions } from './conversationActions';
import type { ConversationPatch } from './modelChoice';
import type { Shown } from './sessions';
import { askToAllowImageHost } from './remoteImages';
import { runSetupAction } from '../setup';

/** What the view's messages ask of the chat controller, each naming its conversation by the view's key. */
export interface ViewIntents {
  readonly tray: Pick<AttachmentTray, 'pickImages' | 'attachFromEditor' | 'attachImageData' | 'attachImageUris'>;
  sendSnapshot(): Promise<void>;
  refreshView(): void;
  /** The conversation a key names, its metadata read; undefined when it is gone. */
  target(key: string | undefined): Promise<Shown | undefined>;
  sendFromView(key: string, text: string, sendId: string): Promise<void>;
  stop(key?: string): void;
  regenerate(messageId: string, key?: string): Promise<unknown>;
  continueAnswer(messageId: string, key?: string): Promise<unknown>;
  editLast(text: string, messageId: string, key?: string): Promise<unknown>;
  chatModels(): ModelInfo[];
  selectModel(id: string, target: Shown): Promise<void>;
  updateConversation(patch: ConversationPatch, quiet: boolean, target: Shown): Promise<void>;
  newConversation(): Promise<void>;
  switchTo(id: string): Promise<unknown>;
  loadOlder(key: string): Promise<void>;
  openImage(key: string, id: string): Promise<void>;
  removeAttachment(key: string, id: string): Promise<void>;
}

/**
 * What each message from the chat view does, to the conversation it names (the view may have
 * moved on by the time the host acts). `send`, `regenerate` and `editLast` reach the controller
 * without an await before them, so the claim of the conversation's slot is decided in the order
 * the messages came.
 */
export async function routeViewMessage(
  chat: ViewIntents,
  actions: Pick<ConversationActions, 'rename' | 'delete' | 'exportMarkdown'>,
  msg: WebviewMessage,
): Promise<void> {
  switch (msg.type) {
    case 'ready':
    case 'needSnapshot':
      return chat.sendSnapshot();
    case 'send':
      return chat.sendFromView(msg.conversationId, msg.text, msg.sendId);
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
      return chat.loadOlder(msg.conversationId);
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
      return chat.openImage(msg.conversationId, msg.id);
    case 'removeAttachment':
      return chat.removeAttachment(msg.conversationId, msg.id);
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

/** Runs `work` on the conversation the view named; one that is gone meanwhile gets a fresh snapshot instead. */
async function onTarget(chat: ViewIntents, key: string, work: (target: Shown) => Promise<void>): Promise<void> {
  const target = await chat.target(key);
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
      const target = await chat.target(key);
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
