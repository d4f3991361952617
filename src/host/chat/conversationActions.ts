import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { toMarkdown } from '../../core/chat/conversationForms';
import { markdownFileName } from '../tools/results';
import type { ConversationClaims } from '../../core/chat/store/claims';
import type { ModelChoice } from './modelChoice';
import type { ChatBase } from './sessions';

/** What the actions need from the chat controller. */
export interface ActionsHost extends ChatBase {
  readonly models: Pick<ModelChoice, 'writeMeta'>;
  readonly claims: Pick<ConversationClaims, 'forget'>;
  ensureLoaded(): Promise<void>;
  sendSnapshot(): Promise<void>;
  /** The conversation was deleted: a view showing it shows a new chat instead. */
  forget(id: string): void;
}

/** Rename, delete and export: actions on a conversation named by id, whichever one the view shows. */
export class ConversationActions {
  constructor(private readonly chat: ActionsHost) {}

  async rename(id: string): Promise<void> {
    const page = await this.chat.store.open(id, { limit: 0 });
    if (!page) return;
    const title = await vscode.window.showInputBox({
      title: vscode.l10n.t('Rename conversation'),
      value: page.meta.title,
      validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('A title cannot be empty.')),
    });
    if (!title?.trim()) return;
    await this.chat.models.writeMeta(id, { title: title.trim() });
    await this.chat.sendSnapshot();
  }

  /**
   * Deletes a conversation after asking. An answer being written in it is stopped first and waited
   * for (its last write included), so nothing is written to it after the delete; no answer may start
   * in it meanwhile. Images only it used are pruned once no write is pending.
   */
  async delete(id: string): Promise<void> {
    const chat = this.chat;
    const summary = (await chat.store.list()).find((c) => c.id === id);
    if (!summary) return;
    const remove = vscode.l10n.t('Delete');
    const choice = await vscode.window.showWarningMessage(
      vscode.l10n.t('Delete the conversation "{0}"? This cannot be undone.', summary.title),
      { modal: true },
      remove,
    );
    if (choice !== remove) return;
    await chat.sessions.whileDeleting(id, () => chat.store.delete(id));
    // A window answering in it learns at its next heartbeat that its claim is gone, and stops.
    await chat.claims
      .forget(id)
      .catch((err: unknown) =>
        chat.services.log.warn(`Removing the claim on deleted conversation ${id} failed: ${String(err)}`),
      );
    chat.forget(id);
    await chat.sendSnapshot();
    // Attached-but-unsent images are safe: the store keeps recently attached images (grace period).
    await chat.sessions.idleAll();
    const removed = await chat.store.pruneImages().catch((err: unknown) => {
      chat.services.log.warn(`Removing unused chat images failed: ${String(err)}`);
      return 0;
    });
    if (removed) chat.services.log.info(`Removed ${removed} chat image(s) no conversation uses any more.`);
  }

  /**
   * Exports a conversation as a Markdown file, where the user picks (offered under its title, in
   * the workspace), or at `to` when the caller names the file (scripts and tests); a file the user
   * picked is then opened. Undefined when there is nothing to export or the user cancelled the dialog.
   */
  async exportMarkdown(
    id: string | undefined,
    to?: vscode.Uri,
  ): Promise<{ uri: vscode.Uri; markdown: string } | undefined> {
    await this.chat.ensureLoaded();
    const c = id ? await this.chat.store.load(id) : undefined;
    if (!c || !c.messages.length) {
      void vscode.window.showInformationMessage(vscode.l10n.t('There is no conversation to export yet.'));
      return undefined;
    }
    // An answer still being written is exported as far as it got.
    const live = this.chat.sessions.answerIn(c.id)?.message;
    if (live) c.messages = c.messages.map((m) => (m.id === live.id ? live : m));
    const markdown = toMarkdown(c);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(os.homedir());
    const target =
      to ??
      (await vscode.window.showSaveDialog({
        title: vscode.l10n.t('Export "{0}" as Markdown', c.title),
        saveLabel: vscode.l10n.t('Export'),
        defaultUri: vscode.Uri.joinPath(folder, markdownFileName(c.title)),
        filters: { [vscode.l10n.t('Markdown files')]: ['md'] },
      }));
    if (!target) return undefined;
    // The dialog has asked before replacing an existing file.
    await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(markdown));
    if (!to) {
      // The file is opened rather than offered: a toast's button vanishes with the toast after a few seconds.
      await vscode.window.showTextDocument(target, { preview: false });
      void vscode.window.showInformationMessage(
        vscode.l10n.t('Exported the conversation to {0}.', path.basename(target.path)),
      );
    }
    return { uri: target, markdown };
  }
}
