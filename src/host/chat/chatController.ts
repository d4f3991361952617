import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { effectiveProtocol, imageSupport, isSearchable as searchableOver } from '../../core/chat/capabilities';
import { streamChat } from '../../core/chat/chat';
import { titleFrom, toView, type ConversationMeta, type ConversationStore, type StoredMessage, type StoreProblem } from '../../core/chat/conversationStore';
import { GatewayError, isGatewayError } from '../../core/errors';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import type { Citation, HostMessage, ImageRef, Snapshot, WebviewMessage } from '../../shared/protocol';
import type { Services } from '../services';
import { AttachmentTray, type AttachImagesResult } from './attachmentTray';
import { chatSettings } from './chatSettings';
import { ConversationActions } from './conversationActions';
import { buildHistory } from './history';
import { ImageReadPolicy } from './imageAccess';
import { allowedImageHosts } from './remoteImages';
import { AnswerSession, ChatSessions, DRAFT_PREFIX } from './sessions';
import { attachmentViews, chatNotice, SNAPSHOT_WINDOW, toModelView } from './snapshot';
import { streamAnswer } from './streaming';
import { routeViewMessage } from './viewRouter';

export { isSearchable } from './snapshot';

/** Where the controller posts to; `isLive()` is false while the view is hidden or not yet ready. */
export interface ChatViewPort {
  post(message: HostMessage): void;
  isLive(): boolean;
  /** Rebuilds the page, e.g. when its content security policy must change. */
  reload(): void;
  /** The address the page loads a stored file from (its webview URI). */
  resourceUri?(file: vscode.Uri): string;
}

export interface AskResult {
  text: string;
  reasoning: string;
  usage?: StoredMessage['usage'];
  model: string;
  protocol: ChatProtocol;
  status: StoredMessage['status'];
  error?: StoredMessage['error'];
  /** Sources the answer came with (web search), numbered in this order. */
  citations: Citation[];
  /** What the model searched the web for. */
  searches: string[];
  /** Images sent with the question. */
  images: ImageRef[];
  conversationId: string;
}

export type { AttachImagesResult } from './attachmentTray';

/** The conversation the view shows: a stored one (`id`), or a new chat not stored until its first send. */
export interface Shown {
  /** The key its answer session is claimed under: the id, or a draft key. */
  key: string;
  id?: string;
  /** Its title, model, protocol and search switch as last read (a draft keeps its choices here). */
  meta: Partial<ConversationMeta>;
}

/** A send that went through: where it went and what was asked and answered. */
interface Sent {
  conversationId: string;
  question: StoredMessage;
  answer?: StoredMessage;
}

const BUSY_HERE = 'An answer is still being written in this conversation. Stop it first or wait for it to finish.';

/**
 * The chat's state lives here, in the host, not in the webview. Every answer is a session bound to
 * its conversation and message (see sessions.ts): posts, checkpoints, the final save and Stop all
 * name them, so switching, deleting or starting a chat while an answer streams moves, resurrects or
 * mixes nothing. An answer keeps streaming into its own conversation when the view shows another
 * one; the view only ever gets posts about the conversation it shows.
 */
export class ChatController implements vscode.Disposable {
  readonly sessions = new ChatSessions();
  readonly imagePolicy: ImageReadPolicy;
  private shown: Shown = draft();
  private model?: string;
  /** What goes with the next message. */
  readonly tray: AttachmentTray;
  private port?: ChatViewPort;
  private needsSnapshot = true;
  /** Snapshots being built: deltas wait, the snapshot will carry their text. */
  private snapshotsInFlight = 0;
  private window = SNAPSHOT_WINDOW;
  private loaded?: Promise<void>;
  private loadedDone = false;
  private readonly reportedProblems = new Set<string>();
  private readonly actions: ConversationActions;
  private readonly subscriptions: Array<{ dispose(): void }>;
  private refreshQueued = false;

