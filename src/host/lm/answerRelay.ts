import * as vscode from 'vscode';
import type { ChatEvent, ChatReasoning, Usage } from '../../core/chat/events';
import type { LanguageModelResponsePart } from './lmApi';

/** What the answer left for after it: its usage, and the reasoning behind its tool calls. */
export interface RelayedAnswer {
  usage?: Usage;
  reasoning: ChatReasoning;
  callIds: string[];
}

/** Passes the answer's text and tool calls on to VS Code's chat as they arrive; ends with the first error. */
export async function relayAnswer(
  events: AsyncIterable<ChatEvent[]>,
  progress: vscode.Progress<LanguageModelResponsePart>,
  token: vscode.CancellationToken,
): Promise<RelayedAnswer> {
  const answer: RelayedAnswer = { reasoning: { text: '' }, callIds: [] };
  for await (const batch of events) {
    for (const e of batch) {
      switch (e.type) {
        case 'textDelta':
          if (e.text) progress.report(new vscode.LanguageModelTextPart(e.text));
          break;
        case 'toolCall':
          answer.callIds.push(e.id);
          progress.report(new vscode.LanguageModelToolCallPart(e.id, e.name, e.input));
          break;
        case 'reasoningDelta':
          answer.reasoning.text += e.text;
          break;
        case 'reasoningSignature':
          // One signature per thinking block, the whole of it; the last block's is the one kept (as collectChat does).
          answer.reasoning.signature = e.signature;
          break;
        case 'usage':
          answer.usage = e.usage;
          break;
        case 'error':
          if (e.error.kind === 'cancelled' || token.isCancellationRequested) throw new vscode.CancellationError();
          throw e.error;
        default:
          // Citations and images have no stable part in VS Code's chat API yet; reasoning is
          // only kept (by the provider), since thinking parts are still proposed API.
          break;
      }
    }
  }
  return answer;
}
