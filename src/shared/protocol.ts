/**
 * Every message between the extension host and the chat webview, as zod schemas both sides import.
 * The webview only renders state and sends intents; it never sees the API key.
 *
 * State rule (as in GitLens): an update buffered for a hidden view is a full `snapshot`, never a
 * delta. Deltas (`append`) are only sent to a visible, ready view and always name the message and
 * the length it extends, so a webview that missed one asks for a snapshot instead of going wrong.
 *
 * Every post about an answer names its conversation (and message): the webview ignores posts for a
 * conversation it is not showing or a message it does not have, so an answer streaming in the
 * background never shows up in another conversation.
 */
import * as z from 'zod/mini';
import { WIRE_PROTOCOLS } from './protocolNames';
import { wordsSchema } from './words';

export const protocolSchema = z.enum(WIRE_PROTOCOLS);

/**
 * Thinking, as the user picks it: `auto` sends nothing (the model's default), `off`, `on`, or a
 * depth. Each upstream gets it in its own form (core/chat/thinking.ts).
 */
export const thinkingChoiceSchema = z.enum(['auto', 'off', 'on', 'low', 'medium', 'high']);
export type ThinkingChoiceView = z.infer<typeof thinkingChoiceSchema>;

/**
 * A failed answer's error. `message` is worded when it failed; `words` (absent in records older
 * versions wrote) is what it was worded from, so that it can be worded again in the display
 * language of the day it is shown. Words of a shape this version does not know read as absent.
 */
export const errorInfoSchema = z.object({
  kind: z.string(),
  message: z.string(),
  words: z.optional(z.catch(z.optional(wordsSchema), undefined)),
  requestId: z.optional(z.string()),
});
export type ErrorInfo = z.infer<typeof errorInfoSchema>;

export const usageSchema = z.object({
  inputTokens: z.optional(z.number()),
  outputTokens: z.optional(z.number()),
  reasoningTokens: z.optional(z.number()),
  totalTokens: z.optional(z.number()),
  /** Of the input tokens, those read from the upstream's prompt cache. */
  cachedInputTokens: z.optional(z.number()),
  /** Input tokens written to the prompt cache (Anthropic). */
  cacheWriteTokens: z.optional(z.number()),
});

/**
 * `streaming`: being written now. `done`: finished normally. `stopped`: the user pressed stop.
 * `cut`: ended by an error, a timeout or a reload; the text that arrived is kept.
 * `unknown`: a status a newer version stored that this one does not know (the store keeps the
 * stored value on disk and never writes `unknown` back).
 */
export const messageStatusSchema = z.enum(['streaming', 'done', 'stopped', 'cut', 'unknown']);

/** The image formats every chat protocol accepts; the type is read from the bytes. */
export const imageMediaTypeSchema = z.enum(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * An image sent with a user message. The bytes are stored once by the host, named by `id` (their
 * SHA-256); conversations only hold this reference.
 */
export const imageRefSchema = z.object({
  id: z.string(),
  name: z.string(),
  mediaType: imageMediaTypeSchema,
  bytes: z.number(),
  width: z.optional(z.number()),
  height: z.optional(z.number()),
  /** Where the webview loads the picture from (the stored file as a webview URI); never saved. */
  src: z.optional(z.string()),
});
export type ImageRef = z.infer<typeof imageRefSchema>;

/** A source the answer came with (a URL citation of a web search), shown as a numbered link. */
export const citationSchema = z.object({ url: z.string(), title: z.optional(z.string()) });
export type Citation = z.infer<typeof citationSchema>;

/**
 * Why a conversation's model changed without the user picking it there: `imageNeedsVision` (Ask
 * About This Image moved to a model that takes images), `keyChanged` / `modelGone` (the key can no
 * longer use the model, after a key change or a refresh of its list, and the user picked the one to
 * continue with).
 */
export const modelChangeReasonSchema = z.enum(['keyChanged', 'modelGone', 'imageNeedsVision']);
export type ModelChangeReason = z.infer<typeof modelChangeReasonSchema>;

/**
 * What a `notice` message records. A reason a newer version wrote reads as unset (the line then
 * just says that the model changed), not as damage.
 */
export const messageNoticeSchema = z.object({
  kind: z.literal('modelChange'),
  from: z.optional(z.string()),
  to: z.string(),
  reason: z.optional(z.catch(z.optional(modelChangeReasonSchema), undefined)),
});
export type MessageNotice = z.infer<typeof messageNoticeSchema>;

export const chatMessageSchema = z.object({
  id: z.string(),
  /**
   * `notice`: a line the conversation shows about itself (its model changed); never sent to a
   * model as history. Its words are made from `notice` when shown, in the language of the view.
   */
  role: z.enum(['user', 'assistant', 'notice']),
  text: z.string(),
  reasoning: z.optional(z.string()),
  status: messageStatusSchema,
  model: z.optional(z.string()),
  protocol: z.optional(protocolSchema),
  usage: z.optional(usageSchema),
  error: z.optional(errorInfoSchema),
  /**
   * Why the model ended the answer, as the protocol said it (`length`: cut at the max tokens
   * limit, which the view says and offers Continue for). Absent on logs written before it was kept.
   */
  finishReason: z.optional(z.enum(['stop', 'length', 'toolCalls', 'contentFilter', 'other'])),
  /** Context attached to a user message, shown as chips (name and how much text was cut). */
  attachments: z.optional(z.array(z.object({ label: z.string(), chars: z.number(), truncated: z.boolean() }))),
  /** Images sent with a user message. */
  images: z.optional(z.array(imageRefSchema)),
  /** Sources of an answer that searched the web, in the order they were first cited. */
  citations: z.optional(z.array(citationSchema)),
  /** What the model searched the web for, when it says so. */
  searches: z.optional(z.array(z.string())),
  /** Set on a `notice` message: what it says. */
  notice: z.optional(messageNoticeSchema),
  createdAt: z.number(),
});
export type ChatMessageView = z.infer<typeof chatMessageSchema>;

export const conversationSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  updatedAt: z.number(),
  messageCount: z.number(),
});
export type ConversationSummary = z.infer<typeof conversationSummarySchema>;

