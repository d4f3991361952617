/**
 * What the host does when the relay refuses a protocol the gateway lists for a model: tell the
 * user once, log it, and remember it (per gateway and model, for a while, shared by every window) so that later requests,
 * the protocol picker and VS Code's chat use the protocol that worked.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { cacheFieldsOf, type CacheField } from '../core/chat/cacheFields';
import type { PromptCacheRequest } from '../core/chat/promptCache';
import type { GatewayError } from '../core/errors';
import type { ProtocolSwitch, RefusedProtocolStore } from '../core/models/protocolFallback';
import { RefusalMemory } from '../core/models/refusalMemory';
import { PROTOCOL_LABELS } from '../shared/protocolNames';
import type { Services } from './services';

/** Where versions before the shared file kept refusals: one window's global state. */
const LEGACY_KEY = 'models.refusedProtocols';

/**
 * The refused protocols of every window, in a file of the global storage (models/refusalMemory.ts),
 * taking over what an older version kept in the global state. `origin` is the gateway in use now.
 */
export function refusedProtocolStore(
  context: { globalState: vscode.Memento; globalStorageUri: vscode.Uri },
  origin: () => string,
  log: (line: string) => void,
): RefusedProtocolStore {
  const memory = new RefusalMemory(path.join(context.globalStorageUri.fsPath, 'refused-protocols.json'));
  let migrated: Promise<void> | undefined;
  // On first use, not at start-up: the gateway's origin is known only once the settings are read.
  const ready = () =>
    (migrated ??= (async () => {
      const legacy = context.globalState.get<unknown>(LEGACY_KEY);
      if (legacy === undefined) return;
      await memory.migrate(
        legacy,
        origin(),
        async () => void (await context.globalState.update(LEGACY_KEY, undefined)),
      );
    })().catch((err: unknown) =>
      log(`Could not move the remembered protocol refusals to their shared file: ${String(err)}`),
    ));
  return {
    load: async (at) => {
      await ready();
      return memory.load(at);
    },
    add: async (at, model, protocol) => {
      await ready();
      return memory.add(at, model, protocol);
    },
    clear: async () => {
      await ready();
      await memory.clear();
    },
  };
}

export function protocolSwitchHandler(services: Services): (change: ProtocolSwitch) => Promise<void> {
  return async ({ model, from, to, error }) => {
    // The gateway's own words, as they came; only a closing full stop is added where they lack one.
    const words = (error.detail ?? error.message).trim();
    const said = /[.!?。！？]$/.test(words) ? words : `${words}${/[\u3400-\u9fff]/.test(words) ? '。' : '.'}`;
    services.log.warn(
      `${model}: the gateway refused ${PROTOCOL_LABELS[from]} (${error.describe()}); switching to ${PROTOCOL_LABELS[to]} for this model.`,
    );
    void vscode.window.showInformationMessage(
      vscode.l10n.t(
        'The gateway lists the {0} protocol for {1}, but refused it: {2} This answer and later ones use {3} instead.',
        PROTOCOL_LABELS[from],
        model,
        said,
        PROTOCOL_LABELS[to],
      ),
    );
    await services.registry.refuseProtocol(model, from);
  };
}

/**
 * What withProtocolFallback needs to retry a request whose upstream refused a prompt-caching field:
 * the fields a request over a protocol carries (`cacheOver`), and what to do with a refusal: log it
 * and remember it with the refused protocols, so that the model never gets the field again. Nothing
 * is shown: the answer comes, only without the cache hint.
 */
export function cacheFieldRetry(
  services: Services,
  model: string,
  cacheOver: (protocol: ProtocolSwitch['from']) => PromptCacheRequest | undefined,
): {
  sent: (protocol: ProtocolSwitch['from']) => CacheField[];
  onField: (field: CacheField, error: GatewayError) => Promise<void>;
} {
  return {
    sent: (protocol) => cacheFieldsOf(cacheOver(protocol)),
    onField: async (field, error) => {
      services.log.warn(
        `${model}: the upstream refused the prompt-caching field ${field} (${error.describe()}); it is not sent to this model again.`,
      );
      await services.registry.refuseProtocol(model, field);
    },
  };
}
