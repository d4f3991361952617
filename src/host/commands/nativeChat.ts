import { chooseUtilityModel, type UtilityChoice } from '../lm/nativeChatSetup';
import { openWalkthrough } from '../walkthrough';
import type { CommandContext, CommandDef } from './types';

/** "Set Utility Model for VS Code Chat": the quick pick of nativeChatSetup.ts, whenever the user asks. */
export const setChatUtilityModel: CommandDef = {
  id: 'modelGateway.setChatUtilityModel',
  run(ctx: CommandContext): Promise<UtilityChoice> {
    return chooseUtilityModel(ctx.services);
  },
};

/** "Get Started": the first-run walkthrough, from the palette and the Models view. */
export const openGetStarted: CommandDef = {
  id: 'modelGateway.getStarted',
  async run(ctx: CommandContext): Promise<void> {
    await openWalkthrough(ctx.services.context);
  },
};
