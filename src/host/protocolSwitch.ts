/**
 * What the host does when the relay refuses a protocol the gateway lists for a model: tell the
 * user once, log it, and remember it (per model id, in the global state) so that later requests,
 * the protocol picker and VS Code's chat use the protocol that worked.
 */
import * as vscode from 'vscode';
import * as z from 'zod/mini';
import type { ProtocolSwitch, RefusedProtocols, RefusedProtocolStore } from '../core/models/protocolFallback';
import { lazySchema } from '../core/validate';
import { PROTOCOL_LABELS, WIRE_PROTOCOLS } from '../shared/protocolNames';
import type { Services } from './services';

const REFUSED_KEY = 'models.refusedProtocols';
const refusedSchema = lazySchema(() => z.record(z.string(), z.array(z.enum(WIRE_PROTOCOLS))));

/** The refused protocols as the global state keeps them; a value that does not fit counts as none. */
export function refusedProtocolStore(state: vscode.Memento): RefusedProtocolStore {
  return {
    load: (): RefusedProtocols => {
      const parsed = z.safeParse(refusedSchema(), state.get(REFUSED_KEY));
      return parsed.success ? parsed.data : {};
    },
    save: async (value) => {
      await state.update(REFUSED_KEY, value);
    },
  };
}

export function protocolSwitchHandler(services: Services): (change: ProtocolSwitch) => Promise<void> {
  return async ({ model, from, to, error }) => {
    // The gateway's own words, as they came; only a closing full stop is added where they lack one.
    const words = (error.detail ?? error.message).trim();
    const said = /[.!?。！？]$/.test(words) ? words : `${words}${/[\u3400-\u9fff]/.test(words) ? '。' : '.'}`;
    services.log.warn(`${model}: the gateway refused ${PROTOCOL_LABELS[from]} (${error.describe()}); switching to ${PROTOCOL_LABELS[to]} for this model.`);
    void vscode.window.showInformationMessage(
      vscode.l10n.t('The gateway lists the {0} protocol for {1}, but refused it: {2} This answer and later ones use {3} instead.', PROTOCOL_LABELS[from], model, said, PROTOCOL_LABELS[to]),
    );
    await services.registry.refuseProtocol(model, from);
  };
}