  constructor(
    readonly services: Services,
    readonly store: ConversationStore,
  ) {
    this.model = services.context.globalState.get<string>('chat.model');
    this.imagePolicy = new ImageReadPolicy(() => [services.context.globalStorageUri, ...(services.context.storageUri ? [services.context.storageUri] : [])]);
    this.actions = new ConversationActions(this);
    this.tray = new AttachmentTray(this);
    this.subscriptions = [
      services.registry.onDidChange(() => this.refreshView()),
      services.keys.onDidChange(() => this.refreshView()),
      services.onDidChangeSettings(() => this.refreshView()),
    ];
  }

  /** Where stored images live; the view may load files from here. */
  get imageDir(): vscode.Uri {
    return vscode.Uri.file(this.store.images.dir);
  }

  get currentConversationId(): string | undefined {
    return this.shown.id;
  }

  /** The answer being written in the conversation the view shows, if any. */
  get shownSession(): AnswerSession | undefined {
    return this.sessions.get(this.shown.key);
  }

  attach(port: ChatViewPort | undefined): void {
    this.port = port;
    this.needsSnapshot = true;
  }

  /** A problem the store worked around (a damaged conversation set aside): told once, chat goes on. */
  reportStoreProblem(problem: StoreProblem): void {
    const key = `${problem.kind}:${problem.id ?? ''}:${problem.setAsideAs ?? problem.message}`;
    this.services.log.warn(`Conversation store: ${problem.message}`);
    if (this.reportedProblems.has(key)) return;
    this.reportedProblems.add(key);
    const text = problem.setAsideAs ? `A damaged conversation was set aside as ${problem.setAsideAs}; the chat keeps working.` : problem.message;
    void vscode.window.showWarningMessage(text);
  }

  /** The view became visible or (re)loaded: it gets the whole state, never a delta. */
  async sendSnapshot(): Promise<void> {
    // Nothing is loaded (and no network call made) for a chat view that is not showing.
    if (!this.port?.isLive()) return;
    await this.ensureLoaded();
    this.snapshotsInFlight++;
    try {
      let shown = this.shown;
      let state = await this.snapshot(shown);
      // The conversation shown was deleted (here or in another window): the view shows a new chat.
      if (!state && this.shown !== shown) {
        shown = this.shown;
        state = await this.snapshot(shown);
      }
      // The view may have moved on while this was built; the newer snapshot follows.
      if (!state || shown !== this.shown || !this.port?.isLive()) return;
      // From here to the post nothing awaits: the streaming answer's text and the lengths the next
      // delta starts from are taken together.
      const session = this.sessions.get(shown.key);
      const live = session?.message;
      if (session && live) {
        const at = state.messages.findIndex((m) => m.id === live.id);
        if (at >= 0) state.messages[at] = this.view(live);
        else state.messages.push(this.view(live));
        session.sentText = live.text.length;
        session.sentReasoning = (live.reasoning ?? '').length;
      }
      state.busy = session !== undefined;
      this.needsSnapshot = false;
      this.port.post({ type: 'snapshot', state });
    } finally {
      this.snapshotsInFlight--;
    }
  }

  handle(msg: WebviewMessage): Promise<void> {
    return routeViewMessage(this, this.actions, msg);
  }

  /** Sends a user message into the conversation shown and streams the answer; resolves when it has ended. */
  async send(text: string, options: { system?: string } = {}): Promise<StoredMessage | undefined> {
    try {
      return (await this.sendNow(text, options))?.answer;
    } catch (err) {
      if (isGatewayError(err) && err.message === BUSY_HERE) {
        void vscode.window.showWarningMessage(BUSY_HERE);
        return undefined;
      }
      throw err;
    }
  }

