/**
 * Which chat model a conversation uses: its own choice, else the one picked last (remembered across
 * sessions), else the first chat model the key may use. Also the conversation's protocol and search
 * switch and thinking choice, which a new chat keeps until its first send. No `vscode` import.
 *
 * A stored conversation whose own model the key can no longer use (the key changed, or the model
 * left the key's list) is never moved to another one silently: it has no model until the user
 * picks one, and the pick is recorded in the conversation as a notice, as is a switch the chat
 * makes itself (Ask About This Image moving to a model that takes images) and any other change of
 * a stored conversation's model: the reader sees where answers start coming from another model.
 */
import { offeredProtocols } from '../../core/chat/capabilities';
import { randomUUID } from 'node:crypto';
import type { ConversationMeta } from '../../core/chat/store/core';
import type { StoredMessage } from '../../core/chat/store/log';
import { GatewayError } from '../../core/errors';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import type { ModelChangeReason } from '../../shared/protocol';
import { modelGoneSendNote } from '../../shared/notices';
import type { ChatBase, Shown } from './sessions';
import { words } from '../../shared/words';

/** What model choice needs from the chat controller. */
export interface ModelChoiceHost extends ChatBase {
  ensureLoaded(): Promise<void>;
  sendSnapshot(): Promise<void>;
}

export type ConversationPatch = Partial<
  Pick<ConversationMeta, 'model' | 'keyId' | 'protocolOverride' | 'enableSearch' | 'thinking'>
>;

const LAST_MODEL_KEY = 'chat.model';

/** How many models the conversation suggests to continue with when its own is gone. */
const SUGGESTIONS = 2;

export class ModelChoice {
  /** The model picked last, for conversations that have not chosen one. */
  private last?: string;
  /** The API key changed in this session (a model that went missing since went with the old key). */
  keyChanged = false;

  constructor(private readonly host: ModelChoiceHost) {
    this.last = host.services.context.globalState.get<string>(LAST_MODEL_KEY);
  }

  chatModels(): ModelInfo[] {
    return this.host.services.registry.snapshot.models.filter((m) => m.kind === 'chat' && m.available);
  }

  /** The conversation's model; undefined when none can be used, or when its own is gone (see goneModel). */
  modelFor(meta: Partial<ConversationMeta>): ModelInfo | undefined {
    if (this.goneModel(meta)) return undefined;
    const models = this.chatModels();
    const wanted = meta.model ?? this.last;
    return models.find((m) => m.id === wanted) ?? models[0];
  }

  /**
   * A stored conversation's own model when the key's list was read and no longer has it (while the
   * list is unknown, e.g. being read again after a key change, nothing is said). A key with no chat
   * model at all is the setup notice's business, not this one's.
   */
  goneModel(meta: Partial<ConversationMeta>): string | undefined {
    if (!meta.id || !meta.model || !this.host.services.registry.snapshot.keyModels) return undefined;
    const models = this.chatModels();
    const own = models.find((m) => m.id === meta.model);
    // The key the conversation called it with was removed (or no longer lists it): as gone as the model.
    if (own && meta.keyId !== undefined && own.keyIds && !own.keyIds.includes(meta.keyId)) return meta.model;
    return models.length && !own ? meta.model : undefined;
  }

  /**
   * The models suggested to continue with instead of `gone`: the one picked last, then those of
   * the same provider (when the catalog still knows it) and with the longest common start of the
   * name (`gpt-4o` → `gpt-4o-mini`), as the closest kin of the model that went.
   */
  suggestions(gone: string): string[] {
    const models = this.chatModels();
    const provider = this.host.services.registry.find(gone)?.provider;
    const kin = (m: ModelInfo): number =>
      (provider !== undefined && m.provider === provider ? 1000 : 0) + commonStart(m.id, gone);
    const ranked = models
      .map((m, i) => ({ m, i, score: kin(m) }))
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .map((r) => r.m.id);
    const last = this.last !== gone && models.some((m) => m.id === this.last) ? this.last : undefined;
    return [...new Set([...(last ? [last] : []), ...ranked])].slice(0, SUGGESTIONS);
  }