export const chatModelSchema = z.object({
  id: z.string(),
  provider: z.string(),
  protocols: z.array(protocolSchema),
  /**
   * Whether the web-search switch applies over the protocol this conversation would use with the
   * model (Chat Completions: third-provider models; Responses: every model).
   */
  searchable: z.boolean(),
  /** Every protocol over which the model can search. */
  searchProtocols: z.optional(z.array(protocolSchema)),
  /**
   * The thinking control over the protocol in use: the choices it honours (`auto` first), or
   * `always` for a model that always thinks. Absent: no control (the model does not think, or its
   * switch is not known).
   */
  thinking: z.optional(z.object({ always: z.optional(z.boolean()), choices: z.array(thinkingChoiceSchema) })),
  /** Whether images can be attached for this model, and why (or why not). */
  imageInput: z.optional(z.boolean()),
  imageNote: z.optional(z.string()),
});
export type ChatModelView = z.infer<typeof chatModelSchema>;

export const pendingAttachmentSchema = z.object({
  id: z.string(),
  label: z.string(),
  chars: z.number(),
  truncated: z.boolean(),
  /** Set for an image waiting to go with the next message. */
  image: z.optional(imageRefSchema),
});

export const snapshotSchema = z.object({
  conversations: z.array(conversationSummarySchema),
  conversationId: z.optional(z.string()),
  /**
   * The conversation shown as the view names it in every intent: the id of a stored one, else the
   * key of a new chat not stored yet (the host knows it by that key after its first send too).
   */
  key: z.string(),
  messages: z.array(chatMessageSchema),
  /** Older messages exist that were not sent; the view offers to load them. */
  hasOlder: z.boolean(),
  models: z.array(chatModelSchema),
  model: z.optional(z.string()),
  /** The user's per-conversation choice; absent = the model's first protocol. */
  protocolOverride: z.optional(protocolSchema),
  enableSearch: z.boolean(),
  /** The conversation's thinking choice (a new one starts from the setting `modelGateway.chat.thinking`). */
  thinking: z.optional(thinkingChoiceSchema),
  attachments: z.array(pendingAttachmentSchema),
  /** Whether an answer is being written in the conversation shown. */
  busy: z.boolean(),
  /** Hosts the user allowed remote images from (setting `modelGateway.chat.remoteImageHosts`). */
  remoteImageHosts: z.array(z.string()),
  /** Largest image the host accepts (bytes), so the view can refuse a bigger one before posting it. */
  imageMaxBytes: z.optional(z.number()),
  /**
   * The conversation's own model, which the key can no longer use (the key changed or the model
   * left its list): Send waits until the user picks the model to continue with. `choices` are the
   * models suggested first (the view also offers any other); `keyChanged` when the key changed in
   * this session.
   */
  modelGone: z.optional(z.object({ model: z.string(), choices: z.array(z.string()), keyChanged: z.boolean() })),
  /** Why chat cannot be used right now (no key, no base address…), with the action that fixes it. */
  notice: z.optional(
    z.object({ message: z.string(), action: z.optional(z.enum(['setKey', 'openSettings', 'refreshModels'])) }),
  ),
});
export type Snapshot = z.infer<typeof snapshotSchema>;