  /**
   * The send itself. The conversation's slot is claimed before anything is awaited (after the one
   * wait for the first load), so of two sends racing into one conversation exactly one runs and the
   * other is refused with BUSY_HERE.
   */
  private async sendNow(text: string, options: { system?: string } = {}, target?: Shown): Promise<Sent | undefined> {
    if (!this.loadedDone) await this.ensureLoaded();
    if (!text.trim()) return undefined;
    const shown = target ?? this.shown;
    const session = this.sessions.claim(shown.key);
    if (!session) throw new GatewayError('badRequest', BUSY_HERE);
    try {
      const images = this.tray.items.flatMap((a) => (a.image ? [a.image] : []));
      if (images.length) {
        // Refused before anything is stored or sent; the images stay attached for another model.
        const model = this.modelFor(shown.meta);
        const support = model ? imageSupport(model, chatSettings().imageInputModels) : undefined;
        if (model && !support?.supported) throw new GatewayError('badRequest', support?.reason ?? `${model.id} does not take images.`);
      }
      const texts = this.tray.take().filter((a) => !a.image);
      const question: StoredMessage = {
        id: randomUUID(),
        role: 'user',
        text,
        status: 'done',
        createdAt: Date.now(),
        ...(texts.length ? { attachments: texts.map(({ label, chars, truncated }) => ({ label, chars, truncated })), context: texts.map((a) => a.text).join('\n\n') } : {}),
        ...(images.length ? { images } : {}),
      };
      let id = shown.id;
      if (!id) {
        const { model, protocolOverride, enableSearch } = shown.meta;
        const meta = await this.store.create({ title: titleFrom(text), ...(model ? { model } : {}), ...(protocolOverride ? { protocolOverride } : {}), ...(enableSearch !== undefined ? { enableSearch } : {}) });
        id = meta.id;
        this.sessions.bind(session, id);
        shown.key = id;
        shown.id = id;
        shown.meta = meta;
      } else if (shown.meta.title === undefined || shown.meta.title === 'New chat') {
        const page = await this.store.open(id, { limit: 0 });
        if (page && page.total === 0) await this.writeMeta(id, { title: titleFrom(text) });
      }
      if (!(await this.sessions.track(id, this.store.append(id, question)))) throw gone();
      const answer = await this.answer(session, id, options.system);
      return { conversationId: id, question, answer };
    } finally {
      this.sessions.release(session);
      this.postBusy(session);
    }
  }

  async regenerate(messageId: string): Promise<StoredMessage | undefined> {
    if (!this.loadedDone) await this.ensureLoaded();
    const shown = this.shown;
    const id = shown.id;
    if (!id) return undefined;
    const session = this.sessions.claim(shown.key);
    if (!session) {
      void vscode.window.showWarningMessage(BUSY_HERE);
      return undefined;
    }
    try {
      const page = await this.store.open(id, { limit: 1 });
      const last = page?.messages.at(-1);
      if (!last || last.id !== messageId || last.role !== 'assistant') {
        void vscode.window.showWarningMessage('That answer is no longer the last one in its conversation; only the last answer can be retried. Nothing was changed.');
        await this.sendSnapshot();
        return undefined;
      }
      if (!(await this.sessions.track(id, this.store.truncateFrom(id, messageId)))) throw gone();
      return await this.answer(session, id);
    } finally {
      this.sessions.release(session);
      this.postBusy(session);
    }
  }

  async editLast(text: string, messageId: string): Promise<StoredMessage | undefined> {
    if (!this.loadedDone) await this.ensureLoaded();
    const shown = this.shown;
    const id = shown.id;
    if (!id || !text.trim()) return undefined;
    const session = this.sessions.claim(shown.key);
    if (!session) {
      void vscode.window.showWarningMessage(BUSY_HERE);
      return undefined;
    }
    try {
      const page = await this.store.open(id, { limit: 2 });
      const messages = page?.messages ?? [];
      const user = messages.at(-1)?.role === 'user' ? messages.at(-1) : messages.at(-2);
      if (!user || user.role !== 'user' || user.id !== messageId) {
        void vscode.window.showWarningMessage('That message is no longer your last one in its conversation; only the last message can be edited and resent. Nothing was changed.');
        await this.sendSnapshot();
        return undefined;
      }
      if (!(await this.sessions.track(id, this.store.truncateFrom(id, user.id)))) throw gone();
      if (!(await this.sessions.track(id, this.store.append(id, { ...user, id: randomUUID(), text, createdAt: Date.now() })))) throw gone();
      return await this.answer(session, id);
    } finally {
      this.sessions.release(session);
      this.postBusy(session);
    }
  }

