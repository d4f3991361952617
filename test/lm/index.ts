/** Loaded by the VS Code extension host: runs the VS Code chat provider suite (see test/vscode/mochaInHost.ts). */
import { runMochaIn } from '../vscode/mochaInHost';

export const run = (): Promise<void> => runMochaIn(__dirname, 'VS Code chat provider');
