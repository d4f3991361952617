import * as vscode from 'vscode';
import type { ChatImage, ChatMessage, ChatReasoning, ChatToolCall, ChatToolResult } from '../../core/chat/events';
import { checkImage, MAX_IMAGES_PER_MESSAGE } from '../../core/chat/images';
import { GatewayError } from '../../core/errors';
import type { ChatProtocol } from '../../core/models/types';
import { isDataPart, type LanguageModelChatRequestMessage } from './lmApi';
import { estimateTokens } from '../../core/chat/tokenEstimate';
import { imageTokens } from './tokenCount';
import { words } from '../../shared/words';

/** The messages of a VS Code chat request in the core's form, with the system text taken apart. */
export interface ConvertedRequest {
  system: string;
  messages: ChatMessage[];
}

/**
 * VS Code's internal chat sends its instructions with a System role (3) that is still proposed API
 * (`vscode.proposed.languageModelSystem`); stable code only names User (1) and Assistant (2).
 */
const SYSTEM_ROLE = 3;

/** Data parts carrying text (`LanguageModelDataPart.text` / `.json` use text/plain and text/x-json). */
const TEXT_MIME = /^(text\/|application\/(json|xml)\b)/;

/**
 * Told of a part this code does not carry (a newer part kind, a data part of another type), with
 * a short name for its kind; the caller logs each kind once.
 */
export type UnknownPartSink = (kind: string) => void;

/** A name for a part's kind that survives a minified VS Code: its class name and its fields. */
export function partKind(part: unknown, where: string): string {
  if (isDataPart(part)) return `${where}: data part of type ${part.mimeType}`;
  if (typeof part !== 'object' || part === null) return `${where}: ${typeof part}`;
  const name = (part as { constructor?: { name?: unknown } }).constructor?.name;
  return `${where}: ${typeof name === 'string' && name ? name : 'object'} {${Object.keys(part).sort().join(', ')}}`;
}

/**
 * Turns VS Code's messages into the core's: text parts are joined, image data parts become the
 * message's images (sent in each protocol's own form by the core), textual data parts become text,
 * tool calls of assistant turns and tool results of user turns become the core's `toolCalls` and
 * `toolResults`, and consecutive messages of one role are merged (the Messages protocol requires
 * turns to alternate). Other parts (e.g. the cache hints some callers add as data parts, or part
 * kinds newer than this code) are left out and reported to `unknown`. `reasoningOf` gives back the reasoning a tool-call turn produced (VS Code
 * does not keep it), which thinking models require with that turn.
 */
export function toChatMessages(
  messages: readonly LanguageModelChatRequestMessage[],
  imageMaxBytes: number,
  reasoningOf: (callId: string) => ChatReasoning | undefined = () => undefined,
  unknown: UnknownPartSink = () => undefined,
): ConvertedRequest {
  const system: string[] = [];
  const out: ChatMessage[] = [];
  const assistantRole = vscode.LanguageModelChatMessageRole.Assistant;
  for (const message of messages) {
    const parts = readParts(message, imageMaxBytes, unknown);
    const text = parts.texts.join('');
    if ((message.role as number) === SYSTEM_ROLE) {
      if (text.trim()) system.push(text);
      continue;
    }
    const role = message.role === assistantRole ? 'assistant' : 'user';
    checkParts(role, parts);
    // Merged into the turn in place (each call linear in what it adds): a long agent session sends
    // hundreds of messages with every request.
    const last = out.at(-1);
    const turn: ChatMessage = last && last.role === role ? last : { role, content: '' };
    if (turn !== last) out.push(turn);
    if (text) turn.content = turn.content ? `${turn.content}\n\n${text}` : text;
    if (parts.images.length) (turn.images ??= []).push(...parts.images);
    if (parts.toolCalls.length) {
      (turn.toolCalls ??= []).push(...parts.toolCalls);
      const reasoning = parts.toolCalls.map((c) => reasoningOf(c.id)).find((r) => r !== undefined);
      if (reasoning && !turn.reasoning) turn.reasoning = reasoning;
    }
    if (parts.toolResults.length) (turn.toolResults ??= []).push(...parts.toolResults);
  }
  for (const m of out) {
    if ((m.images?.length ?? 0) > MAX_IMAGES_PER_MESSAGE) {
      throw new GatewayError(
        'badRequest',
        words(
          'A message holds {0} images; at most {1} go with one message.',
          m.images?.length ?? 0,
          MAX_IMAGES_PER_MESSAGE,
        ),
      );
    }
  }
  return { system: system.join('\n\n'), messages: out };
}

