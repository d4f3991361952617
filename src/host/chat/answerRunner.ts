/**
 * Sends, retries, continues and edits: the conversation's slot is claimed (in this window and in
 * the store, where every window sees it), what can refuse is asked before anything is stored, the
 * question is stored, the answer runs in its own conversation (answering.ts), and the slot is given
 * back, the view told whether the conversation is still busy.
 */
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { imageSupport } from '../../core/chat/capabilities';
import { titleAfterEdit, titleFrom } from '../../core/chat/conversationForms';
import { lastSpoken } from '../../core/chat/turns';
import type { ConversationMeta } from '../../core/chat/store/core';
import type { StoredMessage } from '../../core/chat/store/log';
import type { ConversationClaims } from '../../core/chat/store/claims';
import { GatewayError } from '../../core/errors';
import type { ModelInfo } from '../../core/models/types';
import { postBusy, runAnswer, type AnsweringHost } from './answering';
import type { PendingAttachment } from './attachments';
import { chatSettings } from './chatSettings';
import type { ModelChoice } from './modelChoice';
import {
  ANSWERING_ELSEWHERE,
  ANSWERING_HERE,
  busyElsewhere,
  busyHere,
  gone,
  type AnswerSession,
  type Sent,
  type Shown,
} from './sessions';

/** How many notices after the last answer are looked past to find it (a few model changes in a row). */
const NOTICE_SLACK = 20;

export interface SendOptions {
  system?: string;
  /** What goes with the question (a conversation's tray, or a scripted question's own images). */
  attachments?: readonly PendingAttachment[];
  onAccepted?(): void;
}

/** What the runner needs from the chat controller. */
export interface AnswerHost extends AnsweringHost {
  readonly models: ModelChoice;
  /** Whether the first load is done (then a send claims its slot without awaiting anything). */
  readonly isLoaded: boolean;
  /** The conversations' claims every window sees (one answer per conversation across windows). */
  readonly claims: ConversationClaims;
  ensureLoaded(): Promise<void>;
  /** Tells the user why an action was refused (a conversation answering elsewhere offers a new one). */
  refused(err: unknown): Promise<void>;
}

export class AnswerRunner {
  constructor(private readonly host: AnswerHost) {}

  /**
   * Sends a user message into `target` (the conversation shown by default) and streams the answer.
   * The conversation's slot is claimed before anything is awaited (after the one wait for the first
   * load), so of two sends racing into one conversation exactly one runs and the other is refused
   * with busyHere(). `attachments` go with the question; `onAccepted` is called once the question
   * is stored (until then, a refusal or failure has stored nothing).
   */
  async send(text: string, options: SendOptions, shown: Shown): Promise<Sent | undefined> {
    const host = this.host;
    if (!host.isLoaded) await host.ensureLoaded();
    if (!text.trim()) return undefined;
    const session = await this.claim(shown);
    try {
      if (shown.id) {
        // Read now that the slot is this window's: another window may have changed the model.
        const page = await host.store.open(shown.id, { limit: 0 });
        if (!page) throw gone();
        shown.meta = page.meta;
      }
      // Refused before anything is stored (no base address, no chat model, or the conversation's
      // own model gone: the user picks the one it goes on with).
      const problem = await host.models.blocker(host.models.modelFor(shown.meta), shown.meta);
      if (problem) throw problem;
      const model = host.models.modelFor(shown.meta) as ModelInfo;
      const attachments = options.attachments ?? [];
      const images = attachments.flatMap((a) => (a.image ? [a.image] : []));
      if (images.length) {
        // Refused before anything is stored or sent; the images stay attached for another model.
        const support = imageSupport(model, chatSettings().imageInputModels);
        if (!support.supported)
          throw new GatewayError('badRequest', support.reason ?? vscode.l10n.t('{0} does not take images.', model.id));
      }
      const texts = attachments.filter((a) => !a.image);
      const question: StoredMessage = {
        id: randomUUID(),
        role: 'user',
        text,
        status: 'done',
        createdAt: Date.now(),
        ...(texts.length
          ? {
              attachments: texts.map(({ label, chars, truncated }) => ({ label, chars, truncated })),
              context: texts.map((a) => a.text).join('\n\n'),
            }
          : {}),
        ...(images.length ? { images } : {}),
      };
      let id = shown.id;
      if (!id) {
        const { model, keyId, protocolOverride, enableSearch } = shown.meta;
        // The thinking choice is kept with the conversation from its first message, so a later change of the setting leaves it alone.
        const thinking = shown.meta.thinking ?? chatSettings().thinking;
        const meta = await host.store.create({
          title: titleFrom(text),
          ...(model ? { model } : {}),
          ...(keyId ? { keyId } : {}),
          ...(protocolOverride ? { protocolOverride } : {}),
          ...(enableSearch !== undefined ? { enableSearch } : {}),
          thinking,
        });
        id = meta.id;
        // The conversation is stored: its object (and the answer it holds) goes by the id from now on.
        shown.key = id;
        shown.id = id;
        shown.meta = meta;
        // No other window knows the new id yet: the claim is this window's.
        await this.claimInStore(session, id);
        // What the new chat recorded before it existed (a model switch) comes before the question.
        for (const notice of shown.notices?.splice(0) ?? [])
          await host.sessions.track(id, host.store.append(id, notice));
      } else if (shown.meta.title === 'New chat' || shown.meta.title === vscode.l10n.t('New chat')) {
        const page = await host.store.open(id, { limit: 0 });
        if (page && page.total === 0) await host.models.writeMeta(id, { title: titleFrom(text) });
      }
      if (!(await host.sessions.track(id, host.store.append(id, question)))) throw gone();
      options.onAccepted?.();
      const answer = await runAnswer(this.host, session, id, model, { system: options.system });
      return { conversationId: id, question, answer };
    } finally {
      await this.end(session);
    }
  }

