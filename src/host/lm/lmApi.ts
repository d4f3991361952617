import * as vscode from 'vscode';

/** The vendor of the gateway's models in VS Code's chat (package.json `languageModelChatProviders`). */
export const VENDOR = 'modelGateway';

/**
 * The part of VS Code's Language Model Chat Provider API this extension uses. The API is stable from
 * VS Code 1.104 (microsoft/vscode PR #263415), but the extension supports 1.100 and is typed against
 * `@types/vscode` 1.100, which does not declare it. These interfaces are the subset of the stable
 * `vscode.d.ts` of 1.104 that the provider touches, and the accessors below reach the runtime
 * objects through one narrow cast each, returning `undefined` where the running VS Code lacks them.
 */

/** What VS Code shows for a model in its picker and uses to budget a request. */
export interface LanguageModelChatInformation {
  readonly id: string;
  readonly name: string;
  readonly family: string;
  readonly version: string;
  readonly tooltip?: string;
  readonly detail?: string;
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
  readonly capabilities: {
    readonly imageInput?: boolean;
    /** `true`, or the most tools the model accepts in one request. */
    readonly toolCalling?: boolean | number;
  };
}

/** A binary or typed part (an image, JSON, a usage report…) of a message or a response. */
export interface LanguageModelDataPartLike {
  readonly mimeType: string;
  readonly data: Uint8Array;
}

/** A message as the provider receives it; `content` may hold parts of kinds this code does not know. */
export interface LanguageModelChatRequestMessage {
  readonly role: vscode.LanguageModelChatMessageRole;
  readonly content: ReadonlyArray<unknown>;
  readonly name: string | undefined;
}

export interface ProvideLanguageModelChatResponseOptions {
  readonly modelOptions?: { readonly [name: string]: unknown };
  readonly tools?: readonly vscode.LanguageModelChatTool[];
  readonly toolMode: vscode.LanguageModelChatToolMode;
}

export type LanguageModelResponsePart =
  vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart | LanguageModelDataPartLike;

export interface LanguageModelChatProvider<T extends LanguageModelChatInformation = LanguageModelChatInformation> {
  readonly onDidChangeLanguageModelChatInformation?: vscode.Event<void>;
  provideLanguageModelChatInformation(
    options: { readonly silent: boolean },
    token: vscode.CancellationToken,
  ): vscode.ProviderResult<T[]>;
  provideLanguageModelChatResponse(
    model: T,
    messages: readonly LanguageModelChatRequestMessage[],
    options: ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<LanguageModelResponsePart>,
    token: vscode.CancellationToken,
  ): Thenable<void>;
  provideTokenCount(
    model: T,
    text: string | LanguageModelChatRequestMessage,
    token: vscode.CancellationToken,
  ): Thenable<number>;
}

interface LmProviderNamespace {
  registerLanguageModelChatProvider?: (vendor: string, provider: LanguageModelChatProvider) => vscode.Disposable;
}

interface DataPartConstructor {
  new (data: Uint8Array, mimeType: string): LanguageModelDataPartLike;
}

/**
 * `vscode.lm.registerLanguageModelChatProvider` where the running VS Code has it (1.104 and newer),
 * else `undefined`. The cast is the one place the 1.104 API is reached from 1.100 typings.
 */
export function providerRegistration():
  ((vendor: string, provider: LanguageModelChatProvider) => vscode.Disposable) | undefined {
  const lm = vscode.lm as unknown as LmProviderNamespace;
  const register = lm.registerLanguageModelChatProvider;
  return typeof register === 'function' ? register.bind(vscode.lm) : undefined;
}

/** `vscode.LanguageModelDataPart` (stable from 1.104), or `undefined` on older VS Code. */
export function dataPartClass(): DataPartConstructor | undefined {
  const ctor = (vscode as unknown as { LanguageModelDataPart?: unknown }).LanguageModelDataPart;
  return typeof ctor === 'function' ? (ctor as DataPartConstructor) : undefined;
}

/** Whether a content part is a data part: checked by shape, because the class may not exist here. */
export function isDataPart(part: unknown): part is LanguageModelDataPartLike {
  const DataPart = dataPartClass();
  if (DataPart && part instanceof DataPart) return true;
  return (
    typeof part === 'object' &&
    part !== null &&
    typeof (part as { mimeType?: unknown }).mimeType === 'string' &&
    (part as { data?: unknown }).data instanceof Uint8Array
  );
}

/**
 * A `usage` data part lets VS Code 1.120+ show the provider's token figures in its context indicator
 * (microsoft/vscode PR #315394). Older versions would hand an unknown part to the caller as if it
 * were content, so it is only reported from 1.120 on.
 */
export function supportsUsagePart(version = vscode.version): boolean {
  const [major = 0, minor = 0] = version.split('.').map((n) => Number.parseInt(n, 10));
  return major > 1 || (major === 1 && minor >= 120);
}
