import * as vscode from 'vscode';
import { effectiveProtocol, imageSupport } from '../../core/chat/capabilities';
import type { CacheField } from '../../core/chat/cacheFields';
import { streamChat } from '../../core/chat/chat';
import { promptCacheRequest } from '../../core/chat/promptCache';
import type { ChatEvent, ChatReasoning, Usage } from '../../core/chat/events';
import { GatewayError, isGatewayError } from '../../core/errors';
import { withProtocolFallback } from '../../core/models/protocolFallback';
import type { RegistrySnapshot } from '../../core/models/modelRegistry';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import { chatSettings, type ChatSettings } from '../chat/chatSettings';
import { cacheFieldRetry, protocolSwitchHandler } from '../protocolSwitch';
import type { Services } from '../services';
import { chatRequestOver, type AnswerRequest } from './answerRequest';
import { relayAnswer, type RelayedAnswer } from './answerRelay';
import {
  dataPartClass,
  supportsUsagePart,
  type LanguageModelChatProvider,
  type LanguageModelChatRequestMessage,
  type LanguageModelResponsePart,
  type ProvideLanguageModelChatResponseOptions,
} from './lmApi';
import { chatModelsForVsCode, toChatInformation, type GatewayChatInformation } from './modelInfo';
import { toLanguageModelError } from './lmErrors';
import { offerUtilityModel } from './nativeChatSetup';
import { agentAnswered } from '../walkthrough';
import { estimateMessageTokens, toChatMessages, type ConvertedRequest } from './requestMessages';
import { estimateTokens } from '../../core/chat/tokenEstimate';

/** The vendor of `contributes.languageModelChatProviders` in package.json. */

/** The core carries function tools on all three protocols, so every model may be offered them. */
const CORE_TOOL_CALLING = true;

/**
 * How many tool calls' reasoning is kept for the next request. VS Code sends the assistant's tool
 * calls back without the reasoning that led to them, but Kimi-type and DeepSeek-type thinking models
 * refuse a tool-call turn without it, and Messages needs the signed thinking block. A long agent
 * session makes a few hundred calls; older ones are dropped first.
 */
const KEPT_REASONING = 500;

/**
 * The gateway's chat models in VS Code's own chat (the Chat view's model picker, agent mode, and
 * any extension calling `vscode.lm.selectChatModels`). It drives the same core adapters as the
 * sidebar chat, lists the same models, and never sees the key: requests go through Services.http().
 */
