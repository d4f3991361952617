/**
 * The view's whole state (the snapshot): the conversation's window of messages, models, the notice,
 * pending attachments. The controller puts the streaming answer in from its session (the store has
 * its text only up to the last checkpoint).
 */
import * as vscode from 'vscode';
import {
  effectiveProtocol,
  imageSupport,
  offeredProtocols,
  isSearchable as searchableOver,
  isThirdProvider,
  searchProtocols,
} from '../../core/chat/capabilities';
import type { ConversationStore } from '../../core/chat/conversationStore';
import type { StoredMessage } from '../../core/chat/store/log';
import { thinkingChoices, thinkingControl } from '../../core/chat/thinking';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import type { ChatMessageView, ChatModelView, HostMessage, ImageRef, Snapshot } from '../../shared/protocol';
import type { Services } from '../services';
import { setupNotice } from '../setup';
import type { PendingAttachment } from './attachments';
import { chatSettings } from './chatSettings';
import type { ModelChoice } from './modelChoice';
import { allowedImageHosts } from './remoteImages';
import type { Shown } from './sessions';

/**
 * The link to the view and whether it is in step: deltas go out only while it is live, has had a
 * snapshot since it last fell behind, and no snapshot is being built (that one will carry the text).
 */
export interface ViewLink {
  port?: { post(message: HostMessage): void; isLive(): boolean };
  needsSnapshot: boolean;
  /** Snapshots being built: deltas wait, the snapshot will carry their text. */
  snapshotsInFlight: number;
}

/** Whether the view can take a delta or a final message now (else it needs a snapshot). */
export function inStep(link: ViewLink): boolean {
  return link.port?.isLive() === true && !link.needsSnapshot && link.snapshotsInFlight === 0;
}

/**
 * Whether the web-search switch applies to a model: over `protocol` when given (Chat Completions:
 * third-provider models, `enable_search`; Responses: any model, the `web_search` tool), else
 * whether it is a third-provider model.
 */
export function isSearchable(m: ModelInfo, protocol?: ChatProtocol): boolean {
  return protocol ? searchableOver(m, protocol) : isThirdProvider(m);
}

export function toModelView(m: ModelInfo, override: ChatProtocol | undefined, imageModels: string[]): ChatModelView {
  const images = imageSupport(m, imageModels);
  const protocol = effectiveProtocol(m, override);
  const thinking = thinkingControl(m, protocol);
  return {
    id: m.id,
    provider: m.provider,
    // The default (first) is one that works; protocols refused lately follow, for an explicit choice.
    protocols: offeredProtocols(m),
    searchable: searchableOver(m, protocol),
    searchProtocols: searchProtocols(m),
    ...(thinking
      ? {
          thinking: thinking.kind === 'always' ? { always: true, choices: [] } : { choices: thinkingChoices(thinking) },
        }
      : {}),
    imageInput: images.supported,
    imageNote: images.reason,
  };
}

/** Why chat cannot be used right now (no address, no key, no models…), with the action that fixes it. */
export async function chatNotice(
  services: Services,
  chatModels: readonly ModelInfo[],
): Promise<Pick<Snapshot, 'notice'>> {
  const notice = await setupNotice(services, chatModels.length, {
    noBase: vscode.l10n.t('Set the gateway base address to start chatting.'),
    noKey: vscode.l10n.t('Set your API key to start chatting.'),
    noModels: vscode.l10n.t('This key has no chat models.'),
  });
  return notice ? { notice } : {};
}

/** The title of the conversation a snapshot shows; undefined for a new chat (it has none yet). */
export function shownTitle(state: Snapshot): string | undefined {
  return state.conversations.find((c) => c.id === state.conversationId)?.title;
}

/** The chips of what goes with the next message; images get the address the view loads them from. */
export function attachmentViews(
  items: readonly PendingAttachment[],
  imageSrc: (image: ImageRef) => string | undefined,
): Snapshot['attachments'] {
  return items.map(({ id, label, chars, truncated, image }) => {
    const src = image ? imageSrc(image) : undefined;
    return { id, label, chars, truncated, ...(image ? { image: src ? { ...image, src } : image } : {}) };
  });
}

export interface SnapshotSources {
  services: Services;
  store: ConversationStore;
  models: ModelChoice;
  /** What goes with the next message, read as the snapshot is finished. */
  attachments(): readonly PendingAttachment[];
  messageView(m: StoredMessage): ChatMessageView;
  imageSrc(image: ImageRef): string | undefined;
  /** The conversation shown is gone (deleted or set aside, here or in another window). */
  onGone(shown: Shown): void;
}

/**
 * The whole state for `shown` with its last `window` messages; undefined when that conversation is
 * gone (the view then shows a new chat). Refreshes `shown.meta` from the store.
 */
export async function buildSnapshot(src: SnapshotSources, shown: Shown, window: number): Promise<Snapshot | undefined> {
  // A new chat shows what it recorded before it is stored (a model switch).
  let messages: StoredMessage[] = shown.id ? [] : (shown.notices ?? []);
  let total = messages.length;
  if (shown.id) {
    const page = await src.store.open(shown.id, { limit: window }).catch((err: unknown) => {
      src.services.log.warn(`Opening conversation ${shown.id ?? ''} failed: ${String(err)}`);
      return undefined;
    });
    if (page) {
      messages = page.messages;
      total = page.total;
      shown.meta = page.meta;
    } else if (!shown.answer) {
      src.onGone(shown);
      return undefined;
    }
  }
  const models = src.models.chatModels();
  const selected = src.models.modelFor(shown.meta);
  const gone = src.models.goneModel(shown.meta);
  const settings = chatSettings();
  const override = shown.meta.protocolOverride;
  const conversations = await src.store.list().catch((err: unknown) => {
    src.services.log.warn(`Listing conversations failed: ${String(err)}`);
    return [];
  });
  return {
    conversations,
    ...(shown.id ? { conversationId: shown.id } : {}),
    key: shown.key,
    messages: messages.map((m) => src.messageView(m)),
    hasOlder: total > messages.length,
    models: models.map((m) => toModelView(m, override, settings.imageInputModels)),
    ...(selected ? { model: selected.id } : gone ? { model: gone } : {}),
    ...(gone
      ? { modelGone: { model: gone, choices: src.models.suggestions(gone), keyChanged: src.models.keyChanged } }
      : {}),
    ...(override ? { protocolOverride: override } : {}),
    enableSearch: shown.meta.enableSearch ?? false,
    thinking: shown.meta.thinking ?? settings.thinking,
    attachments: attachmentViews(src.attachments(), (image) => src.imageSrc(image)),
    busy: false,
    remoteImageHosts: allowedImageHosts(),
    imageMaxBytes: settings.imageMaxBytes,
    ...(await chatNotice(src.services, models)),
  };
}
