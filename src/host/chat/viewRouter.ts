import * as vscode from 'vscode';
import type { WebviewMessage } from '../../shared/protocol';
import { openExternalLink } from '../links';
import type { ChatController } from './chatController';
import type { ConversationActions } from './conversationActions';
import { askToAllowImageHost } from './remoteImages';
import { runSetupAction } from '../setup';

/**
 * What each message from the chat view does. `send`, `regenerate` and `editLast` reach the
 * controller without an await before them, so the claim of the conversation's slot is decided in
 * the order the messages came.
 */
export async function routeViewMessage(chat: ChatController, actions: ConversationActions, msg: WebviewMessage): Promise<void> {
  switch (msg.type) {
    case 'ready':
    case 'needSnapshot':
      return chat.sendSnapshot();
    case 'send':
      await chat.send(msg.text);
      return;
    case 'stop':
      return chat.stop();
    case 'regenerate':
      await chat.regenerate(msg.messageId);
      return;
    case 'continue':
      await chat.continueAnswer(msg.messageId);
      return;
    case 'editLast':
      await chat.editLast(msg.text, msg.messageId);
      return;
    case 'selectModel':
      return chat.selectModel(msg.model);
    case 'setProtocol':
      return chat.updateConversation({ protocolOverride: msg.protocol });
    case 'setSearch':
      return chat.updateConversation({ enableSearch: msg.enabled });
    case 'setThinking':
      return chat.updateConversation({ thinking: msg.choice });
    case 'newConversation':
      return chat.newConversation();
    case 'switchConversation':
      return chat.switchTo(msg.id);
    case 'renameConversation':
      return actions.rename(msg.id);
    case 'deleteConversation':
      return actions.delete(msg.id);
    case 'exportConversation':
      await actions.exportMarkdown(msg.id);
      return;
    case 'loadOlder':
      return chat.loadOlder();
    case 'attach':
      if (msg.what === 'image') return chat.tray.pickImages();
      return chat.tray.attachFromEditor(msg.what);
    case 'attachImage':
      return chat.tray.attachImageData(msg.name, msg.data);
    case 'attachImageUris':
      return chat.tray.attachImageUris(msg.uris);
    case 'openImage':
      return chat.openImage(msg.id);
    case 'removeAttachment':
      return chat.removeAttachment(msg.id);
    case 'copy':
      await vscode.env.clipboard.writeText(msg.text);
      void vscode.window.setStatusBarMessage(vscode.l10n.t('Copied to the clipboard'), 2000);
      return;
    case 'insertCode':
      return insertAtCursor(msg.code);
    case 'openLink':
      await openExternalLink(msg.url);
      return;
    case 'allowRemoteImageHost':
      // The view only asks; a yes is recorded in the user setting, whose change rebuilds the page's CSP.
      await askToAllowImageHost(msg.host);
      return;
    case 'action':
      return runAction(chat, msg.action, msg.messageId);
  }
}

async function runAction(chat: ChatController, action: 'setKey' | 'openSettings' | 'refreshModels' | 'retry' | 'pickModel', messageId: string | undefined): Promise<void> {
  switch (action) {
    case 'setKey':
    case 'openSettings':
    case 'refreshModels':
      return runSetupAction(action);
    case 'retry':
      if (!messageId) {
        void vscode.window.showWarningMessage(vscode.l10n.t('Retry needs the answer it refers to; nothing was changed.'));
        return;
      }
      await chat.regenerate(messageId);
      return;
    case 'pickModel': {
      const pick = await vscode.window.showQuickPick(
        chat.chatModels().map((m) => ({ label: m.id, description: m.provider })),
        { title: vscode.l10n.t('Pick a chat model') },
      );
      if (pick) await chat.selectModel(pick.label);
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