/** Host → webview. */
export const hostMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('snapshot'), state: snapshotSchema }),
  z.object({
    type: z.literal('append'),
    conversationId: z.string(),
    messageId: z.string(),
    /** Lengths the deltas extend; a mismatch means a delta was missed and a snapshot is needed. */
    textFrom: z.number(),
    text: z.string(),
    reasoningFrom: z.number(),
    reasoning: z.string(),
  }),
  z.object({ type: z.literal('message'), conversationId: z.string(), message: chatMessageSchema }),
  z.object({ type: z.literal('busy'), conversationId: z.string(), busy: z.boolean() }),
  z.object({ type: z.literal('focusInput') }),
  /**
   * What became of a `send`: `accepted` once its question is stored (the view may forget the
   * text), else refused (the view puts the text back into the message box).
   */
  z.object({ type: z.literal('sendResult'), sendId: z.string(), accepted: z.boolean() }),
  /** An Edit & Resend that was not stored (refused, or its write failed): its text goes back into the message box. */
  z.object({ type: z.literal('putBack'), conversationId: z.string(), text: z.string() }),
  /** The answer's request waits in its key's queue for a free slot (the gateway's concurrency limit). */
  z.object({ type: z.literal('queued'), conversationId: z.string(), messageId: z.string() }),
  /**
   * An answer's remote image the view asked for (`loadRemoteImage`), fetched by the host: `dataUrl`
   * when it was, `refused` with the reason (completing "not shown: …") when not, neither when the
   * fetch was cancelled (the view asks again if it still shows the image). `conversationId`: the
   * conversation that asked last (any conversation showing the image may use it).
   */
  z.object({
    type: z.literal('remoteImage'),
    conversationId: z.string(),
    url: z.string(),
    dataUrl: z.optional(z.string().check(z.regex(/^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]*=*$/))),
    refused: z.optional(z.string()),
  }),
]);
export type HostMessage = z.infer<typeof hostMessageSchema>;

/**
 * Webview → host. Every intent about a conversation names it (`conversationId`: the snapshot's
 * `key`), and the host acts on that conversation whatever it shows by the time the intent arrives.
 */
const target = { conversationId: z.string() };
/** The settings the chat view's text links to. */
export const VIEW_SETTINGS = ['modelGateway.chat.maxTokens'] as const;

export const webviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('needSnapshot') }),
  /** `sendId`: the view's name for this send, which the host's `sendResult` answers. */
  z.object({ type: z.literal('send'), ...target, text: z.string(), sendId: z.string() }),
  z.object({ type: z.literal('stop'), ...target }),
  /** Regenerate or Retry: the answer it refers to (only the last message may be). */
  z.object({ type: z.literal('regenerate'), ...target, messageId: z.string() }),
  /** Continue an answer cut at the max tokens limit (`messageId`, which must still be the last message): the new text is appended to it. */
  z.object({ type: z.literal('continue'), ...target, messageId: z.string() }),
  /** Edit and resend the last user message (`messageId`, which must still be the last question). */
  z.object({ type: z.literal('editLast'), ...target, text: z.string(), messageId: z.string() }),
  z.object({ type: z.literal('selectModel'), ...target, model: z.string() }),
  z.object({ type: z.literal('setProtocol'), ...target, protocol: z.optional(protocolSchema) }),
  z.object({ type: z.literal('setSearch'), ...target, enabled: z.boolean() }),
  z.object({ type: z.literal('setThinking'), ...target, choice: thinkingChoiceSchema }),
  z.object({ type: z.literal('newConversation') }),
  z.object({ type: z.literal('switchConversation'), id: z.string() }),
  z.object({ type: z.literal('renameConversation'), id: z.string() }),
  z.object({ type: z.literal('deleteConversation'), id: z.string() }),
  z.object({ type: z.literal('exportConversation'), id: z.string() }),
  z.object({ type: z.literal('loadOlder'), ...target }),
  z.object({ type: z.literal('attach'), ...target, what: z.enum(['file', 'selection', 'image']) }),
  /** An image pasted or dropped into the view: its bytes as base64 (the host reads the format from them). */
  z.object({ type: z.literal('attachImage'), ...target, name: z.string(), data: z.string() }),
  /** Files dropped from the explorer or the OS, as URIs. */
  z.object({ type: z.literal('attachImageUris'), ...target, uris: z.array(z.string()) }),
  z.object({ type: z.literal('openImage'), ...target, id: z.string() }),
  z.object({ type: z.literal('removeAttachment'), ...target, id: z.string() }),
  z.object({ type: z.literal('copy'), text: z.string() }),
  z.object({ type: z.literal('insertCode'), code: z.string() }),
  z.object({ type: z.literal('openLink'), url: z.string() }),
  /** Opens one of the settings the view names (a link in its text), in the Settings editor. */
  z.object({ type: z.literal('openSetting'), id: z.enum(VIEW_SETTINGS) }),
  /** Asks the host whether images from this host may load; only the host asks the user and records the answer. */
  z.object({ type: z.literal('allowRemoteImageHost'), host: z.string() }),
  /** Asks the host for an answer's image from an allowed host; the page shows only what the host hands it (`remoteImage`). */
  z.object({ type: z.literal('loadRemoteImage'), ...target, url: z.string() }),
  /** `retry` and `pickModel` name their conversation; the setup actions need none. */
  z.object({
    type: z.literal('action'),
    action: z.enum(['setKey', 'openSettings', 'refreshModels', 'retry', 'pickModel']),
    messageId: z.optional(z.string()),
    conversationId: z.optional(z.string()),
  }),
]);
export type WebviewMessage = z.infer<typeof webviewMessageSchema>;
