/**
 * Imported first by payloadChild.ts: from then on `require('vscode')` gives an inert stand-in, so
 * host code (ChatController) runs in plain Node. Every member is a stub whose properties are stubs,
 * calls and `new` give stubs, nothing is a thenable; configuration reads give the defaults, except
 * a maxTokens large enough for the double's long answers.
 */
import * as l10n from '@vscode/l10n';
import Module from 'node:module';

/** Any property is another stub, any call or `new` gives a stub; never a thenable. */
function inert(): unknown {
  const cache = new Map<PropertyKey, unknown>();
  const target = function () {
    return undefined;
  };
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === 'then') return undefined;
      if (prop === Symbol.toPrimitive) return () => '';
      if (prop === 'dispose') return () => undefined;
      if (!cache.has(prop)) cache.set(prop, inert());
      return cache.get(prop);
    },
    apply: () => inert(),
    construct: () => inert() as object,
  });
}

const SETTINGS: Record<string, unknown> = { maxTokens: 10_000_000 };
/** A plain object (compiled `import * as vscode` copies its own keys) of inert API members. */
const API_NAMES = [
  'window',
  'commands',
  'env',
  'extensions',
  'languages',
  'Uri',
  'EventEmitter',
  'Disposable',
  'ThemeIcon',
  'ThemeColor',
  'StatusBarAlignment',
  'ProgressLocation',
  'ViewColumn',
  'ConfigurationTarget',
  'TreeItem',
  'TreeItemCollapsibleState',
  'MarkdownString',
  'Range',
  'Position',
  'Selection',
  'RelativePattern',
  'FileType',
  'l10n',
  'CancellationTokenSource',
  'TextEdit',
  'WorkspaceEdit',
  'QuickPickItemKind',
  'LogLevel',
  'version',
];
const vscodeStub: Record<string, unknown> = Object.fromEntries(API_NAMES.map((name) => [name, inert()]));
// Strings are formatted as VS Code does with no bundle loaded (English).
vscodeStub.l10n = { t: l10n.t, bundle: undefined };
vscodeStub.workspace = new Proxy(inert() as object, {
  get: (t, p) =>
    p === 'getConfiguration'
      ? () => ({ get: (key: string, fallback?: unknown) => SETTINGS[key] ?? fallback, inspect: () => undefined })
      : Reflect.get(t, p),
});

const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = loader._load;
loader._load = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? vscodeStub : load.call(this, request, ...rest);
};
