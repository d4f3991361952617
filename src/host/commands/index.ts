import { clearApiKey, setApiKey } from './apiKey';
import { chatCommands } from './chat';
import { completionCommands } from './completion';
import { conversationCommands } from './conversations';
import {
  checkConnection,
  openSettings,
  refreshCatalog,
  refreshModels,
  resetProtocolRefusals,
  showLog,
} from './connection';
import { keyCommands } from './keys';
import { mediaCommands } from './media';
import { openGetStarted, setChatUtilityModel } from './nativeChat';
import { chatWithModel, generateWithModel } from './modelActions';
import { refreshQuota } from './quota';
import { toolCommands } from './tools';
import type { CommandDef } from './types';

/**
 * Every command of the extension, registered from this one list (their titles are in package.json).
 * Each takes the command context (services, chat, Media Studio) and optional arguments, and
 * returns a result, so every command can also be scripted.
 */
export const COMMANDS: readonly CommandDef[] = [
  // The key and the connection
  setApiKey,
  clearApiKey,
  ...keyCommands,
  checkConnection,
  refreshModels,
  refreshCatalog,
  resetProtocolRefusals,
  refreshQuota,
  chatWithModel,
  generateWithModel,
  openSettings,
  showLog,
  // VS Code's own chat
  setChatUtilityModel,
  openGetStarted,
  // The sidebar chat
  ...chatCommands,
  ...conversationCommands,
  // Documents and the web
  ...toolCommands,
  // Images and video
  ...mediaCommands,
  // Inline code completion
  ...completionCommands,
];