  regenerate(shown: Shown, messageId: string): Promise<StoredMessage | undefined> {
    return this.onLastAnswer(
      shown,
      messageId,
      () => true,
      () =>
        vscode.l10n.t(
          'That answer is no longer the last one in its conversation; only the last answer can be retried. Nothing was changed.',
        ),
      async (session, id, _last, after) => {
        // Everything that can refuse is asked before the old answer is removed: a refusal changes nothing.
        const model = await this.answerable(id);
        if (!model) return undefined;
        // The notices after the answer (a model change) stay, before the new answer.
        return runAnswer(this.host, session, id, model, { replace: { from: messageId, before: after } });
      },
    );
  }

  /**
   * Continues the last answer, cut at the max tokens limit: the model is asked to go on and its
   * text is appended to the same stored message (usage adds up). Only the last message may be
   * continued, as only the last may be retried.
   */
  continueAnswer(shown: Shown, messageId: string): Promise<StoredMessage | undefined> {
    return this.onLastAnswer(
      shown,
      messageId,
      (last) => last.finishReason === 'length',
      () =>
        vscode.l10n.t(
          'That answer is no longer the last one in its conversation or was not cut at the max tokens limit; only the last cut answer can be continued. Nothing was changed.',
        ),
      async (session, id, last) => {
        const model = await this.answerable(id);
        return model ? runAnswer(this.host, session, id, model, { continuing: last }) : undefined;
      },
    );
  }

  /**
   * Runs `act` in the slot of conversation `shown` when its last message (notices after it aside) is
   * the answer `messageId` and `fits` it; otherwise the user is told why (`refusal`) and nothing is
   * changed. `act` gets the notices that follow the answer.
   */
  private async onLastAnswer(
    shown: Shown,
    messageId: string,
    fits: (last: StoredMessage) => boolean,
    refusal: () => string,
    act: (
      session: AnswerSession,
      id: string,
      last: StoredMessage,
      after: StoredMessage[],
    ) => Promise<StoredMessage | undefined>,
  ): Promise<StoredMessage | undefined> {
    const host = this.host;
    if (!host.isLoaded) await host.ensureLoaded();
    const id = shown.id;
    if (!id) return undefined;
    const session = await this.claimOrWarn(shown);
    if (!session) return undefined;
    try {
      const page = await host.store.open(id, { limit: NOTICE_SLACK + 1 });
      const { last, after } = lastSpoken(page?.messages ?? []);
      if (!last || last.id !== messageId || last.role !== 'assistant' || !fits(last)) {
        void vscode.window.showWarningMessage(refusal());
        await host.sendSnapshot();
        return undefined;
      }
      return await act(session, id, last, after);
    } finally {
      await this.end(session);
    }
  }