  /** Stops the answer being written in the conversation the view shows (and only that one). */
  stop(): void {
    this.shownSession?.abort.abort();
  }

  /** Runs `ask`: the view shows it as if typed; the caller gets the finished answer. */
  async ask(args: {
    prompt: string;
    model?: string;
    protocol?: ChatProtocol;
    system?: string;
    conversationId?: string;
    enableSearch?: boolean;
    /** Image files (URIs or paths) to send with the prompt. */
    images?: Array<string | vscode.Uri>;
  }): Promise<AskResult> {
    await this.ensureLoaded();
    if (args.conversationId) await this.switchTo(args.conversationId);
    // The question goes to this conversation even if the view moves on while it is prepared.
    const target = this.shown;
    if (args.model) await this.selectModel(args.model, target);
    const before = new Set(this.tray.items.map((a) => a.id));
    let sent: Sent | undefined;
    try {
      if (args.images?.length) await this.attachImages(args.images.map(toUri), { switchModel: !args.model });
      if (args.protocol) {
        const protocol = args.protocol;
        const model = this.selectedModel();
        if (model && !model.protocols.includes(protocol)) {
          throw new GatewayError('badRequest', `${model.id} does not speak the ${protocol} protocol; it speaks ${model.protocols.join(', ')}.`);
        }
        await this.updateConversation({ protocolOverride: protocol }, true, target);
      }
      if (args.enableSearch !== undefined) await this.updateConversation({ enableSearch: args.enableSearch }, true, target);
      sent = await this.sendNow(args.prompt, { system: args.system }, target);
      if (!sent?.answer) throw new GatewayError('badRequest', 'Nothing was sent: the prompt was empty or no chat model is available.');
    } catch (err) {
      // A scripted question that could not go leaves nothing it attached behind.
      if (this.tray.items.some((a) => !before.has(a.id))) {
        this.tray.items = this.tray.items.filter((a) => before.has(a.id));
        void this.sendSnapshot();
      }
      throw err;
    }
    const answer = sent.answer;
    return {
      text: answer.text,
      reasoning: answer.reasoning ?? '',
      usage: answer.usage,
      model: answer.model ?? '',
      protocol: answer.protocol ?? 'chatCompletions',
      status: answer.status,
      error: answer.error,
      citations: answer.citations ?? [],
      searches: answer.searches ?? [],
      images: sent.question.images ?? [],
      conversationId: sent.conversationId,
    };
  }

  /**
   * Attaches image files to the next message. With `switchModel`, a selected model that does not
   * take images is replaced by the first chat model that does (and the caller is told).
   */
  attachImages(uris: vscode.Uri[], options: { switchModel?: boolean } = {}): Promise<AttachImagesResult> {
    return this.tray.attachImages(uris, options);
  }

  /** Adds text produced elsewhere (e.g. a parsed document) as context for the next message. */
  addContext(label: string, text: string): Promise<void> {
    return this.tray.addContext(label, text);
  }

  /** Puts the cursor in the view's message box (after attaching, the question is typed next). */
  async focusInput(): Promise<void> {
    await this.sendSnapshot();
    this.port?.post({ type: 'focusInput' });
  }

  /** A new, empty chat in the view; an answer still being written goes on in its own conversation. */
  async newConversation(): Promise<void> {
    await this.ensureLoaded();
    this.show(draft());
    await this.sendSnapshot();
    this.port?.post({ type: 'focusInput' });
  }

  exportMarkdown(id?: string): Promise<vscode.TextDocument | undefined> {
    return this.actions.exportMarkdown(id ?? this.shown.id);
  }

  /** Shows a stored conversation; an answer being written elsewhere keeps going in its own conversation. */
  async switchTo(id: string): Promise<void> {
    await this.ensureLoaded();
    const page = await this.store.open(id, { limit: 0 });
    if (!page) throw new GatewayError('badRequest', `The conversation ${id} no longer exists.`);
    this.show({ key: id, id, meta: page.meta });
    await this.sendSnapshot();
  }

