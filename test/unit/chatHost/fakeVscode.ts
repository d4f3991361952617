/**
 * A small stand-in for the `vscode` module, installed before host code is loaded, so that the chat
 * controller runs in plain Node against the gateway double. It records what the user would have
 * seen (warnings, information) and answers modal questions from a queue the test fills.
 */
import Module from 'node:module';
import * as path from 'node:path';

export interface Shown {
  level: 'info' | 'warning' | 'error';
  message: string;
}

export const ui = {
  shown: [] as Shown[],
  /** Answers for the next modal questions, in order (undefined: the user dismissed it). */
  answers: [] as Array<string | undefined>,
  settings: {} as Record<string, unknown>,
};

function answer(level: Shown['level']) {
  return async (message: string, ...rest: unknown[]): Promise<string | undefined> => {
    ui.shown.push({ level, message });
    const modal = typeof rest[0] === 'object' && rest[0] !== null && (rest[0] as { modal?: boolean }).modal === true;
    return modal ? ui.answers.shift() : undefined;
  };
}

class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  get fsPath(): string {
    return this.path;
  }
  static file(p: string): Uri {
    return new Uri('file', path.resolve(p));
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, path.posix.join(base.path, ...parts));
  }
  static parse(value: string): Uri {
    const url = new URL(value);
    return new Uri(url.protocol.slice(0, -1), decodeURIComponent(url.pathname));
  }
  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
}

const none = { dispose: () => undefined };
export const fake = {
  Uri,
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  window: {
    showInformationMessage: answer('info'),
    showWarningMessage: answer('warning'),
    showErrorMessage: answer('error'),
    setStatusBarMessage: () => none,
    showInputBox: async () => undefined,
    showQuickPick: async () => undefined,
    showOpenDialog: async () => undefined,
    activeTextEditor: undefined,
  },
  workspace: {
    getConfiguration: (section?: string) => ({
      get: <T>(key: string, fallback?: T) => (ui.settings[`${section}.${key}`] as T | undefined) ?? fallback,
      inspect: (key: string) => ({ globalValue: ui.settings[`${section}.${key}`] }),
      update: async (key: string, value: unknown) => {
        ui.settings[`${section}.${key}`] = value;
      },
    }),
    onDidChangeConfiguration: () => none,
    workspaceFolders: undefined as Array<{ uri: Uri }> | undefined,
    getWorkspaceFolder: () => undefined,
    openTextDocument: async () => ({}),
  },
  commands: { executeCommand: async () => undefined },
  env: { clipboard: { writeText: async () => undefined }, openExternal: async () => false },
};

const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const original = loader._load;
loader._load = function (request: string, ...rest: unknown[]) {
  if (request === 'vscode') return fake;
  return original.call(this, request, ...rest);
};