  async editLast(shown: Shown, text: string, messageId: string): Promise<StoredMessage | undefined> {
    const host = this.host;
    if (!host.isLoaded) await host.ensureLoaded();
    const id = shown.id;
    if (!id || !text.trim()) return undefined;
    const session = await this.claimOrWarn(shown);
    if (!session) return undefined;
    try {
      const page = await host.store.open(id, { limit: NOTICE_SLACK + 2 });
      const messages = page?.messages ?? [];
      const spoken = messages.filter((m) => m.role !== 'notice');
      const user = spoken.at(-1)?.role === 'user' ? spoken.at(-1) : spoken.at(-2);
      if (!user || user.role !== 'user' || user.id !== messageId) {
        void vscode.window.showWarningMessage(
          vscode.l10n.t(
            'That message is no longer your last one in its conversation; only the last message can be edited and resent. Nothing was changed.',
          ),
        );
        await host.sendSnapshot();
        return undefined;
      }
      const model = await this.answerable(id);
      if (!model) return undefined;
      const edited: StoredMessage = { ...user, id: randomUUID(), text, createdAt: Date.now() };
      const notices = messages.slice(messages.indexOf(user) + 1).filter((m) => m.role === 'notice');
      // The title made from the first question follows its edit once the edit is stored (with the
      // answer's placeholder, in one write), and before the view is told of the answer: while the
      // answer runs, the store's watch says nothing about the conversation to the view, so a title
      // written after the answer's end reached the view only with some later change. A title that
      // cannot be written stays as it was.
      const title = page && titleAfterEdit(page, user, text);
      const retitle = async (): Promise<void> => {
        if (!title) return;
        await host.models
          .writeMeta(id, { title })
          .catch((err: unknown) => host.services.log.warn(`Retitling conversation ${id} failed: ${String(err)}`));
      };
      const answer = await runAnswer(this.host, session, id, model, {
        replace: { from: user.id, before: [edited, ...notices] },
        onPlaced: retitle,
      });
      return answer;
    } finally {
      await this.end(session);
    }
  }

  /**
   * The model an answer in conversation `id` would come from, or undefined (and the user told why)
   * when none can be asked now: no base address, no chat model, or the conversation's own model gone.
   */
  private async answerable(id: string): Promise<ModelInfo | undefined> {
    const meta = (await this.host.store.open(id, { limit: 0 }))?.meta;
    if (!meta) throw gone();
    return this.modelOrWarn(meta);
  }

  private async modelOrWarn(meta: Partial<ConversationMeta>): Promise<ModelInfo | undefined> {
    const model = this.host.models.modelFor(meta);
    const problem = await this.host.models.blocker(model, meta);
    if (!problem) return model as ModelInfo;
    void this.host.sendSnapshot();
    void vscode.window.showWarningMessage(problem.message);
    return undefined;
  }

  /**
   * The conversation's slot, here (synchronously, before any await: of two sends racing in this
   * window exactly one gets it) and then in the store, where every window sees it. Refused with
   * ANSWERING_HERE or ANSWERING_ELSEWHERE.
   */
  private async claim(shown: Shown): Promise<AnswerSession> {
    const session = this.host.sessions.claim(shown);
    if (!session) throw new GatewayError('badRequest', busyHere(), { code: ANSWERING_HERE });
    if (shown.id) {
      try {
        await this.claimInStore(session, shown.id);
      } catch (err) {
        this.host.sessions.release(session);
        throw err;
      }
    }
    return session;
  }

  private async claimInStore(session: AnswerSession, id: string): Promise<void> {
    if (!(await this.host.claims.take(id)))
      throw new GatewayError('badRequest', busyElsewhere(), { code: ANSWERING_ELSEWHERE });
    session.claimedInStore = true;
  }

  /** The slot, or undefined (and the user told why) when an answer is already being written there. */
  private async claimOrWarn(shown: Shown): Promise<AnswerSession | undefined> {
    try {
      return await this.claim(shown);
    } catch (err) {
      void this.host.refused(err);
      return undefined;
    }
  }

  /**
   * The slot is free again, in the store first (a send here could otherwise claim it in memory and
   * have its store claim removed by this release); the view (if it shows the conversation) learns
   * whether it is still busy.
   */
  private async end(session: AnswerSession): Promise<void> {
    const id = session.conversationId;
    if (session.claimedInStore && id) {
      await this.host.claims
        .release(id)
        .catch((err: unknown) =>
          this.host.services.log.warn(`Giving back the claim on conversation ${id} failed: ${String(err)}`),
        );
    }
    this.host.sessions.release(session);
    postBusy(this.host, session);
  }
}