export class GatewayChatProvider implements LanguageModelChatProvider<GatewayChatInformation>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeLanguageModelChatInformation = this.changed.event;
  /** The key or the settings changed since the model list was read: it is read again when asked. */
  private stale = true;
  /** The list VS Code was last given (as JSON), to tell it of a change only when there is one. */
  private shown: string | undefined;
  /** The reasoning of answers that made tool calls, by call id (a Map keeps insertion order). */
  private readonly reasoningByCall = new Map<string, ChatReasoning>();
  /** Whether this window has offered VS Code's chat a utility model yet (see nativeChatSetup.ts). */
  private utilityOffered = false;
  /** The kinds of unknown request parts already logged. */
  private readonly loggedPartKinds = new Set<string>();
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly services: Services) {
    const staleNow = () => {
      this.stale = true;
      this.changed.fire();
    };
    this.subscriptions = [
      this.changed,
      services.keys.onDidChange(staleNow),
      services.onDidChangeSettings(staleNow),
      services.registry.onDidChange((snapshot) => this.shownChanged(snapshot)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        // What is offered per model (answer limit, image input) comes from these chat settings.
        if (
          e.affectsConfiguration('modelGateway.chat.maxTokens') ||
          e.affectsConfiguration('modelGateway.chat.imageInputModels')
        )
          this.changed.fire();
      }),
    ];
  }

  async provideLanguageModelChatInformation(
    options: { readonly silent: boolean },
    _token: vscode.CancellationToken,
  ): Promise<GatewayChatInformation[]> {
    if (!(await this.services.keys.has())) {
      if (!options.silent) {
        void vscode.window
          .showInformationMessage(
            vscode.l10n.t("Set the Model Gateway API key to use the gateway's models in chat."),
            vscode.l10n.t('Set API Key'),
          )
          .then((choice) => {
            if (choice) void vscode.commands.executeCommand('modelGateway.setApiKey');
          });
      }
      return [];
    }
    const snapshot = await this.modelList();
    if (!snapshot) return [];
    if (snapshot.keyError && !options.silent) {
      this.services.log.warn(`Model list for VS Code's chat: ${snapshot.keyError.describe()}`);
    }
    const list = this.informationOf(snapshot);
    this.shown = JSON.stringify(list);
    return list;
  }

  /**
   * The list to answer VS Code with. Once read in this window, the registry's. After a key or
   * settings change, or first in a window, the last list seen for these keys at this gateway (kept
   * between sessions) at once, with a read of the gateway behind it that tells VS Code when what it
   * shows changed (see shownChanged); the Language Models editor stays empty until the provider
   * answers. Only when nothing was ever seen for these keys is the read itself awaited.
   */
  private async modelList(): Promise<RegistrySnapshot | undefined> {
    const registry = this.services.registry;
    if (!this.stale && registry.snapshot.updatedAt !== 0) return registry.snapshot;
    this.stale = false;
    let read: RegistrySnapshot | undefined;
    const reading = registry.refresh().then(
      (snapshot) => {
        this.services.ensureCatalogTimer();
        return (read = snapshot);
      },
      (err: unknown) => {
        this.stale = true;
        this.services.log.warn(
          `Model list for VS Code's chat could not be read: ${err instanceof Error ? err.message : String(err)}`,
        );
        return undefined;
      },
    );
    const known = await registry.lastKnown().catch(() => undefined);
    return read ?? known ?? (await reading);
  }

  /** The registry changed: VS Code is told when that changes what it was last given. */
  private shownChanged(snapshot: RegistrySnapshot): void {
    if (this.shown !== undefined && JSON.stringify(this.informationOf(snapshot)) === this.shown) return;
    this.changed.fire();
  }

  private informationOf(snapshot: RegistrySnapshot): GatewayChatInformation[] {
    const settings = chatSettings();
    // With several keys each model's detail names the key it is called with.
    const lists = snapshot.keyLists ?? [];
    const keyName = (m: ModelInfo) =>
      lists.length > 1 ? lists.find((l) => l.key.id === m.keyId)?.key.name : undefined;
    return chatModelsForVsCode(snapshot.models).map((m) =>
      toChatInformation(
        m,
        effectiveProtocol(m, undefined),
        { maxTokens: settings.maxTokens, imageInputModels: settings.imageInputModels, toolCalling: CORE_TOOL_CALLING },
        keyName(m),
      ),
    );
  }

  async provideLanguageModelChatResponse(
    model: GatewayChatInformation,
    messages: readonly LanguageModelChatRequestMessage[],
    options: ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    // Tools are offered in agent mode: the walkthrough's last step is done.
    if (options.tools?.length) agentAnswered();
    try {
      await this.respond(model, messages, options, progress, token);
    } catch (err) {
      // A model the gateway no longer serves to this key leaves VS Code's list once the list is read again.
      if (isGatewayError(err, 'modelUnavailable'))
        this.services.registry
          .refresh()
          .catch((e: unknown) => this.services.log.warn(`Model refresh after a refusal failed: ${String(e)}`));
      throw toLanguageModelError(err);
    }
  }

  private async respond(
    model: GatewayChatInformation,
    messages: readonly LanguageModelChatRequestMessage[],
    options: ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const info = await this.chatModel(model.id);
    this.offerUtilityOnce();
    const settings = chatSettings();
    const request = this.requestOf(info, messages, settings);
    let used = effectiveProtocol(info, model.protocol);
    const abort = new AbortController();
    // Cancelling aborts the HTTP request at once; the core then ends with a `cancelled` error.
    const onCancel = token.onCancellationRequested(() => abort.abort());
    if (token.isCancellationRequested) abort.abort();
    let answer: RelayedAnswer;
    try {
      const events = this.answerEvents(
        { info, model, request, options, settings, signal: abort.signal },
        used,
        (to) => {
          used = to;
        },
      );
      answer = await relayAnswer(events, progress, token);
    } finally {
      onCancel.dispose();
    }
    if (answer.callIds.length && answer.reasoning.text) this.keepReasoning(answer.callIds, answer.reasoning);
    if (answer.usage) this.reportUsage(info, used, answer.usage, progress);
  }

  /** The gateway's models are in use in VS Code's chat: the moment to offer a utility model, once per window. */
  private offerUtilityOnce(): void {
    if (this.utilityOffered) return;
    this.utilityOffered = true;
    void offerUtilityModel(this.services).catch((err: unknown) =>
      this.services.log.warn(`Offering a utility model failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  }

  /** VS Code's messages as the core sends them, refused at once if they carry images the model cannot read. */
  private requestOf(
    info: ModelInfo,
    messages: readonly LanguageModelChatRequestMessage[],
    settings: ChatSettings,
  ): ConvertedRequest {
    const request = toChatMessages(
      messages,
      settings.imageMaxBytes,
      (id) => this.reasoningByCall.get(id),
      this.unknownPart,
    );
    if (request.messages.some((m) => m.images?.length)) {
      const support = imageSupport(info, settings.imageInputModels);
      if (!support.supported) throw new GatewayError('badRequest', support.reason);
    }
    return request;
  }

  /**
   * The answer's events over `protocol`, switched once to another protocol or sent again without a
   * prompt-caching field when the gateway refuses one (withProtocolFallback); `onSwitch` is told the
   * protocol the answer then comes over.
   */
  private answerEvents(
    answer: AnswerRequest,
    protocol: ChatProtocol,
    onSwitch: (to: ChatProtocol) => void,
  ): AsyncIterable<ChatEvent[]> {
    const { info, settings } = answer;
    const cacheOver = (over: ChatProtocol, without: readonly CacheField[] = []) =>
      promptCacheRequest(info, over, { enabled: settings.promptCaching, without });
    const switched = protocolSwitchHandler(this.services);
    return withProtocolFallback(
      info,
      protocol,
      (over, without) =>
        streamChat(this.services.http(), chatRequestOver(answer, over, cacheOver(over, without))).batches(),
      async (change) => {
        onSwitch(change.to);
        await switched(change);
      },
      cacheFieldRetry(this.services, info.id, (over) => cacheOver(over)),
    );
  }

  private keepReasoning(callIds: string[], reasoning: ChatReasoning): void {
    for (const id of callIds) {
      this.reasoningByCall.delete(id);
      this.reasoningByCall.set(id, reasoning);
    }
    for (const id of this.reasoningByCall.keys()) {
      if (this.reasoningByCall.size <= KEPT_REASONING) break;
      this.reasoningByCall.delete(id);
    }
  }

  async provideTokenCount(
    model: GatewayChatInformation,
    text: string | LanguageModelChatRequestMessage,
    _token: vscode.CancellationToken,
  ): Promise<number> {
    return typeof text === 'string' ? estimateTokens(text) : estimateMessageTokens(text, model.protocol);
  }

  /** A part kind this version does not carry: said in the log once per kind, so it is not lost unseen. */
  private readonly unknownPart = (kind: string): void => {
    if (this.loggedPartKinds.has(kind)) return;
    this.loggedPartKinds.add(kind);
    this.services.log.warn(`VS Code chat: a request part this version does not carry was left out (${kind}).`);
  };

  /** The model as the sidebar knows it: a chat model this key may use, or a clear error. */
  private async chatModel(id: string): Promise<ModelInfo> {
    // VS Code may ask for an answer from the last known list before this window has read the models.
    if (this.services.registry.snapshot.updatedAt === 0) await this.services.registry.refresh().catch(() => undefined);
    const info = chatModelsForVsCode(this.services.registry.snapshot.models).find((m) => m.id === id);
    if (!info)
      throw new GatewayError(
        'modelUnavailable',
        vscode.l10n.t(
          'The model {0} is not a chat model available to this key. Refresh the models or pick another one.',
          id,
        ),
      );
    return info;
  }

  private reportUsage(
    info: ModelInfo,
    protocol: string,
    usage: Usage,
    progress: vscode.Progress<LanguageModelResponsePart>,
  ): void {
    this.services.log.info(
      `VS Code chat, ${info.id} over ${protocol}: ${usage.inputTokens ?? '?'} input ` +
        `(${usage.cachedInputTokens ?? '?'} from the cache), ${usage.outputTokens ?? '?'} output tokens.`,
    );
    // Every VS Code gets the session's figures in the status bar tooltip; the part below only where it is read.
    this.services.billing.recordChatTokens(usage, 'vscode', info.catalog?.cost);
    const DataPart = dataPartClass();
    if (!DataPart || !supportsUsagePart()) return;
    // The OpenAI-shaped figures under the literal MIME type `usage` that VS Code 1.120 reads for its
    // context indicator (the fix of microsoft/vscode#313458).
    const figures = {
      prompt_tokens: usage.inputTokens ?? 0,
      completion_tokens: usage.outputTokens ?? 0,
      total_tokens: usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0),
      // OpenAI's own field for the prompt tokens read from the cache.
      ...(usage.cachedInputTokens !== undefined
        ? { prompt_tokens_details: { cached_tokens: usage.cachedInputTokens } }
        : {}),
    };
    progress.report(new DataPart(new TextEncoder().encode(JSON.stringify(figures)), 'usage'));
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
