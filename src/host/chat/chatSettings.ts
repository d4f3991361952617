import * as vscode from 'vscode';

export interface ChatSettings {
  maxTokens: number;
  contextMaxChars: number;
  historyMessages: number;
  systemPrompt: string;
}

/** Chat settings are read when a message is sent, so a change applies to the next message. */
export function chatSettings(): ChatSettings {
  const c = vscode.workspace.getConfiguration('modelGateway.chat');
  const positive = (key: string, fallback: number) => {
    const v = c.get<number>(key);
    return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
  };
  return {
    maxTokens: positive('maxTokens', 4096),
    contextMaxChars: positive('contextMaxChars', 20000),
    historyMessages: positive('historyMessages', 40),
    systemPrompt: c.get<string>('systemPrompt') ?? '',
  };
}
