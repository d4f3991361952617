import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { effectiveProtocol, imageSupport, isSearchable as searchableOver, isThirdProvider, searchProtocols } from '../../core/chat/capabilities';
import { streamChat } from '../../core/chat/chat';
import { ConversationStore, titleFrom, toMarkdown, toView, type Conversation, type StoredMessage } from '../../core/chat/conversationStore';
import type { ChatImage, ChatMessage } from '../../core/chat/events';
import { MAX_IMAGES_PER_MESSAGE } from '../../core/chat/images';
import { GatewayError, isGatewayError } from '../../core/errors';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import type { ChatModelView, Citation, HostMessage, ImageRef, Snapshot, WebviewMessage } from '../../shared/protocol';
import type { Services } from '../services';
import { chatSettings } from './chatSettings';
import { openExternalLink } from '../links';
import { contextFromEditor, imageAttachment, imageLabel, readImageFile, type PendingAttachment } from './attachments';

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

/** What "Ask about this image" did when it only attached (no prompt given). */
export interface AttachImagesResult {
  attached: ImageRef[];
  /** The model the images will go to (it may have been switched to one that takes images). */
  model: string;
  /** Set when the model was switched because the previous one does not take images. */
  switchedFrom?: string;
  /** Why some of the given files were not attached (the others were). */
  refused?: string[];
}

interface Running {
  abort: AbortController;
  message: StoredMessage;
  sentText: number;
  sentReasoning: number;
  flushTimer?: ReturnType<typeof setTimeout>;
  lastSave: number;
}

/** About one animation frame: deltas are coalesced into at most one post per interval. */
const FLUSH_MS = 16;
const SAVE_EVERY_MS = 1000;
const SNAPSHOT_WINDOW = 200;

/**
 * The chat's state lives here, in the host, not in the webview: conversations, the selected
 * model, pending attachments and the answer being streamed. The webview renders what it is sent.
 */
