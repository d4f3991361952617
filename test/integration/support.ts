import * as vscode from 'vscode';

export const EXTENSION_ID = 'model-gateway.model-gateway';

export async function setSetting(key: string, value: unknown, section = 'modelGateway'): Promise<void> {
  await vscode.workspace.getConfiguration(section).update(key, value, vscode.ConfigurationTarget.Global);
}

/** Runs one of our commands and returns its result, typed by the caller. */
export function run<T>(command: string, ...args: unknown[]): Promise<T> {
  return Promise.resolve(vscode.commands.executeCommand<T>(`modelGateway.${command}`, ...args));
}
