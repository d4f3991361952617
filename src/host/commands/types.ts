import type { ChatController } from '../chat/chatController';
import type { CompletionService } from '../completion/service';
import type { CompletionSwitch } from '../completion/switch';
import type { MediaStudio } from '../media/mediaStudio';
import type { Services } from '../services';
import type { GatewayStatusBar } from '../statusBar';
import type { ModelsView } from '../views/modelsView';

/** What every command may use: the shared services, the chat, the Media Studio and the status bar and Models view. */
export interface CommandContext {
  services: Services;
  chat: ChatController;
  media: MediaStudio;
  statusBar: GatewayStatusBar;
  models: ModelsView;
  /** Inline completion: its switch (settings, snooze, status item) and the provider. */
  completions: CompletionSwitch;
  completion: CompletionService;
}

/**
 * A command takes optional arguments (from keybindings, tasks, tests or other extensions) and
 * returns a result, so it can be scripted without its UI. Every command is listed in index.ts.
 */
export interface CommandDef {
  id: string;
  run(ctx: CommandContext, ...args: unknown[]): unknown;
}