export class ChatController implements vscode.Disposable {
  private conversation?: Conversation;
  private model?: string;
  private attachments: PendingAttachment[] = [];
  private running?: Running;
  private port?: ChatViewPort;
  private needsSnapshot = true;
  private window = SNAPSHOT_WINDOW;
  private loaded?: Promise<void>;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly services: Services,
    private readonly store: ConversationStore,
  ) {
    this.model = services.context.globalState.get<string>('chat.model');
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

  attach(port: ChatViewPort | undefined): void {
    this.port = port;
    this.needsSnapshot = true;
  }

  /** The view became visible or (re)loaded: it gets the whole state, never a delta. */
  async sendSnapshot(): Promise<void> {
    // Nothing is loaded (and no network call made) for a chat view that is not showing.
    if (!this.port?.isLive()) return;
    await this.ensureLoaded();
    if (!this.port?.isLive()) return;
    this.needsSnapshot = false;
    if (this.running) {
      this.running.sentText = this.running.message.text.length;
      this.running.sentReasoning = (this.running.message.reasoning ?? '').length;
    }
    this.port.post({ type: 'snapshot', state: await this.snapshot() });
  }

  async handle(msg: WebviewMessage): Promise<void> {
    switch (msg.type) {
      case 'ready':
      case 'needSnapshot':
        return this.sendSnapshot();
      case 'send':
        await this.send(msg.text);
        return;
      case 'stop':
        return this.stop();
      case 'regenerate':
        await this.regenerate();
        return;
      case 'editLast':
        await this.editLast(msg.text);
        return;
      case 'selectModel':
        return this.selectModel(msg.model);
      case 'setProtocol':
        return this.updateConversation((c) => (c.protocolOverride = msg.protocol));
      case 'setSearch':
        return this.updateConversation((c) => (c.enableSearch = msg.enabled));
      case 'newConversation':
        return this.newConversation();
      case 'switchConversation':
        return this.switchTo(msg.id);
      case 'renameConversation':
        return this.rename(msg.id);
      case 'deleteConversation':
        return this.delete(msg.id);
      case 'exportConversation':
        await this.exportMarkdown(msg.id);
        return;
      case 'loadOlder':
        this.window += SNAPSHOT_WINDOW;
        return this.sendSnapshot();
      case 'attach':
        if (msg.what === 'image') {
          await this.pickImages();
          return;
        }
        return this.attachFromEditor(msg.what);
      case 'attachImage':
        await this.attachImageData(msg.name, msg.data);
        return;
      case 'attachImageUris':
        await this.attachImageUris(msg.uris);
        return;
      case 'openImage':
        return this.openImage(msg.id);
      case 'removeAttachment':
        this.attachments = this.attachments.filter((a) => a.id !== msg.id);
        return this.sendSnapshot();
      case 'copy':
        await vscode.env.clipboard.writeText(msg.text);
        void vscode.window.setStatusBarMessage('Copied to the clipboard', 2000);
        return;
      case 'insertCode':
        return insertAtCursor(msg.code);
      case 'openLink':
        await openExternalLink(msg.url);
        return;
      case 'allowRemoteImages':
        await this.services.context.globalState.update('chat.allowRemoteImages', true);
        this.port?.reload();
        return;
      case 'action':
        return this.runAction(msg.action);
    }
  }

  /** Sends a user message and streams the answer; resolves when the answer has ended. */
  async send(text: string, options: { system?: string } = {}): Promise<StoredMessage | undefined> {
    await this.ensureLoaded();
    if (!text.trim()) return undefined;
    if (this.running) {
      void vscode.window.showWarningMessage('An answer is still being written. Stop it first or wait for it to finish.');
      return undefined;
    }
    const images = this.attachments.flatMap((a) => (a.image ? [a.image] : []));
    if (images.length) {
      // Refused before anything is stored or sent; the images stay attached for another model.
      const model = this.selectedModel();
      const support = model ? imageSupport(model, chatSettings().imageInputModels) : undefined;
      if (model && !support?.supported) throw new GatewayError('badRequest', support?.reason ?? `${model.id} does not take images.`);
    }
    const conversation = this.conversation ?? this.store.create(titleFrom(text));
    this.conversation = conversation;
    if (conversation.messages.length === 0) conversation.title = titleFrom(text);
    const texts = this.attachments.filter((a) => !a.image);
    this.attachments = [];
    conversation.messages.push({
      id: randomUUID(),
      role: 'user',
      text,
      status: 'done',
      createdAt: Date.now(),
      ...(texts.length ? { attachments: texts.map(({ label, chars, truncated }) => ({ label, chars, truncated })), context: texts.map((a) => a.text).join('\n\n') } : {}),
      ...(images.length ? { images } : {}),
    });
    return this.answer(options.system);
  }

  async regenerate(): Promise<StoredMessage | undefined> {
    await this.ensureLoaded();
    const c = this.conversation;
    if (!c || this.running) return undefined;
    if (c.messages.at(-1)?.role === 'assistant') c.messages.pop();
    if (c.messages.at(-1)?.role !== 'user') return undefined;
    return this.answer();
  }

  async editLast(text: string): Promise<StoredMessage | undefined> {
    await this.ensureLoaded();
    const c = this.conversation;
    if (!c || this.running || !text.trim()) return undefined;
    const lastUser = c.messages.map((m) => m.role).lastIndexOf('user');
    if (lastUser < 0) return undefined;
    const user = c.messages[lastUser] as StoredMessage;
    c.messages.splice(lastUser);
    c.messages.push({ ...user, id: randomUUID(), text, createdAt: Date.now() });
    return this.answer();
  }

  stop(): void {
    this.running?.abort.abort();
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
    if (args.model) await this.selectModel(args.model);
    const before = new Set(this.attachments.map((a) => a.id));
    let answer: StoredMessage | undefined;
    try {
      if (args.images?.length) await this.attachImages(args.images.map(toUri), { switchModel: !args.model });
      if (args.protocol) {
        const protocol = args.protocol;
        const model = this.selectedModel();
        if (model && !model.protocols.includes(protocol)) {
          throw new GatewayError('badRequest', `${model.id} does not speak the ${protocol} protocol; it speaks ${model.protocols.join(', ')}.`);
        }
        await this.updateConversation((c) => (c.protocolOverride = protocol), true);
      }
      if (args.enableSearch !== undefined) {
        const enabled = args.enableSearch;
        await this.updateConversation((c) => (c.enableSearch = enabled), true);
      }
      answer = await this.send(args.prompt, { system: args.system });
      if (!answer || !this.conversation) throw new GatewayError('badRequest', 'Nothing was sent: the prompt was empty or another answer is still being written.');
    } catch (err) {
      // A scripted question that could not go leaves nothing it attached behind.
      if (this.attachments.some((a) => !before.has(a.id))) {
        this.attachments = this.attachments.filter((a) => before.has(a.id));
        void this.sendSnapshot();
      }
      throw err;
    }
    const question = this.conversation.messages.filter((m) => m.role === 'user').at(-1);
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
      images: question?.images ?? [],
      conversationId: this.conversation.id,
    };
  }

  /**
   * Attaches image files to the next message. With `switchModel`, a selected model that does not
   * take images is replaced by the first chat model that does (and the caller is told).
   */
  async attachImages(uris: vscode.Uri[], options: { switchModel?: boolean } = {}): Promise<AttachImagesResult> {
    await this.ensureLoaded();
    if (!uris.length) throw new GatewayError('badRequest', 'No image was given.');
    const settings = chatSettings();
    let model = this.selectedModel();
    let switchedFrom: string | undefined;
    if (options.switchModel && model && !imageSupport(model, settings.imageInputModels).supported) {
      const capable = this.chatModels().find((m) => imageSupport(m, settings.imageInputModels).supported);
      if (!capable) {
        throw new GatewayError(
          'modelUnavailable',
          `None of the chat models this key may use takes images, by the model catalog. ${imageSupport(model, settings.imageInputModels).reason}`,
        );
      }
      switchedFrom = model.id;
      await this.selectModel(capable.id);
      model = capable;
      void vscode.window.setStatusBarMessage(`Chat model switched to ${capable.id}: ${switchedFrom} does not take images.`, 5000);
    }
    const attached: ImageRef[] = [];
    const refused: GatewayError[] = [];
    for (const uri of uris) {
      try {
        const a = await this.addImage(async () => {
          const file = await readImageFile(uri, settings.imageMaxBytes);
          return imageAttachment(this.store.images, file.bytes, file.name, settings.imageMaxBytes);
        });
        if (a.image) attached.push(a.image);
      } catch (err) {
        refused.push(isGatewayError(err) ? err : new GatewayError('badRequest', String(err), { cause: err }));
      }
    }
    await this.sendSnapshot();
    // One bad file among several is reported and the rest stay attached; nothing attached is an error.
    const first = refused[0];
    if (first && !attached.length) throw first;
    for (const err of refused) void vscode.window.showWarningMessage(err.message);
    return { attached, model: model?.id ?? '', ...(switchedFrom ? { switchedFrom } : {}), ...(refused.length ? { refused: refused.map((e) => e.message) } : {}) };
  }

  /** Puts the cursor in the view's message box (after attaching, the question is typed next). */
  async focusInput(): Promise<void> {
    await this.sendSnapshot();
    this.port?.post({ type: 'focusInput' });
  }

  async newConversation(): Promise<void> {
    if (this.running) this.stop();
    this.conversation = undefined;
    this.window = SNAPSHOT_WINDOW;
    await this.sendSnapshot();
    this.port?.post({ type: 'focusInput' });
  }

  async exportMarkdown(id?: string): Promise<vscode.TextDocument | undefined> {
    await this.ensureLoaded();
    const c = id && id !== this.conversation?.id ? await this.store.load(id) : this.conversation;
    if (!c) {
      void vscode.window.showInformationMessage('There is no conversation to export yet.');
      return undefined;
    }
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: toMarkdown(c) });
    await vscode.window.showTextDocument(doc, { preview: false });
    return doc;
  }

  get currentConversationId(): string | undefined {
    return this.conversation?.id;
  }

  dispose(): void {
    this.stop();
    for (const s of this.subscriptions) s.dispose();
  }

  private async answer(system?: string): Promise<StoredMessage | undefined> {
    const c = this.conversation as Conversation;
    const model = this.selectedModel();
    const settings = chatSettings();
    const problem = this.blocker(model);
    if (problem) {
      await this.store.save(c);
      void this.sendSnapshot();
      void vscode.window.showWarningMessage(problem.message);
      return undefined;
    }
    const info = model as ModelInfo;
    const protocol = effectiveProtocol(info, c.protocolOverride);
    const history = await this.history(c, info, settings);
    const message: StoredMessage = { id: randomUUID(), role: 'assistant', text: '', reasoning: '', status: 'streaming', model: info.id, protocol, createdAt: Date.now() };
    c.messages.push(message);
    c.model = info.id;
    c.updatedAt = Date.now();
    const abort = new AbortController();
    const running: Running = { abort, message, sentText: 0, sentReasoning: 0, lastSave: Date.now() };
    this.running = running;
    await this.store.save(c);
    await this.sendSnapshot();
    this.port?.post({ type: 'busy', busy: true });
    const sources: string[] = [];
    try {
      const events = streamChat(this.services.http(), {
        model: info.id,
        protocol,
        messages: history,
        system: system ?? (settings.systemPrompt || undefined),
        // The chat always streams; a model that requires streaming would get it anyway.
        stream: true,
        requiresStreaming: info.catalog?.requiresStreaming === true,
        maxTokens: settings.maxTokens,
        enableSearch: c.enableSearch && searchableOver(info, protocol) ? true : undefined,
        signal: abort.signal,
      });
      for await (const e of events) {
        if (e.type === 'textDelta') message.text += e.text;
        else if (e.type === 'reasoningDelta') message.reasoning += e.text;
        else if (e.type === 'citation') addCitation(message, { url: e.url, ...(e.title ? { title: e.title } : {}) });
        else if (e.type === 'webSearch') {
          if (e.queries.length) message.searches = [...(message.searches ?? []), ...e.queries];
          sources.push(...e.sources);
        } else if (e.type === 'usage') message.usage = e.usage;
        else if (e.type === 'done') message.status = 'done';
        else if (e.type === 'error') {
          message.status = e.error.kind === 'cancelled' ? 'stopped' : 'cut';
          if (e.error.kind !== 'cancelled') message.error = { kind: e.error.kind, message: e.error.message, ...(e.error.requestId ? { requestId: e.error.requestId } : {}) };
        }
        this.scheduleFlush(running);
      }
    } catch (err) {
      message.status = 'cut';
      const error = isGatewayError(err) ? err : new GatewayError('protocol', String(err));
      message.error = { kind: error.kind, message: error.message };
    } finally {
      // Sources a search read but the text did not cite come after the cited ones.
      for (const url of sources) addCitation(message, { url });
      if (message.status === 'streaming') message.status = abort.signal.aborted ? 'stopped' : 'cut';
      if (!message.reasoning) delete message.reasoning;
      this.running = undefined;
      if (running.flushTimer) clearTimeout(running.flushTimer);
      c.updatedAt = Date.now();
      await this.store.save(c);
      this.flushFinal(message);
    }
    if (message.error) this.services.log.warn(`Chat answer from ${info.id} over ${protocol} ended: ${message.error.message}`);
    return message;
  }

  private scheduleFlush(running: Running): void {
    if (running.flushTimer) return;
    running.flushTimer = setTimeout(() => {
      running.flushTimer = undefined;
      this.flush(running);
      if (Date.now() - running.lastSave > SAVE_EVERY_MS && this.conversation) {
        running.lastSave = Date.now();
        void this.store.save(this.conversation);
      }
    }, FLUSH_MS);
  }

  private flush(running: Running): void {
    if (!this.port?.isLive() || this.needsSnapshot) {
      this.needsSnapshot = true;
      return;
    }
    const m = running.message;
    const reasoning = m.reasoning ?? '';
    if (m.text.length === running.sentText && reasoning.length === running.sentReasoning) return;
    this.port.post({ type: 'append', messageId: m.id, textFrom: running.sentText, text: m.text.slice(running.sentText), reasoningFrom: running.sentReasoning, reasoning: reasoning.slice(running.sentReasoning) });
    running.sentText = m.text.length;
    running.sentReasoning = reasoning.length;
  }

  /**
   * The messages sent with a request: the last `historyMessages`, context text before the
   * question, and the images of user messages read from the store. A model that does not take
   * images gets a note in their place instead (the conversation may have started on another model).
   */
  private async history(c: Conversation, model: ModelInfo, settings: ReturnType<typeof chatSettings>): Promise<ChatMessage[]> {
    const takesImages = imageSupport(model, settings.imageInputModels).supported;
    const out: ChatMessage[] = [];
    for (const m of c.messages.filter((m) => m.text.trim() || m.context || m.images?.length).slice(-settings.historyMessages)) {
      let content = m.context ? `${m.context}\n\n${m.text}` : m.text;
      const images: ChatImage[] = [];
      const notes: string[] = [];
      for (const ref of m.images ?? []) {
        const bytes = takesImages ? await this.store.images.read(ref) : undefined;
        if (bytes) images.push({ mediaType: ref.mediaType, base64: bytes.toString('base64') });
        else notes.push(takesImages ? `[image ${ref.name} is no longer stored]` : `[image ${ref.name} not sent: ${model.id} does not take images]`);
      }
      if (notes.length) content = [content, ...notes].filter(Boolean).join('\n');
      out.push({ role: m.role, content, ...(images.length ? { images } : {}) });
    }
    return out;
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

  private flushFinal(message: StoredMessage): void {
    if (this.port?.isLive() && !this.needsSnapshot) {
      this.port.post({ type: 'message', message: this.view(message) });
      this.port.post({ type: 'busy', busy: false });
    } else {
      this.needsSnapshot = true;
      void this.sendSnapshot();
    }
  }

  private async snapshot(): Promise<Snapshot> {
    const messages = this.conversation?.messages ?? [];
    const models = this.chatModels();
    const selected = this.selectedModel();
    const settings = chatSettings();
    const override = this.conversation?.protocolOverride;
    return {
      conversations: await this.store.list(),
      ...(this.conversation ? { conversationId: this.conversation.id } : {}),
      messages: messages.slice(-this.window).map((m) => this.view(m)),
      hasOlder: messages.length > this.window,
      models: models.map((m) => toModelView(m, override, settings.imageInputModels)),
      ...(selected ? { model: selected.id } : {}),
      ...(this.conversation?.protocolOverride ? { protocolOverride: this.conversation.protocolOverride } : {}),
      enableSearch: this.conversation?.enableSearch ?? false,
      attachments: this.attachments.map(({ id, label, chars, truncated, image }) => {
        const src = image ? this.imageSrc(image) : undefined;
        return { id, label, chars, truncated, ...(image ? { image: src ? { ...image, src } : image } : {}) };
      }),
      busy: this.running !== undefined,
      allowRemoteImages: this.services.context.globalState.get<boolean>('chat.allowRemoteImages') ?? false,
      imageMaxBytes: settings.imageMaxBytes,
      ...(await this.notice()),
    };
  }

  private async notice(): Promise<Pick<Snapshot, 'notice'>> {
    if (!this.services.settings().baseUrl.trim()) return { notice: { message: 'Set the gateway base address to start chatting.', action: 'openSettings' } };
    if (!(await this.services.keys.has())) return { notice: { message: 'Set your API key to start chatting.', action: 'setKey' } };
    const snap = this.services.registry.snapshot;
    if (snap.updatedAt === 0) return { notice: { message: 'Loading the models this key may use…' } };
    if (snap.keyError) return { notice: { message: snap.keyError.message, action: snap.keyError.kind === 'auth' ? 'setKey' : 'refreshModels' } };
    if (this.chatModels().length === 0) return { notice: { message: 'This key has no chat models.', action: 'refreshModels' } };
    return {};
  }

  private chatModels(): ModelInfo[] {
    return this.services.registry.snapshot.models.filter((m) => m.kind === 'chat' && m.available);
  }

  private selectedModel(): ModelInfo | undefined {
    const models = this.chatModels();
    const wanted = this.conversation?.model ?? this.model;
    return models.find((m) => m.id === wanted) ?? models[0];
  }

  private blocker(model: ModelInfo | undefined): GatewayError | undefined {
    if (!this.services.settings().baseUrl.trim()) return new GatewayError('badRequest', 'No gateway base address is set. Set "modelGateway.baseUrl" first.');
    if (!model) return new GatewayError('modelUnavailable', 'No chat model is available to this key. Refresh the models or check the key.');
    return undefined;
  }

  private async selectModel(id: string): Promise<void> {
    await this.ensureLoaded();
    const model = this.chatModels().find((m) => m.id === id);
    if (!model) throw new GatewayError('modelUnavailable', `The model ${id} is not a chat model available to this key.`);
    this.model = id;
    await this.services.context.globalState.update('chat.model', id);
    if (this.conversation) {
      this.conversation.model = id;
      if (this.conversation.protocolOverride && !model.protocols.includes(this.conversation.protocolOverride)) delete this.conversation.protocolOverride;
      if (this.conversation.messages.length) await this.store.save(this.conversation);
    }
    await this.sendSnapshot();
  }

  private async updateConversation(change: (c: Conversation) => void, quiet = false): Promise<void> {
    await this.ensureLoaded();
    this.conversation ??= this.store.create();
    change(this.conversation);
    if (this.conversation.messages.length) await this.store.save(this.conversation);
    if (!quiet) await this.sendSnapshot();
  }

  private async switchTo(id: string): Promise<void> {
    if (this.running) this.stop();
    const c = await this.store.load(id);
    if (!c) throw new GatewayError('badRequest', `The conversation ${id} no longer exists.`);
    this.conversation = c;
    this.window = SNAPSHOT_WINDOW;
    await this.sendSnapshot();
  }

  private async rename(id: string): Promise<void> {
    const c = id === this.conversation?.id ? this.conversation : await this.store.load(id);
    if (!c) return;
    const title = await vscode.window.showInputBox({ title: 'Rename conversation', value: c.title, validateInput: (v) => (v.trim() ? undefined : 'A title cannot be empty.') });
    if (!title?.trim()) return;
    c.title = title.trim();
    await this.store.save(c);
    await this.sendSnapshot();
  }

  private async delete(id: string): Promise<void> {
    const summary = (await this.store.list()).find((c) => c.id === id);
    if (!summary) return;
    const choice = await vscode.window.showWarningMessage(`Delete the conversation "${summary.title}"? This cannot be undone.`, { modal: true }, 'Delete');
    if (choice !== 'Delete') return;
    if (this.conversation?.id === id) {
      this.stop();
      this.conversation = undefined;
    }
    await this.store.delete(id);
    // Images only this conversation used go with it; attached-but-unsent ones stay.
    const removed = await this.store.pruneImages(this.attachments.flatMap((a) => (a.image ? [a.image.id] : []))).catch((err: unknown) => {
      this.services.log.warn(`Removing unused chat images failed: ${String(err)}`);
      return 0;
    });
    if (removed) this.services.log.info(`Removed ${removed} chat image(s) no conversation uses any more.`);
    await this.sendSnapshot();
  }

  private async attachFromEditor(what: 'file' | 'selection'): Promise<void> {
    const attachment = contextFromEditor(what, chatSettings().contextMaxChars);
    if (!attachment) {
      void vscode.window.showInformationMessage(what === 'file' ? 'Open a file in the editor to attach it.' : 'Select some text in the editor to attach it.');
      return;
    }
    this.attachments.push(attachment);
    if (attachment.truncated) void vscode.window.showWarningMessage(`${attachment.label} was cut to ${attachment.chars.toLocaleString()} characters (setting "modelGateway.chat.contextMaxChars").`);
    await this.sendSnapshot();
  }

  /** "Image…" in the view: the open dialog, filtered to the formats the protocols take. */
  private async pickImages(): Promise<void> {
    const model = this.selectedModel();
    const support = model ? imageSupport(model, chatSettings().imageInputModels) : undefined;
    if (model && !support?.supported) {
      void vscode.window.showWarningMessage(support?.reason ?? `${model.id} does not take images.`);
      return;
    }
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: true,
      openLabel: 'Attach',
      title: 'Attach images to the next chat message',
      filters: { Images: ['png', 'jpg', 'jpeg', 'gif', 'webp'] },
    });
    if (picked?.length) await this.attachImagesQuietly(picked);
  }

  /** Pasted or dropped image bytes from the view. */
  private async attachImageData(name: string, base64: string): Promise<void> {
    const bytes = Buffer.from(base64, 'base64');
    await this.whenImagesAllowed(async () => {
      const max = chatSettings().imageMaxBytes;
      await this.addImage(() => imageAttachment(this.store.images, bytes, name || 'pasted image', max));
    });
    await this.sendSnapshot();
  }

  /** Files dropped on the view from the explorer (or the OS) as URIs. */
  private async attachImageUris(uris: string[]): Promise<void> {
    const parsed: vscode.Uri[] = [];
    for (const raw of uris) {
      try {
        parsed.push(vscode.Uri.parse(raw, true));
      } catch {
        this.services.log.warn(`Ignored a dropped item that is not a URI: ${raw.slice(0, 200)}`);
      }
    }
    if (parsed.length) await this.attachImagesQuietly(parsed);
  }

  /** Attaches from the view: each problem is shown, the images that are fine still attach. */
  private async attachImagesQuietly(uris: vscode.Uri[]): Promise<void> {
    await this.whenImagesAllowed(async () => {
      const max = chatSettings().imageMaxBytes;
      for (const uri of uris) {
        try {
          await this.addImage(async () => {
            const file = await readImageFile(uri, max);
            return imageAttachment(this.store.images, file.bytes, file.name, max);
          });
        } catch (err) {
          void vscode.window.showWarningMessage(err instanceof Error ? err.message : String(err));
        }
      }
    });
    await this.sendSnapshot();
  }

  private async whenImagesAllowed(work: () => Promise<void>): Promise<void> {
    await this.ensureLoaded();
    const model = this.selectedModel();
    const support = model ? imageSupport(model, chatSettings().imageInputModels) : undefined;
    if (model && !support?.supported) {
      void vscode.window.showWarningMessage(support?.reason ?? `${model.id} does not take images.`);
      return;
    }
    try {
      await work();
    } catch (err) {
      void vscode.window.showWarningMessage(err instanceof Error ? err.message : String(err));
    }
  }

  /** Adds one image attachment (the same image twice is attached once). */
  private async addImage(make: () => Promise<PendingAttachment>): Promise<PendingAttachment> {
    const count = this.attachments.filter((a) => a.image).length;
    if (count >= MAX_IMAGES_PER_MESSAGE) throw new GatewayError('badRequest', `A message can carry at most ${MAX_IMAGES_PER_MESSAGE} images.`);
    const attachment = await make();
    const same = this.attachments.find((a) => a.image && a.image.id === attachment.image?.id);
    if (same) return same;
    this.attachments.push(attachment);
    if (attachment.image) this.services.log.info(`Attached image ${imageLabel(attachment.image)} to the next chat message.`);
    return attachment;
  }

  private async openImage(id: string): Promise<void> {
    const ref = this.conversation?.messages.flatMap((m) => m.images ?? []).find((i) => i.id === id) ?? this.attachments.find((a) => a.image?.id === id)?.image;
    if (!ref) return;
    await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(this.store.images.file(ref)), { preview: true });
  }

  /** Adds text produced elsewhere (e.g. a parsed document) as context for the next message. */
  async addContext(label: string, text: string): Promise<void> {
    const max = chatSettings().contextMaxChars;
    this.attachments.push({ id: randomUUID(), label, text: text.slice(0, max), chars: Math.min(text.length, max), truncated: text.length > max });
    await this.sendSnapshot();
  }

  private async runAction(action: 'setKey' | 'openSettings' | 'refreshModels' | 'retry' | 'pickModel'): Promise<void> {
    switch (action) {
      case 'setKey':
        await vscode.commands.executeCommand('modelGateway.setApiKey');
        return;
      case 'openSettings':
        await vscode.commands.executeCommand('modelGateway.openSettings');
        return;
      case 'refreshModels':
        await vscode.commands.executeCommand('modelGateway.refreshModels');
        return;
      case 'retry':
        await this.regenerate();
        return;
      case 'pickModel': {
        const pick = await vscode.window.showQuickPick(
          this.chatModels().map((m) => ({ label: m.id, description: m.provider })),
          { title: 'Pick a chat model' },
        );
        if (pick) await this.selectModel(pick.label);
        return;
      }
    }
  }

  private refreshView(): void {
    this.needsSnapshot = true;
    void this.sendSnapshot();
  }

  private ensureLoaded(): Promise<void> {
    this.loaded ??= (async () => {
      const registry = this.services.registry;
      if (registry.snapshot.updatedAt === 0) {
        this.services.ensureCatalogTimer();
        // Listing models is needed to chat; its failure is shown in the view's notice.
        await registry.refresh().catch((err: unknown) => this.services.log.warn(`Model refresh for chat failed: ${String(err)}`));
      }
      const latest = (await this.store.list())[0];
      if (latest) this.conversation = await this.store.load(latest.id);
    })();
    return this.loaded;
  }
}

