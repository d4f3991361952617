import { clearApiKey, setApiKey } from './apiKey';
import { checkConnection, openSettings, refreshCatalog, refreshModels, showLog } from './connection';
import type { CommandDef } from './types';

/** Every command, registered from this one list. */
export const COMMANDS: CommandDef[] = [setApiKey, clearApiKey, checkConnection, refreshModels, refreshCatalog, openSettings, showLog];
