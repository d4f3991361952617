import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ConversationStore } from '../../core/chat/conversationStore';
import type { StoredMessage } from '../../core/chat/store/log';
import type { StoreProblem } from '../../core/chat/store/core';
import { ConversationClaims, type ClaimOptions } from '../../core/chat/store/claims';
import { toView } from '../../core/chat/conversationForms';
import { GatewayError, isGatewayError } from '../../core/errors';
import type { ModelInfo } from '../../core/models/types';
import type {
  ChatMessageView,
  HostMessage,
  ImageRef,
  ModelChangeReason,
  Snapshot,
  WebviewMessage,
} from '../../shared/protocol';
import type { Services } from '../services';
import { AnswerRunner } from './answerRunner';
import { ANSWERING_ELSEWHERE, ANSWERING_HERE } from './sessions';
import { runAsk, type AskArgs, type AskResult } from './ask';
import { AttachmentTray, type AttachImagesResult } from './attachmentTray';
import { ConversationActions } from './conversationActions';
import { ImageReadPolicy } from './imageAccess';
import { loadChat } from './loading';
import { ModelChoice, type ConversationPatch } from './modelChoice';
import { ChatSessions, draft, type Shown } from './sessions';
import { ShownConversations } from './shownConversations';
import { buildSnapshot, type ViewLink } from './snapshot';
import { routeViewMessage } from './viewRouter';

/** Where the controller posts to; `isLive()` is false while the view is hidden or not yet ready. */
export interface ChatViewPort {
  post(message: HostMessage): void;
  isLive(): boolean;
  /** Rebuilds the page, e.g. when its content security policy must change. */
  reload(): void;
  /** The address the page loads a stored file from (its webview URI). */
  resourceUri?(file: vscode.Uri): string;
}

/**
 * The chat's coordinator: its link to the view, and the parts that do the work (which conversation
 * the view shows: shownConversations.ts; the view's messages: viewRouter.ts; answers:
 * answerRunner.ts; model choice: modelChoice.ts; the view's state: snapshot.ts; rename, delete and
 * export: conversationActions.ts; what goes with the next message: attachmentTray.ts).
 * The chat's state lives here, in the host, not in the webview. Every answer is a session bound to
 * its conversation and message (see sessions.ts): posts, checkpoints, the final save and Stop all
 * name them, so switching, deleting or starting a chat while an answer streams moves, resurrects or
 * mixes nothing. An answer keeps streaming into its own conversation when the view shows another
 * one; the view only ever gets posts about the conversation it shows.
 */
export class ChatController implements vscode.Disposable {
  readonly sessions = new ChatSessions();
  readonly imagePolicy: ImageReadPolicy;
  readonly models: ModelChoice;
  /** What goes with the next message. */
  readonly tray: AttachmentTray;
  /** The view and whether it is in step (deltas wait while it is not). */
  readonly link: ViewLink & { port?: ChatViewPort } = { needsSnapshot: true, snapshotsInFlight: 0 };
  /** Which conversation the view shows, and which one each of its intents names. */
  readonly conversations: ShownConversations;
  private loaded?: Promise<void>;
  private loadedDone = false;
  private readonly reportedProblems = new Set<string>();
  readonly actions: ConversationActions;
  /** Sends, retries and edits, each answering in its own conversation. */
  readonly answers: AnswerRunner;
  private readonly subscriptions: Array<{ dispose(): void }>;
  private refreshQueued = false;

  /** Which conversations are answering, seen by every window (one answer per conversation across windows). */
  readonly claims: ConversationClaims;

  constructor(
    readonly services: Services,
    readonly store: ConversationStore,
    claimOptions: Omit<ClaimOptions, 'onLost'> = {},
  ) {
    // The claims live in the store's folder (the images' folder is in it too).
    this.claims = new ConversationClaims(path.dirname(store.images.dir), {
      ...claimOptions,
      // Another window deleted the conversation (or took over a claim this window failed to
      // refresh for long): this window's answer there stops.
      onLost: (id) => this.sessions.answerIn(id)?.abort.abort(),
    });
    store.useClaims(this.claims);
    this.conversations = new ShownConversations(store, () => (this.link.needsSnapshot = true), this.sessions);
    this.models = new ModelChoice(this);
    this.imagePolicy = new ImageReadPolicy(() => [
      services.context.globalStorageUri,
      ...(services.context.storageUri ? [services.context.storageUri] : []),
    ]);
    this.actions = new ConversationActions(this);
    this.tray = new AttachmentTray(this);
    this.answers = new AnswerRunner(this);
    this.subscriptions = [
      services.registry.onDidChange(() => this.refreshView()),
      services.keys.onDidChange(() => {
        // A model the conversation can no longer use is then said to have gone with the old key.
        this.models.keyChanged = true;
        this.refreshView();
      }),
      services.onDidChangeSettings(() => this.refreshView()),
    ];
  }

  /** Where stored images live; the view may load files from here. */
  get imageDir(): vscode.Uri {
    return vscode.Uri.file(this.store.images.dir);
  }

