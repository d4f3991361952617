/**
 * A small stand-in for the `vscode` module, installed before host code is loaded, so that the chat
 * controller runs in plain Node against the gateway double. It records what the user would have
 * seen (warnings, information) and answers modal questions from a queue the test fills.
 */
import * as l10n from '@vscode/l10n';
import Module from 'node:module';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';

export interface Shown {
  level: 'info' | 'warning' | 'error';
  message: string;
  /** The buttons the notification offered. */
  actions: string[];
}

export const ui = {
  shown: [] as Shown[],
  /** Answers for the next modal questions, in order (undefined: the user dismissed it). */
  answers: [] as Array<string | undefined>,
  /** Buttons to click on the next non-modal notifications, in order (undefined: not clicked). */
  choices: [] as Array<string | undefined>,
  /** What was written to the clipboard, in order. */
  clipboard: [] as string[],
  settings: {} as Record<string, unknown>,
  /** The default values of settings this VS Code defines (what `inspect` reports as `defaultValue`). */
  defaults: {} as Record<string, unknown>,
  /** Settings written, in order, with their target (ConfigurationTarget). */
  updates: [] as Array<{ key: string; value: unknown; target: unknown }>,
  /** The commands `getCommands` lists, and those executed (id first), in order. */
  commands: [] as string[],
  executed: [] as unknown[][],
  /** The items of each quick pick shown, and the answers for the next ones (an item's label; undefined: dismissed). */
  quickPicks: [] as Array<Array<{ label: string; description?: string; detail?: string }>>,
  pickLabels: [] as Array<string | undefined>,
  /** The options of each save dialog shown, and the files chosen in the next ones (undefined: cancelled). */
  saveDialogs: [] as Array<{ title?: string; defaultUri?: Uri; saveLabel?: string }>,
  saveTo: [] as Array<Uri | undefined>,
  /** Documents shown in an editor, and links opened outside VS Code, in order. */
  openedDocuments: [] as unknown[],
  openedExternally: [] as string[],
};