  /**
   * Why no answer can be asked for right now in a conversation with `meta`, or undefined when it
   * can. Checked before anything is stored: a question that cannot be answered leaves no
   * conversation behind.
   */
  async blocker(model: ModelInfo | undefined, meta: Partial<ConversationMeta> = {}): Promise<GatewayError | undefined> {
    if (!this.host.services.settings().baseUrl.trim())
      return new GatewayError('badRequest', words('No gateway base address is set. Set "modelGateway.baseUrl" first.'));
    // Without a key there are no models to blame either: say what is missing.
    if (!(await this.host.services.keys.has()))
      return new GatewayError('auth', words('No API key is set. Set your API key to start chatting.'));
    const gone = this.goneModel(meta);
    if (gone) return new GatewayError('modelUnavailable', modelGoneSendNote(gone));
    if (!model)
      return new GatewayError(
        'modelUnavailable',
        words('No chat model is available to this key. Refresh the models or check the key.'),
      );
    return undefined;
  }

  /**
   * The user picked `id` for `target`. When the conversation's own model was gone, or `switched`
   * says the chat made this change itself (and why), the change is recorded in the conversation.
   */
  async select(id: string, target: Shown, switched?: { from: string; reason: ModelChangeReason }): Promise<void> {
    await this.host.ensureLoaded();
    const model = this.chatModels().find((m) => m.id === id);
    if (!model)
      throw new GatewayError('modelUnavailable', words('The model {0} is not a chat model available to this key.', id));
    const gone = this.goneModel(target.meta);
    // The model that answered so far (a stored conversation's): a change of it is said in the conversation.
    const before = target.id && !gone ? this.modelFor(target.meta)?.id : undefined;
    this.last = id;
    await this.host.services.context.globalState.update(LAST_MODEL_KEY, id);
    const override = target.meta.protocolOverride;
    await this.update(
      {
        model: id,
        keyId: model.keyId,
        ...(override && !offeredProtocols(model).includes(override) ? { protocolOverride: undefined } : {}),
      },
      true,
      target,
    );
    if (switched)
      await this.recordNotice(target, { kind: 'modelChange', from: switched.from, to: id, reason: switched.reason });
    else if (gone)
      await this.recordNotice(target, {
        kind: 'modelChange',
        from: gone,
        to: id,
        reason: this.keyChanged ? 'keyChanged' : 'modelGone',
      });
    else if (before && before !== id) await this.recordNotice(target, { kind: 'modelChange', from: before, to: id });
    await this.host.sendSnapshot();
  }

  /** Adds a notice to the conversation (to a new chat's pending ones, stored with its first message). */
  private async recordNotice(target: Shown, notice: NonNullable<StoredMessage['notice']>): Promise<void> {
    const message: StoredMessage = {
      id: randomUUID(),
      role: 'notice',
      text: '',
      status: 'done',
      notice,
      createdAt: Date.now(),
    };
    if (target.id) await this.host.sessions.track(target.id, this.host.store.append(target.id, message));
    else (target.notices ??= []).push(message);
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

  /**
   * The relay refused `refused` for the conversation's model, and the user was told later answers
   * use another protocol: a choice of the refused one the conversation holds (often kept from an
   * earlier model, which served it) goes, or the next answer would try it again.
   */
  async dropRefusedOverride(id: string, refused: ChatProtocol): Promise<void> {
    const meta = (await this.host.store.open(id, { limit: 0 }))?.meta;
    if (meta?.protocolOverride !== refused) return;
    if (this.host.shown.id === id) delete this.host.shown.meta.protocolOverride;
    await this.writeMeta(id, { protocolOverride: undefined });
    await this.host.sendSnapshot();
  }

  /** A metadata change, tracked so that a delete waits for it. */
  writeMeta(id: string, patch: Partial<Omit<ConversationMeta, 'id' | 'createdAt'>>): Promise<boolean> {
    return this.host.sessions.track(id, this.host.store.setMeta(id, patch));
  }
}

/** How many characters two model ids share at their start. */
function commonStart(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}