  /** The conversation the view shows now. */
  get shown(): Shown {
    return this.conversations.current;
  }

  get currentConversationId(): string | undefined {
    return this.shown.id;
  }

  /** Whether the first load is done. */
  get isLoaded(): boolean {
    return this.loadedDone;
  }

  attach(port: ChatViewPort | undefined): void {
    this.link.port = port;
    this.link.needsSnapshot = true;
  }

  /** A problem the store worked around (a damaged conversation set aside): told once, chat goes on. */
  reportStoreProblem(problem: StoreProblem): void {
    const key = `${problem.kind}:${problem.id ?? ''}:${problem.setAsideAs ?? problem.message}`;
    this.services.log.warn(`Conversation store: ${problem.message}`);
    if (this.reportedProblems.has(key)) return;
    this.reportedProblems.add(key);
    const text = problem.setAsideAs
      ? vscode.l10n.t('A damaged conversation was set aside as {0}; the chat keeps working.', problem.setAsideAs)
      : problem.message;
    void vscode.window.showWarningMessage(text);
  }

  /** The view became visible or (re)loaded: it gets the whole state, never a delta. */
  async sendSnapshot(): Promise<void> {
    // Nothing is loaded (and no network call made) for a chat view that is not showing.
    if (!this.link.port?.isLive()) return;
    await this.ensureLoaded();
    this.link.snapshotsInFlight++;
    try {
      let shown = this.shown;
      let state = await this.snapshot(shown);
      // The conversation shown was deleted (here or in another window): the view shows a new chat.
      if (!state && this.shown !== shown) {
        shown = this.shown;
        state = await this.snapshot(shown);
      }
      // The view may have moved on while this was built; the newer snapshot follows.
      if (!state || shown !== this.shown || !this.link.port?.isLive()) return;
      // From here to the post nothing awaits: the streaming answer's text and the lengths the next
      // delta starts from are taken together.
      const session = shown.answer;
      const live = session?.message;
      if (session && live) {
        const at = state.messages.findIndex((m) => m.id === live.id);
        if (at >= 0) state.messages[at] = this.messageView(live);
        else state.messages.push(this.messageView(live));
        session.sentText = live.text.length;
        session.sentReasoning = (live.reasoning ?? '').length;
      }
      state.busy = session !== undefined;
      this.link.needsSnapshot = false;
      this.link.port.post({ type: 'snapshot', state });
    } finally {
      this.link.snapshotsInFlight--;
    }
  }

  /** A message from the view (checked against the protocol by the view's provider). */
  handle(msg: WebviewMessage): Promise<void> {
    return routeViewMessage(this, msg);
  }

  /**
   * Sends a user message into the conversation shown (with what is attached to it) and streams the
   * answer; resolves when it has ended.
   */
  async send(text: string, options: { system?: string } = {}): Promise<StoredMessage | undefined> {
    const target = this.shown;
    const attachments = this.tray.itemsFor(target);
    try {
      return (
        await this.answers.send(
          text,
          { ...options, attachments, onAccepted: () => this.tray.drop(target, attachments) },
          target,
        )
      )?.answer;
    } catch (err) {
      if (isGatewayError(err) && (err.code === ANSWERING_HERE || err.code === ANSWERING_ELSEWHERE)) {
        void this.refused(err);
        return undefined;
      }
      throw err;
    }
  }

  /** Tells the user why an action was refused; a conversation answering in another window offers a new one. */
  async refused(err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    if (isGatewayError(err) && err.code === ANSWERING_ELSEWHERE) {
      const fresh = vscode.l10n.t('New conversation');
      if ((await vscode.window.showWarningMessage(message, fresh)) === fresh) await this.newConversation();
      return;
    }
    await vscode.window.showWarningMessage(message);
  }

  /** Retries the last answer of the conversation named (by default the one shown). */
  async regenerate(messageId: string, key?: string): Promise<StoredMessage | undefined> {
    const target = await this.conversations.target(key);
    return target ? this.answers.regenerate(target, messageId) : undefined;
  }

  /** Continue the last answer, cut at the max tokens limit, in the same message. */
  async continueAnswer(messageId: string, key?: string): Promise<StoredMessage | undefined> {
    const target = await this.conversations.target(key);
    return target ? this.answers.continueAnswer(target, messageId) : undefined;
  }

  /** Edit & Resend; an edit that is not stored (refused, or its write failed) goes back into the message box. */
  async editLast(text: string, messageId: string, key?: string): Promise<StoredMessage | undefined> {
    let answer: StoredMessage | undefined;
    const conversationId = key ?? this.shown.key;
    try {
      const target = await this.conversations.target(key);
      answer = target ? await this.answers.editLast(target, text, messageId) : undefined;
      return answer;
    } finally {
      if (!answer && text.trim()) this.link.port?.post({ type: 'putBack', conversationId, text });
    }
  }

  /** Stops the answer being written in the conversation named (by default the one shown), and only that one. */
  stop(key?: string): void {
    const target = key === undefined ? this.shown : this.conversations.targetNow(key);
    target?.answer?.abort.abort();
  }

