import type { ChatController } from '../chat/chatController';
import type { MediaStudio } from '../media/mediaStudio';
import type { Services } from '../services';

/** What every command may use: the shared services, the chat and the Media Studio. */
export interface CommandContext {
  services: Services;
  chat: ChatController;
  media: MediaStudio;
}

/**
 * A command takes optional arguments (from keybindings, tasks, tests or other extensions) and
 * returns a result, so it can be scripted without its UI. Every command is listed in index.ts.
 */
export interface CommandDef {
  id: string;
  run(ctx: CommandContext, ...args: unknown[]): unknown;
}