function answer(level: Shown['level']) {
  return async (message: string, ...rest: unknown[]): Promise<string | undefined> => {
    const modal = typeof rest[0] === 'object' && rest[0] !== null && (rest[0] as { modal?: boolean }).modal === true;
    ui.shown.push({ level, message, actions: rest.filter((r): r is string => typeof r === 'string') });
    return modal ? ui.answers.shift() : ui.choices.shift();
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

/** VS Code's EventEmitter, as far as host code uses it. */
class EventEmitter<T> {
  private readonly listeners = new Set<(e: T) => unknown>();
  readonly event = (listener: (e: T) => unknown) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

/** A CancellationTokenSource whose token behaves as VS Code's: listeners fire once, on cancel(). */
export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  private cancelled = false;
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

class CancellationError extends Error {
  constructor() {
    super('Canceled');
    this.name = 'Canceled';
  }
}

class LanguageModelError extends Error {
  constructor(
    message?: string,
    readonly code = 'Unknown',
  ) {
    super(message);
    this.name = 'LanguageModelError';
  }
  static NoPermissions(message?: string) {
    return new LanguageModelError(message, 'NoPermissions');
  }
  static Blocked(message?: string) {
    return new LanguageModelError(message, 'Blocked');
  }
  static NotFound(message?: string) {
    return new LanguageModelError(message, 'NotFound');
  }
}

class LanguageModelTextPart {
  constructor(readonly value: string) {}
}
class LanguageModelToolCallPart {
  constructor(
    readonly callId: string,
    readonly name: string,
    readonly input: object,
  ) {}
}
class LanguageModelToolResultPart {
  constructor(
    readonly callId: string,
    readonly content: unknown[],
  ) {}
}
class LanguageModelToolResult {
  constructor(readonly content: unknown[]) {}
}

class MarkdownString {
  value = '';
  constructor(value?: string) {
    this.value = value ?? '';
  }
  isTrusted = false;
  supportHtml = false;
  appendMarkdown(text: string): this {
    this.value += text;
    return this;
  }
  /** As VS Code escapes text: every character markdown reads as syntax gets a backslash. */
  appendText(text: string): this {
    this.value += text.replace(/[\\`*_{}[\]()#+\-!~<>|.]/g, '\\$&');
    return this;
  }
}
class ThemeColor {
  constructor(readonly id: string) {}
}

/** The window's focus: tests set `focused` and fire the change as VS Code would. */
export const windowState = { focused: true, changed: new EventEmitter<{ focused: boolean }>() };
export function setWindowFocus(focused: boolean): void {
  windowState.focused = focused;
  windowState.changed.fire({ focused });
}

/** The status bar items host code created, newest last, as the user would see them. */
export const statusItems: Array<{ text: string; tooltip?: MarkdownString | string; show(): void; dispose(): void }> =
  [];
/** The agent tools registered with `vscode.lm.registerTool`, by name. */
export const registeredTools = new Map<string, unknown>();

export const fake = {
  Uri,
  version: '1.117.0',
  EventEmitter,
  CancellationTokenSource,
  CancellationError,
  LanguageModelError,
  LanguageModelTextPart,
  LanguageModelToolCallPart,
  LanguageModelToolResult,
  LanguageModelToolResultPart,
  LanguageModelChatMessageRole: { User: 1, Assistant: 2 },
  LanguageModelChatToolMode: { Auto: 1, Required: 2 },
  MarkdownString,
  ThemeColor,
  StatusBarAlignment: { Left: 1, Right: 2 },
  lm: {
    registerTool: (name: string, tool: unknown) => {
      registeredTools.set(name, tool);
      return { dispose: () => registeredTools.delete(name) };
    },
  },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  window: {
    showInformationMessage: answer('info'),
    showWarningMessage: answer('warning'),
    showErrorMessage: answer('error'),
    setStatusBarMessage: () => none,
    showInputBox: async () => undefined,
    showQuickPick: async (items: Array<{ label: string }> | Promise<Array<{ label: string }>>) => {
      const list = await items;
      ui.quickPicks.push(list);
      const label = ui.pickLabels.shift();
      return list.find((i) => i.label === label);
    },
    withProgress: async (
      _options: unknown,
      task: (progress: { report(): void }, token: CancellationTokenSource['token']) => unknown,
    ) => task({ report: () => undefined }, new CancellationTokenSource().token),
    showOpenDialog: async () => undefined,
    showSaveDialog: async (options: (typeof ui.saveDialogs)[number]) => {
      ui.saveDialogs.push(options);
      return ui.saveTo.shift();
    },
    showTextDocument: async (document: unknown) => void ui.openedDocuments.push(document),
    activeTextEditor: undefined,
    get state() {
      return { focused: windowState.focused };
    },
    onDidChangeWindowState: windowState.changed.event,
    createStatusBarItem: () => {
      const item = {
        text: '',
        name: '',
        command: '',
        tooltip: undefined as MarkdownString | string | undefined,
        backgroundColor: undefined as ThemeColor | undefined,
        show: () => undefined,
        dispose: () => undefined,
      };
      statusItems.push(item);
      return item;
    },
  },
  workspace: {
    getConfiguration: (section?: string) => ({
      get: <T>(key: string, fallback?: T) => (ui.settings[`${section}.${key}`] as T | undefined) ?? fallback,
      inspect: (key: string) => ({
        defaultValue: ui.defaults[`${section}.${key}`],
        globalValue: ui.settings[`${section}.${key}`],
      }),
      update: async (key: string, value: unknown, target?: unknown) => {
        ui.settings[`${section}.${key}`] = value;
        ui.updates.push({ key: `${section}.${key}`, value, target });
      },
    }),
    onDidChangeConfiguration: () => none,
    workspaceFolders: undefined as Array<{ uri: Uri }> | undefined,
    getWorkspaceFolder: () => undefined,
    openTextDocument: async () => ({}),
    fs: { writeFile: async (uri: Uri, bytes: Uint8Array) => writeFile(uri.fsPath, bytes) },
  },
  commands: {
    executeCommand: async (...args: unknown[]) => void ui.executed.push(args),
    getCommands: async () => [...ui.commands],
  },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  env: {
    clipboard: { writeText: async (text: string) => void ui.clipboard.push(text) },
    openExternal: async (uri: Uri) => {
      ui.openedExternally.push(uri.toString());
      return true;
    },
    language: 'en',
  },
  // VS Code's own formatting of `{0}` and `{name}` with no bundle loaded (English), as @vscode/l10n does it.
  l10n: { t: l10n.t, bundle: undefined },
};

const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const original = loader._load;
loader._load = function (request: string, ...rest: unknown[]) {
  if (request === 'vscode') return fake;
  return original.call(this, request, ...rest);
};