  /** The view now shows `next`; the window of messages starts small again. */
  show(next: Shown): void {
    this.shown = next;
    this.window = SNAPSHOT_WINDOW;
    this.needsSnapshot = true;
  }

  /** The conversation was deleted: if the view shows it, it shows a new chat instead. */
  forget(id: string): void {
    if (this.shown.id === id) this.show(draft());
  }

  loadOlder(): Promise<void> {
    this.window += SNAPSHOT_WINDOW;
    return this.sendSnapshot();
  }

  removeAttachment(id: string): Promise<void> {
    this.tray.remove(id);
    return this.sendSnapshot();
  }

  /** Stops every answer (each still stores what it had) and the watching of the store. */
  dispose(): void {
    for (const session of this.sessions.all()) session.abort.abort();
    for (const s of this.subscriptions) s.dispose();
  }

  /**
   * Streams the answer to the last message of conversation `id` under `session`. The placeholder
   * is stored first; posts go to the view only while it shows this conversation.
   */
  private async answer(session: AnswerSession, id: string, system?: string): Promise<StoredMessage | undefined> {
    const meta = (await this.store.open(id, { limit: 0 }))?.meta;
    if (!meta) throw gone();
    const model = this.modelFor(meta);
    const settings = chatSettings();
    const problem = this.blocker(model);
    if (problem) {
      void this.sendSnapshot();
      void vscode.window.showWarningMessage(problem.message);
      return undefined;
    }
    const info = model as ModelInfo;
    const protocol = effectiveProtocol(info, meta.protocolOverride);
    const history = await buildHistory(this.store, id, info, settings);
    if (!history) throw gone();
    const message: StoredMessage = { id: randomUUID(), role: 'assistant', text: '', reasoning: '', status: 'streaming', model: info.id, protocol, createdAt: Date.now() };
    if (meta.model !== info.id) await this.writeMeta(id, { model: info.id });
    if (!(await this.sessions.track(id, this.store.append(id, message)))) throw gone();
    session.message = message;
    if (this.shown.id === id) {
      this.needsSnapshot = true;
      await this.sendSnapshot();
    }
    if (session.abort.signal.aborted) {
      message.status = 'stopped';
      await this.sessions.track(id, this.store.update(id, message));
      this.postFinal(id, message);
      return message;
    }
    const events = streamChat(this.services.http(), {
      model: info.id,
      protocol,
      messages: history,
      system: system ?? (settings.systemPrompt || undefined),
      // The chat always streams; a model that requires streaming would get it anyway.
      stream: true,
      requiresStreaming: info.catalog?.requiresStreaming === true,
      maxTokens: settings.maxTokens,
      enableSearch: meta.enableSearch && searchableOver(info, protocol) ? true : undefined,
      signal: session.abort.signal,
    });
    const final = await streamAnswer(session, id, events, { store: this.store, sessions: this.sessions, onProgress: (s) => this.postDelta(s) });
    this.postFinal(id, final);
    if (final.error) this.services.log.warn(`Chat answer from ${info.id} over ${protocol} ended: ${final.error.message}`);
    return final;
  }

  /** The text that arrived since the last post, to the view only while it shows that conversation. */
  private postDelta(session: AnswerSession): void {
    const m = session.message;
    const id = session.conversationId;
    if (!m || !id || this.shown.id !== id) return;
    if (!this.port?.isLive() || this.needsSnapshot || this.snapshotsInFlight > 0) {
      // A hidden or resyncing view gets the text with its next snapshot.
      if (!this.port?.isLive()) this.needsSnapshot = true;
      return;
    }
    const reasoning = m.reasoning ?? '';
    if (m.text.length === session.sentText && reasoning.length === session.sentReasoning) return;
    this.port.post({ type: 'append', conversationId: id, messageId: m.id, textFrom: session.sentText, text: m.text.slice(session.sentText), reasoningFrom: session.sentReasoning, reasoning: reasoning.slice(session.sentReasoning) });
    session.sentText = m.text.length;
    session.sentReasoning = reasoning.length;
  }