  /** Runs `ask`: the view shows it as if typed; the caller gets the finished answer. */
  ask(args: AskArgs): Promise<AskResult> {
    return runAsk(this, this.answers, args);
  }

  /**
   * Attaches image files to the next message. With `switchModel`, a selected model that does not
   * take images is replaced by the first chat model that does (and the caller is told).
   */
  async attachImages(
    uris: vscode.Uri[],
    options: { switchModel?: boolean; conversationId?: string; model?: string } = {},
  ): Promise<AttachImagesResult> {
    await this.ensureLoaded();
    // One conversation from here on, whatever the view shows while this awaits.
    let target = this.shown;
    if (options.conversationId) target = await this.switchTo(options.conversationId);
    if (options.model) await this.selectModel(options.model, target);
    return this.tray.attachImages(uris, { switchModel: options.switchModel }, target);
  }

  /** Adds text produced elsewhere (e.g. a parsed document) as context for the next message. */
  addContext(label: string, text: string): Promise<void> {
    return this.tray.addContext(this.shown, label, text);
  }

  /** Puts the cursor in the view's message box (after attaching, the question is typed next). */
  async focusInput(): Promise<void> {
    await this.sendSnapshot();
    this.link.port?.post({ type: 'focusInput' });
  }

  /** A new, empty chat in the view; an answer still being written goes on in its own conversation. */
  async newConversation(): Promise<void> {
    await this.ensureLoaded();
    this.conversations.show(draft());
    await this.sendSnapshot();
    this.link.port?.post({ type: 'focusInput' });
  }

  exportMarkdown(id?: string, to?: vscode.Uri): Promise<{ uri: vscode.Uri; markdown: string } | undefined> {
    return this.actions.exportMarkdown(id ?? this.shown.id, to);
  }

  /** Shows a stored conversation (and returns it); an answer being written elsewhere keeps going in its own conversation. */
  async switchTo(id: string): Promise<Shown> {
    await this.ensureLoaded();
    const page = await this.store.open(id, { limit: 0 });
    if (!page) throw new GatewayError('badRequest', vscode.l10n.t('The conversation {0} no longer exists.', id));
    const shown = this.conversations.show({ key: id, id, meta: page.meta });
    await this.sendSnapshot();
    return shown;
  }

  /** The view now shows `next` (the chat's first load shows the latest conversation). */
  show(next: Shown): void {
    this.conversations.show(next);
  }

  /** The conversation was deleted: if the view shows it, it shows a new chat instead. */
  forget(id: string): void {
    this.conversations.forget(id);
  }

  /** Stops every answer (each still stores what it had) and the watching of the store. */
  dispose(): void {
    for (const session of this.sessions.all()) session.abort.abort();
    for (const s of this.subscriptions) s.dispose();
    this.claims.dispose();
  }

  /** How a stored message shows in the view (images with the address the page loads them from). */
  messageView(m: StoredMessage): ChatMessageView {
    return toView(m, (image) => this.imageSrc(image));
  }

  imageSrc(image: ImageRef): string | undefined {
    try {
      return this.link.port?.resourceUri?.(vscode.Uri.file(this.store.images.file(image)));
    } catch {
      return undefined;
    }
  }

  /** The whole state for `shown`; undefined when that conversation is gone (the view then shows a new chat). */
  private snapshot(shown: Shown): Promise<Snapshot | undefined> {
    const sources = {
      services: this.services,
      store: this.store,
      models: this.models,
      attachments: () => this.tray.itemsFor(shown),
      messageView: (m: StoredMessage) => this.messageView(m),
      imageSrc: (image: ImageRef) => this.imageSrc(image),
      // Deleted or set aside (by this window or another): the view shows a new chat.
      onGone: (gone: Shown) => this.conversations.forget(gone),
    };
    return buildSnapshot(sources, shown, this.conversations.window);
  }

  chatModels(): ModelInfo[] {
    return this.models.chatModels();
  }

  selectedModel(): ModelInfo | undefined {
    return this.models.modelFor(this.shown.meta);
  }

  /** The user (or, with `switched`, the chat itself, saying why) picks the model of `target`. */
  selectModel(
    id: string,
    target: Shown = this.shown,
    switched?: { from: string; reason: ModelChangeReason },
  ): Promise<void> {
    return this.models.select(id, target, switched);
  }

  /** Changes the shown conversation's model, protocol or search switch (a new chat keeps them until its first send). */
  updateConversation(patch: ConversationPatch, quiet = false, target?: Shown): Promise<void> {
    return this.models.update(patch, quiet, target);
  }

  refreshView(): void {
    this.link.needsSnapshot = true;
    // Changes come in bursts (a checkpoint, a list change, a settings change): one snapshot each tick.
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    setTimeout(() => {
      this.refreshQueued = false;
      void this.sendSnapshot();
    }, 0);
  }

  ensureLoaded(): Promise<void> {
    this.loaded ??= loadChat(this, this.subscriptions).then(() => {
      this.loadedDone = true;
    });
    return this.loaded;
  }
}
