/** Loaded by the VS Code extension host: runs the integration suites (see test/vscode/mochaInHost.ts). */
import { runMochaIn } from '../vscode/mochaInHost';

export const run = (): Promise<void> => runMochaIn(__dirname, 'integration');
