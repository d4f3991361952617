/**
 * `modelGateway.ask` and the other scripted questions: the view shows the question as if typed, and
 * the caller gets the finished answer.
 */
import * as vscode from 'vscode';
import type { StoredMessage } from '../../core/chat/store/log';
import { offeredProtocols } from '../../core/chat/capabilities';
import type { ThinkingChoice } from '../../core/chat/thinking';
import { GatewayError } from '../../core/errors';
import type { ChatProtocol } from '../../core/models/types';
import type { Citation, ImageRef } from '../../shared/protocol';
import type { AnswerRunner } from './answerRunner';
import type { Sent } from './sessions';
import type { AttachmentTray } from './attachmentTray';
import type { PendingAttachment } from './attachments';
import type { ModelChoice } from './modelChoice';
import type { ConversationPatch } from './modelChoice';
import type { Shown } from './sessions';

export interface AskArgs {
  prompt: string;
  model?: string;
  protocol?: ChatProtocol;
  system?: string;
  conversationId?: string;
  enableSearch?: boolean;
  /** The conversation's thinking choice from now on (see `modelGateway.chat.thinking`). */
  thinking?: ThinkingChoice;
  /** Image files (URIs or paths) to send with the prompt. */
  images?: Array<string | vscode.Uri>;
  /**
   * Send, as the user's own Send would, what the user attached to that conversation and has not sent
   * yet (images, files, parsed documents). Off unless asked: a script never takes them silently.
   */
  withAttachments?: boolean;
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

/** What a scripted question needs from the chat controller. */
export interface AskHost {
  /** The conversation the view shows now. */
  readonly shown: Shown;
  readonly tray: AttachmentTray;
  readonly models: Pick<ModelChoice, 'modelFor'>;
  ensureLoaded(): Promise<void>;
  switchTo(id: string): Promise<Shown>;
  selectModel(id: string, target: Shown): Promise<void>;
  updateConversation(patch: ConversationPatch, quiet: boolean, target: Shown): Promise<void>;
}

/**
 * Runs a scripted question. Its conversation is fixed once (the one it names, else the one shown
 * when it starts) and every step acts on that one, whatever the view shows meanwhile; its images
 * go with it alone, and what the user attached in the view stays for the user's next message.
 */
export async function runAsk(host: AskHost, answers: AnswerRunner, args: AskArgs): Promise<AskResult> {
  await host.ensureLoaded();
  const target = args.conversationId ? await host.switchTo(args.conversationId) : host.shown;
  if (args.model) await host.selectModel(args.model, target);
  const own: PendingAttachment[] = [];
  if (args.images?.length)
    await host.tray.attachImages(args.images.map(toUri), { switchModel: !args.model, into: own }, target);
  if (args.protocol) {
    const protocol = args.protocol;
    const model = host.models.modelFor(target.meta);
    if (model && !offeredProtocols(model).includes(protocol)) {
      throw new GatewayError(
        'badRequest',
        vscode.l10n.t(
          '{0} does not speak the {1} protocol; it speaks {2}.',
          model.id,
          protocol,
          offeredProtocols(model).join(', '),
        ),
      );
    }
    await host.updateConversation({ protocolOverride: protocol }, true, target);
  }
  if (args.enableSearch !== undefined) await host.updateConversation({ enableSearch: args.enableSearch }, true, target);
  if (args.thinking !== undefined) await host.updateConversation({ thinking: args.thinking }, true, target);
  const waiting = args.withAttachments ? host.tray.itemsFor(target) : [];
  const sent: Sent | undefined = await answers.send(
    args.prompt,
    { system: args.system, attachments: [...waiting, ...own], onAccepted: () => host.tray.drop(target, waiting) },
    target,
  );
  if (!sent?.answer)
    throw new GatewayError(
      'badRequest',
      vscode.l10n.t('Nothing was sent: the prompt was empty or no chat model is available.'),
    );
  const answer = sent.answer;
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
    images: sent.question.images ?? [],
    conversationId: sent.conversationId,
  };
}

/** A file URI from a vscode.Uri, a URI string (`file:///…`) or a plain path (Windows drive paths included). */
export function toUri(value: string | vscode.Uri): vscode.Uri {
  if (value instanceof vscode.Uri) return value;
  return /^[a-z][a-z0-9+.-]+:/i.test(value) && !/^[a-z]:[\\/]/i.test(value)
    ? vscode.Uri.parse(value, true)
    : vscode.Uri.file(value);
}