  private postFinal(id: string, message: StoredMessage): void {
    if (this.shown.id !== id) return;
    if (this.port?.isLive() && !this.needsSnapshot && this.snapshotsInFlight === 0) {
      this.port.post({ type: 'message', conversationId: id, message: this.view(message) });
    } else {
      this.needsSnapshot = true;
      void this.sendSnapshot();
    }
  }

  private postBusy(session: AnswerSession): void {
    const id = session.conversationId;
    if (!id || this.shown.id !== id || !this.port?.isLive()) return;
    this.port.post({ type: 'busy', conversationId: id, busy: this.sessions.get(id) !== undefined });
  }

  private view(m: StoredMessage) {
    return toView(m, (image) => this.imageSrc(image));
  }

  private imageSrc(image: ImageRef): string | undefined {
    try {
      return this.port?.resourceUri?.(vscode.Uri.file(this.store.images.file(image)));
    } catch {
      return undefined;
    }
  }

  /** The whole state for `shown`; undefined when that conversation is gone (the view then shows a new chat). */
  private async snapshot(shown: Shown): Promise<Snapshot | undefined> {
    let messages: StoredMessage[] = [];
    let total = 0;
    if (shown.id) {
      const page = await this.store.open(shown.id, { limit: this.window }).catch((err: unknown) => {
        this.services.log.warn(`Opening conversation ${shown.id ?? ''} failed: ${String(err)}`);
        return undefined;
      });
      if (page) {
        messages = page.messages;
        total = page.total;
        shown.meta = page.meta;
      } else if (!this.sessions.get(shown.key)) {
        // Deleted or set aside (by this window or another): the view shows a new chat.
        if (this.shown === shown) this.show(draft());
        return undefined;
      }
    }
    const models = this.chatModels();
    const selected = this.modelFor(shown.meta);
    const settings = chatSettings();
    const override = shown.meta.protocolOverride;
    const conversations = await this.store.list().catch((err: unknown) => {
      this.services.log.warn(`Listing conversations failed: ${String(err)}`);
      return [];
    });
    return {
      conversations,
      ...(shown.id ? { conversationId: shown.id } : {}),
      messages: messages.map((m) => this.view(m)),
      hasOlder: total > messages.length,
      models: models.map((m) => toModelView(m, override, settings.imageInputModels)),
      ...(selected ? { model: selected.id } : {}),
      ...(override ? { protocolOverride: override } : {}),
      enableSearch: shown.meta.enableSearch ?? false,
      attachments: attachmentViews(this.tray.items, (image) => this.imageSrc(image)),
      busy: false,
      remoteImageHosts: allowedImageHosts(),
      imageMaxBytes: settings.imageMaxBytes,
      ...(await chatNotice(this.services, models)),
    };
  }

  chatModels(): ModelInfo[] {
    return this.services.registry.snapshot.models.filter((m) => m.kind === 'chat' && m.available);
  }

  selectedModel(): ModelInfo | undefined {
    return this.modelFor(this.shown.meta);
  }

  private modelFor(meta: Partial<ConversationMeta>): ModelInfo | undefined {
    const models = this.chatModels();
    const wanted = meta.model ?? this.model;
    return models.find((m) => m.id === wanted) ?? models[0];
  }

  private blocker(model: ModelInfo | undefined): GatewayError | undefined {
    if (!this.services.settings().baseUrl.trim()) return new GatewayError('badRequest', 'No gateway base address is set. Set "modelGateway.baseUrl" first.');
    if (!model) return new GatewayError('modelUnavailable', 'No chat model is available to this key. Refresh the models or check the key.');
    return undefined;
  }

  async selectModel(id: string, target: Shown = this.shown): Promise<void> {
    await this.ensureLoaded();
    const model = this.chatModels().find((m) => m.id === id);
    if (!model) throw new GatewayError('modelUnavailable', `The model ${id} is not a chat model available to this key.`);
    this.model = id;
    await this.services.context.globalState.update('chat.model', id);
    const override = target.meta.protocolOverride;
    await this.updateConversation({ model: id, ...(override && !model.protocols.includes(override) ? { protocolOverride: undefined } : {}) }, true, target);
    await this.sendSnapshot();
  }

