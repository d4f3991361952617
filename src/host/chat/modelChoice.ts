/**
 * Which chat model a conversation uses: its own choice, else the one picked last (remembered across
 * sessions), else the first chat model the key may use. Also the conversation's protocol and search
 * switch and thinking choice, which a new chat keeps until its first send. No `vscode` import.
 */
import * as l10n from '@vscode/l10n';
import type { ConversationMeta } from '../../core/chat/conversationStore';
import { GatewayError } from '../../core/errors';
import type { ModelInfo } from '../../core/models/types';
import type { ChatBase, Shown } from './sessions';

/** What model choice needs from the chat controller. */
export interface ModelChoiceHost extends ChatBase {
  ensureLoaded(): Promise<void>;
  sendSnapshot(): Promise<void>;
}

export type ConversationPatch = Partial<Pick<ConversationMeta, 'model' | 'protocolOverride' | 'enableSearch' | 'thinking'>>;

const LAST_MODEL_KEY = 'chat.model';

export class ModelChoice {
  /** The model picked last, for conversations that have not chosen one. */
  private last?: string;

  constructor(private readonly host: ModelChoiceHost) {
    this.last = host.services.context.globalState.get<string>(LAST_MODEL_KEY);
  }

  chatModels(): ModelInfo[] {
    return this.host.services.registry.snapshot.models.filter((m) => m.kind === 'chat' && m.available);
  }

  modelFor(meta: Partial<ConversationMeta>): ModelInfo | undefined {
    const models = this.chatModels();
    const wanted = meta.model ?? this.last;
    return models.find((m) => m.id === wanted) ?? models[0];
  }

  /** Why no answer can be asked for right now, or undefined when it can. */
  blocker(model: ModelInfo | undefined): GatewayError | undefined {
    if (!this.host.services.settings().baseUrl.trim()) return new GatewayError('badRequest', l10n.t('No gateway base address is set. Set "modelGateway.baseUrl" first.'));
    if (!model) return new GatewayError('modelUnavailable', l10n.t('No chat model is available to this key. Refresh the models or check the key.'));
    return undefined;
  }

  async select(id: string, target: Shown): Promise<void> {
    await this.host.ensureLoaded();
    const model = this.chatModels().find((m) => m.id === id);
    if (!model) throw new GatewayError('modelUnavailable', l10n.t('The model {0} is not a chat model available to this key.', id));
    this.last = id;
    await this.host.services.context.globalState.update(LAST_MODEL_KEY, id);
    const override = target.meta.protocolOverride;
    await this.update({ model: id, ...(override && !model.protocols.includes(override) ? { protocolOverride: undefined } : {}) }, true, target);
    await this.host.sendSnapshot();
  }

  /** Changes a conversation's model, protocol, search switch or thinking (a new chat keeps them until its first send). */
  async update(patch: ConversationPatch, quiet: boolean, target?: Shown): Promise<void> {
    await this.host.ensureLoaded();
    const shown = target ?? this.host.shown;
    shown.meta = { ...shown.meta, ...patch };
    if ('protocolOverride' in patch && patch.protocolOverride === undefined) delete shown.meta.protocolOverride;
    if (shown.id) await this.writeMeta(shown.id, patch);
    if (!quiet) await this.host.sendSnapshot();
  }

  /** A metadata change, tracked so that a delete waits for it. */
  writeMeta(id: string, patch: Partial<Omit<ConversationMeta, 'id' | 'createdAt'>>): Promise<boolean> {
    return this.host.sessions.track(id, this.host.store.setMeta(id, patch));
  }
}
