import type { Services } from '../services';

/**
 * A command takes optional arguments (from keybindings, tasks, tests or other extensions) and
 * returns a result, so it can be scripted without its UI.
 */
export interface CommandDef {
  id: string;
  run(services: Services, ...args: unknown[]): unknown;
}
