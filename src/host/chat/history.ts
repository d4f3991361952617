/**
 * The messages sent with a request, read from the store: at most the last `historyMessages` are
 * read, so a long conversation costs the same as a short one. No `vscode` import.
 */
import { imageSupport } from '../../core/chat/capabilities';
import type { ConversationStore } from '../../core/chat/conversationStore';
import type { StoredMessage } from '../../core/chat/store/log';
import type { ChatImage, ChatMessage } from '../../core/chat/events';
import type { ModelInfo } from '../../core/models/types';

export interface HistoryOptions {
  historyMessages: number;
  imageInputModels: string[];
}

/**
 * Where the window of sent messages starts, as a position in the conversation of `total` messages.
 * A window that dropped the oldest message with every new one would change the start of every
 * request, and an upstream's prompt cache reuses only an unchanged start (OpenAI's prompt caching
 * guide: "cache hits are only possible for exact prefix matches"). So the start moves in steps of
 * half the window: the request keeps its start for that many messages, and sends between half and
 * all of `historyMessages`.
 */
export function windowStart(total: number, historyMessages: number): number {
  if (total <= historyMessages) return 0;
  const step = Math.max(1, Math.ceil(historyMessages / 2));
  return Math.ceil((total - historyMessages) / step) * step;
}

/**
 * The non-empty messages of a conversation's window (`windowStart`), context text before the
 * question, and the images of user messages read from the image store. A model that does not take
 * images gets a note in their place (the conversation may have started on another model).
 * Notices (a model change recorded in the conversation) are the user's, never the model's.
 * Undefined when the conversation is gone.
 */
export async function buildHistory(
  store: ConversationStore,
  conversationId: string,
  model: ModelInfo,
  options: HistoryOptions,
  answering?: string,
): Promise<ChatMessage[] | undefined> {
  // The answer being asked for (`answering`, already stored as the last message) is no part of it.
  const page = await store.open(conversationId, { limit: options.historyMessages + (answering === undefined ? 0 : 1) });
  if (!page) return undefined;
  const asked = answering === undefined ? page.messages : page.messages.filter((m) => m.id !== answering);
  // Positions count every stored message (notices too), so the start depends on the log alone.
  const total = page.total - (page.messages.length - asked.length);
  const first = page.messages.length - (page.total - windowStart(total, options.historyMessages));
  return toRequestMessages(store, first > 0 ? asked.slice(first) : asked, model, options);
}

export async function toRequestMessages(
  store: Pick<ConversationStore, 'images'>,
  messages: StoredMessage[],
  model: ModelInfo,
  options: HistoryOptions,
): Promise<ChatMessage[]> {
  const takesImages = imageSupport(model, options.imageInputModels).supported;
  const out: ChatMessage[] = [];
  for (const m of messages.filter(isSent).slice(-options.historyMessages)) {
    let content = m.context ? `${m.context}\n\n${m.text}` : m.text;
    const images: ChatImage[] = [];
    const notes: string[] = [];
    for (const ref of m.images ?? []) {
      const bytes = takesImages ? await store.images.read(ref) : undefined;
      if (bytes) images.push({ mediaType: ref.mediaType, base64: bytes.toString('base64') });
      else
        notes.push(
          takesImages
            ? `[image ${ref.name} is no longer stored]`
            : `[image ${ref.name} not sent: ${model.id} does not take images]`,
        );
    }
    if (notes.length) content = [content, ...notes].filter(Boolean).join('\n');
    out.push({ role: m.role, content, ...(images.length ? { images } : {}) });
  }
  return out;
}

/** Whether a stored message goes to the model: a question or answer with something in it, never a notice. */
function isSent(m: StoredMessage): m is StoredMessage & { role: 'user' | 'assistant' } {
  return m.role !== 'notice' && Boolean(m.text.trim() || m.context || m.images?.length);
}
