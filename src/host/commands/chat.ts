import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { protocolSchema } from '../../shared/protocol';
import { parseWith } from '../../core/validate';
import type { ChatController } from '../chat/chatController';
import { showError } from '../notify';
import type { Services } from '../services';
import type { CommandDef } from './types';

const askArgs = z.object({
  prompt: z.string(),
  model: z.optional(z.string()),
  protocol: z.optional(protocolSchema),
  system: z.optional(z.string()),
  conversationId: z.optional(z.string()),
  enableSearch: z.optional(z.boolean()),
});

/** Chat commands need the controller, which is created with the chat view's services. */
export function chatCommands(chat: () => ChatController): CommandDef[] {
  return [
    {
      id: 'modelGateway.ask',
      async run(services: Services, arg: unknown) {
        const given = arg === undefined ? await promptFor() : parseWith(askArgs, arg, 'The argument of "Ask"');
        if (!given) return undefined;
        try {
          return await chat().ask(given);
        } catch (err) {
          showError(err, services.log);
          throw err;
        }
      },
    },
    {
      id: 'modelGateway.newChat',
      async run() {
        await vscode.commands.executeCommand('modelGateway.chat.focus');
        await chat().newConversation();
        return { conversationId: chat().currentConversationId };
      },
    },
    {
      id: 'modelGateway.exportChat',
      async run(_services: Services, arg: unknown) {
        const id = parseWith(z.optional(z.object({ conversationId: z.optional(z.string()) })), arg, 'The argument of "Export Chat"')?.conversationId;
        const doc = await chat().exportMarkdown(id);
        return doc ? { uri: doc.uri.toString(), markdown: doc.getText() } : undefined;
      },
    },
    {
      id: 'modelGateway.addSelectionToChat',
      async run() {
        await vscode.commands.executeCommand('modelGateway.chat.focus');
        await chat().handle({ type: 'attach', what: 'selection' });
      },
    },
    {
      id: 'modelGateway.addFileToChat',
      async run() {
        await vscode.commands.executeCommand('modelGateway.chat.focus');
        await chat().handle({ type: 'attach', what: 'file' });
      },
    },
    {
      id: 'modelGateway.stopChat',
      run() {
        chat().stop();
      },
    },
  ];
}

async function promptFor(): Promise<{ prompt: string } | undefined> {
  const prompt = await vscode.window.showInputBox({ title: 'Model Gateway: Ask', prompt: 'The message to send in the chat view' });
  if (!prompt) return undefined;
  await vscode.commands.executeCommand('modelGateway.chat.focus');
  return { prompt };
}