  /** Changes the shown conversation's model, protocol or search switch (a new chat keeps them until its first send). */
  async updateConversation(patch: Partial<Pick<ConversationMeta, 'model' | 'protocolOverride' | 'enableSearch'>>, quiet = false, target?: Shown): Promise<void> {
    await this.ensureLoaded();
    const shown = target ?? this.shown;
    shown.meta = { ...shown.meta, ...patch };
    if ('protocolOverride' in patch && patch.protocolOverride === undefined) delete shown.meta.protocolOverride;
    if (shown.id) await this.writeMeta(shown.id, patch);
    if (!quiet) await this.sendSnapshot();
  }

  /** A metadata change, tracked so that a delete waits for it. */
  writeMeta(id: string, patch: Partial<Omit<ConversationMeta, 'id' | 'createdAt'>>): Promise<boolean> {
    return this.sessions.track(id, this.store.setMeta(id, patch));
  }

  async openImage(id: string): Promise<void> {
    const shownId = this.shown.id;
    const page = shownId ? await this.store.open(shownId, { limit: this.window }) : undefined;
    const ref = page?.messages.flatMap((m) => m.images ?? []).find((i) => i.id === id) ?? this.tray.items.find((a) => a.image?.id === id)?.image;
    if (!ref) return;
    await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(this.store.images.file(ref)), { preview: true });
  }

  refreshView(): void {
    this.needsSnapshot = true;
    // Changes come in bursts (a checkpoint, a list change, a settings change): one snapshot each tick.
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    setTimeout(() => {
      this.refreshQueued = false;
      void this.sendSnapshot();
    }, 0);
  }

  ensureLoaded(): Promise<void> {
    this.loaded ??= (async () => {
      const registry = this.services.registry;
      if (registry.snapshot.updatedAt === 0) {
        this.services.ensureCatalogTimer();
        // Listing models is needed to chat; its failure is shown in the view's notice.
        await registry.refresh().catch((err: unknown) => this.services.log.warn(`Model refresh for chat failed: ${String(err)}`));
      }
      // Watching starts with the first use (activation reads no file). Another window (or this
      // one) changed conversations: the list follows, and the open conversation too unless an
      // answer is being written into it here (its own deltas are newer than the file).
      this.subscriptions.push(
        this.store.onDidChange((e) => {
          const shownId = this.shown.id;
          if (shownId && this.sessions.get(shownId) && (e.ids === 'all' || e.ids.includes(shownId))) return;
          this.refreshView();
        }),
      );
      // The latest conversation is shown; one that cannot be read (set aside or failing) leaves a
      // new chat, never a chat that cannot be used.
      try {
        for (const summary of (await this.store.list()).slice(0, 3)) {
          const page = await this.store.open(summary.id, { limit: 0 });
          if (page) {
            this.show({ key: page.meta.id, id: page.meta.id, meta: page.meta });
            break;
          }
        }
      } catch (err) {
        this.services.log.warn(`Opening the latest conversation failed: ${String(err)}`);
      }
      this.loadedDone = true;
    })();
    return this.loaded;
  }
}

function draft(): Shown {
  return { key: `${DRAFT_PREFIX}${randomUUID()}`, meta: {} };
}

function gone(): GatewayError {
  return new GatewayError('badRequest', 'The conversation was deleted; nothing more is written to it.');
}

/** A file URI from a vscode.Uri, a URI string (`file:///…`) or a plain path (Windows drive paths included). */
export function toUri(value: string | vscode.Uri): vscode.Uri {
  if (value instanceof vscode.Uri) return value;
  return /^[a-z][a-z0-9+.-]+:/i.test(value) && !/^[a-z]:[\\/]/i.test(value) ? vscode.Uri.parse(value, true) : vscode.Uri.file(value);
}
