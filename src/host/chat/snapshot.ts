/**
 * Pieces of the view's whole state (the snapshot): models, the notice, pending attachments. The
 * controller adds the conversation's window of messages, with the streaming answer taken from its
 * session (the store has its text only up to the last checkpoint).
 */
import { effectiveProtocol, imageSupport, isSearchable as searchableOver, isThirdProvider, searchProtocols } from '../../core/chat/capabilities';
import type { ChatProtocol, ModelInfo } from '../../core/models/types';
import type { ChatModelView, ImageRef, Snapshot } from '../../shared/protocol';
import type { Services } from '../services';
import type { PendingAttachment } from './attachments';

/** How many messages a snapshot carries; "Load older" adds as many again. */
export const SNAPSHOT_WINDOW = 200;

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

/** Why chat cannot be used right now (no address, no key, no models…), with the action that fixes it. */
export async function chatNotice(services: Services, chatModels: readonly ModelInfo[]): Promise<Pick<Snapshot, 'notice'>> {
  if (!services.settings().baseUrl.trim()) return { notice: { message: 'Set the gateway base address to start chatting.', action: 'openSettings' } };
  if (!(await services.keys.has())) return { notice: { message: 'Set your API key to start chatting.', action: 'setKey' } };
  const snap = services.registry.snapshot;
  if (snap.updatedAt === 0) return { notice: { message: 'Loading the models this key may use…' } };
  if (snap.keyError) return { notice: { message: snap.keyError.message, action: snap.keyError.kind === 'auth' ? 'setKey' : 'refreshModels' } };
  if (chatModels.length === 0) return { notice: { message: 'This key has no chat models.', action: 'refreshModels' } };
  return {};
}

/** The chips of what goes with the next message; images get the address the view loads them from. */
export function attachmentViews(items: readonly PendingAttachment[], imageSrc: (image: ImageRef) => string | undefined): Snapshot['attachments'] {
  return items.map(({ id, label, chars, truncated, image }) => {
    const src = image ? imageSrc(image) : undefined;
    return { id, label, chars, truncated, ...(image ? { image: src ? { ...image, src } : image } : {}) };
  });
}