/**
 * Whether the web-search switch applies to a model: over `protocol` when given (Chat Completions:
 * third-provider models, `enable_search`; Responses: any model, the `web_search` tool), else
 * whether it is a third-provider model.
 */
export function isSearchable(m: ModelInfo, protocol?: ChatProtocol): boolean {
  return protocol ? searchableOver(m, protocol) : isThirdProvider(m);
}

function toModelView(m: ModelInfo, override: ChatProtocol | undefined, imageModels: string[]): ChatModelView {
  const images = imageSupport(m, imageModels);
  return {
    id: m.id,
    provider: m.provider,
    protocols: m.protocols,
    searchable: searchableOver(m, effectiveProtocol(m, override)),
    searchProtocols: searchProtocols(m),
    imageInput: images.supported,
    imageNote: images.reason,
  };
}

/** One entry in an answer's numbered sources; a URL already there keeps its place (and gains a title). */
function addCitation(message: StoredMessage, citation: Citation): void {
  const list = (message.citations ??= []);
  const known = list.find((c) => c.url === citation.url);
  if (!known) list.push(citation);
  else if (!known.title && citation.title) known.title = citation.title;
}

/** A file URI from a vscode.Uri, a URI string (`file:///…`) or a plain path (Windows drive paths included). */
export function toUri(value: string | vscode.Uri): vscode.Uri {
  if (value instanceof vscode.Uri) return value;
  return /^[a-z][a-z0-9+.-]+:/i.test(value) && !/^[a-z]:[\\/]/i.test(value) ? vscode.Uri.parse(value, true) : vscode.Uri.file(value);
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