/** What one of VS Code's messages holds, by kind. */
interface MessageParts {
  texts: string[];
  images: ChatImage[];
  toolCalls: ChatToolCall[];
  toolResults: ChatToolResult[];
}

/** The parts of one message sorted by kind; a part this code does not carry is reported to `unknown`. */
function readParts(
  message: LanguageModelChatRequestMessage,
  imageMaxBytes: number,
  unknown: UnknownPartSink,
): MessageParts {
  // Read once: every access to the `vscode` module goes through its bundle's getter, and a long
  // agent session sends hundreds of parts with every request.
  const { LanguageModelTextPart, LanguageModelToolResultPart, LanguageModelToolCallPart } = vscode;
  const parts: MessageParts = { texts: [], images: [], toolCalls: [], toolResults: [] };
  for (const part of message.content) {
    if (part instanceof LanguageModelTextPart) parts.texts.push(part.value);
    else if (part instanceof LanguageModelToolResultPart)
      parts.toolResults.push({ callId: part.callId, content: toolResultText(part, unknown) });
    else if (part instanceof LanguageModelToolCallPart)
      parts.toolCalls.push({ id: part.callId, name: part.name, input: asInput(part.input) });
    else if (isDataPart(part) && part.mimeType.startsWith('image/')) {
      const info = checkImage(
        part.data,
        vscode.l10n.t('Image {0} of the message', parts.images.length + 1),
        imageMaxBytes,
      );
      parts.images.push({ mediaType: info.mediaType, base64: Buffer.from(part.data).toString('base64') });
    } else if (isDataPart(part) && TEXT_MIME.test(part.mimeType)) {
      parts.texts.push(new TextDecoder().decode(part.data));
    } else {
      unknown(partKind(part, 'message'));
    }
  }
  return parts;
}

/** Images and tool results belong to the user's turns, tool calls to the answers: anything else is refused. */
function checkParts(role: 'user' | 'assistant', parts: MessageParts): void {
  if (role === 'assistant' && parts.images.length) {
    throw new GatewayError(
      'badRequest',
      words(
        "An earlier answer in this conversation holds an image; the chat protocols take images only in the user's messages.",
      ),
    );
  }
  if (role === 'user' && parts.toolCalls.length)
    throw new GatewayError(
      'badRequest',
      words('A user message of this conversation holds a tool call; only answers make tool calls.'),
    );
  if (role === 'assistant' && parts.toolResults.length)
    throw new GatewayError(
      'badRequest',
      words(
        "An answer of this conversation holds a tool result; tool results belong to the user's turn after the call.",
      ),
    );
}

/** The text of a tool result: its text parts and textual data parts (text/plain, text/*, JSON). */
function toolResultText(part: vscode.LanguageModelToolResultPart, unknown: UnknownPartSink = () => undefined): string {
  const only = part.content.length === 1 ? part.content[0] : undefined;
  // The common case, one text part, is handed on as it is: no copy of a long result.
  if (only instanceof vscode.LanguageModelTextPart) return only.value;
  return part.content
    .map((c) => {
      if (c instanceof vscode.LanguageModelTextPart) return c.value;
      if (isDataPart(c) && TEXT_MIME.test(c.mimeType)) return new TextDecoder().decode(c.data);
      unknown(partKind(c, 'tool result'));
      return '';
    })
    .join('');
}

/** A call's input as the core keeps it: an object (VS Code types it as `object`). */
function asInput(input: object): Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/** The estimate of tokenCount.ts applied to every part of a message, images as `protocol` counts them. */
export function estimateMessageTokens(message: LanguageModelChatRequestMessage, protocol: ChatProtocol): number {
  let tokens = 0;
  for (const part of message.content) {
    if (part instanceof vscode.LanguageModelTextPart) tokens += estimateTokens(part.value);
    else if (part instanceof vscode.LanguageModelToolResultPart) tokens += estimateTokens(toolResultText(part));
    else if (part instanceof vscode.LanguageModelToolCallPart)
      tokens += estimateTokens(part.name + JSON.stringify(part.input));
    else if (isDataPart(part))
      tokens += part.mimeType.startsWith('image/')
        ? imageTokens(protocol, part.data)
        : TEXT_MIME.test(part.mimeType)
          ? estimateTokens(new TextDecoder().decode(part.data))
          : 0;
  }
  return tokens;
}
