import { chooseUtilityModel, type UtilityChoice } from '../lm/nativeChatSetup';
import type { CommandContext, CommandDef } from './types';

/** "Set Utility Model for VS Code Chat": the quick pick of nativeChatSetup.ts, whenever the user asks. */
export const setChatUtilityModel: CommandDef = {
  id: 'modelGateway.setChatUtilityModel',
  run(ctx: CommandContext): Promise<UtilityChoice> {
    return chooseUtilityModel(ctx.services);
  },
};
