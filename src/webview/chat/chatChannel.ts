/**
 * The webview's only channel to the host: typed `post` of protocol intents, and VS Code's
 * per-webview state for UI-local things (draft, scroll position, opened reasoning). Conversation
 * content is never stored here; it always comes from the host.
 */
import type { WebviewMessage } from '../../shared/protocol';
import { WebviewChannel } from '../shared/channel';

export interface UiState {
  draft: string;
  /**
   * Messages sent whose question the host has not yet said it stored (by send id): put back into
   * the message box if it refuses them, or if the page reloads before it answers and the
   * conversation does not hold them.
   */
  pending: Array<{ id: string; text: string }>;
  /** The conversation the scroll position belongs to. */
  conversationId?: string;
  scrollTop?: number;
  /** How many of the last messages were rendered when `scrollTop` was saved (older ones render lazily). */
  rendered?: number;
  /** Follow new content (the user was at the bottom). */
  stickToBottom: boolean;
  /** Reasoning sections the user opened (true) or closed (false), by message id. */
  reasoning: Record<string, boolean>;
}

const MAX_REASONING_ENTRIES = 200;

/** The intents about a conversation, without the conversation (the channel adds it). */
type Intent = Extract<WebviewMessage, { conversationId: string }>;
export type IntentBody = Intent extends infer T ? (T extends unknown ? Omit<T, 'conversationId'> : never) : never;

/** The chat's channel; its UI state is the draft, the scroll position and the open reasoning sections. */
export class ChatChannel extends WebviewChannel<WebviewMessage, UiState> {
  /** The conversation shown, as the host named it in its last snapshot (`key`). */
  conversation: string | undefined;

  /** Posts an intent about the conversation shown, naming it; nothing before the first snapshot. */
  intent(body: IntentBody): void {
    if (this.conversation === undefined) return;
    // The union is rebuilt member by member; the spread keeps each member's own fields.
    this.post({ ...body, conversationId: this.conversation } as Intent);
  }

  constructor() {
    super(readUiState, 250, (ui) => {
      const keys = Object.keys(ui.reasoning);
      for (const key of keys.slice(0, Math.max(0, keys.length - MAX_REASONING_ENTRIES))) delete ui.reasoning[key];
    });
  }
}

function readUiState(saved: unknown): UiState {
  const state: UiState = { draft: '', pending: [], stickToBottom: true, reasoning: {} };
  if (typeof saved !== 'object' || saved === null) return state;
  const s = saved as Record<string, unknown>;
  if (typeof s.draft === 'string') state.draft = s.draft;
  if (Array.isArray(s.pending)) {
    for (const p of s.pending as unknown[]) {
      const entry = p as { id?: unknown; text?: unknown } | null;
      if (typeof entry?.id === 'string' && typeof entry.text === 'string')
        state.pending.push({ id: entry.id, text: entry.text });
    }
  }
  if (typeof s.conversationId === 'string') state.conversationId = s.conversationId;
  if (typeof s.scrollTop === 'number') state.scrollTop = s.scrollTop;
  if (typeof s.rendered === 'number' && Number.isInteger(s.rendered) && s.rendered >= 0) state.rendered = s.rendered;
  if (typeof s.stickToBottom === 'boolean') state.stickToBottom = s.stickToBottom;
  if (typeof s.reasoning === 'object' && s.reasoning !== null) {
    for (const [id, open] of Object.entries(s.reasoning)) if (typeof open === 'boolean') state.reasoning[id] = open;
  }
  return state;
}
