import type { ChatEvent } from '../chat/events';
import type { GatewayError } from '../errors';
import type { ChatProtocol, ModelInfo, RefusedRoute } from './types';

/**
 * A gateway's model list can advertise a protocol its relay then refuses for that model (Cherry
 * Studio hit this: https://github.com/CherryHQ/cherry-studio/pull/18699). The refusal comes before
 * any answer, in one of these forms:
 * - new-api's channel adaptor has no conversion for the protocol: HTTP 500 `convert_request_failed`
 *   ("not implemented"), or 501 `api_not_implemented`;
 * - the upstream refuses it and new-api relays its words, e.g. HTTP 400 `bad_response_status_code`
 *   "Model … does not support apiType:openai.responses parameter";
 * - the gateway has no route for the protocol at all: HTTP 404 "Invalid URL (POST /v1/responses)".
 * Each comes as the gateway's JSON error body.
 */
export function isProtocolRejection(error: GatewayError): boolean {
  // Only the gateway's own JSON error counts: a bare 501 or an HTML 404 comes from a proxy or web
  // server in front of it, which says nothing about what the relay does with this model.
  if (!error.jsonBody) return false;
  if (error.code === 'convert_request_failed' || error.code === 'api_not_implemented') return true;
  const said = error.detail ?? '';
  if (/does not support api ?type/i.test(said)) return true;
  return (
    error.status === 404 &&
    /^Invalid URL \(POST [^)]*\/v1\/(responses|messages|chat\/completions|completions)\)/i.test(said)
  );
}

/** The protocol to try instead: the next one the model lists, never the refused one. */
export function fallbackProtocol(model: ModelInfo, refused: ChatProtocol): ChatProtocol | undefined {
  return model.protocols.find((p) => p !== refused);
}

export interface ProtocolSwitch {
  model: string;
  from: ChatProtocol;
  to: ChatProtocol;
  /** The refusal, as the gateway worded it. */
  error: GatewayError;
}

/**
 * Runs a chat request over `protocol`; when the relay refuses that protocol before anything
 * arrived, tells `onSwitch` (which informs the user and remembers the switch) and runs the same
 * request once over the model's next listed protocol. That second run's events are passed on as
 * they are, error included: there is no third try, so nothing loops. Events go in the batches the
 * stream decoded them in (see `ChatStream.batches`).
 */
export async function* withProtocolFallback(
  model: ModelInfo,
  protocol: ChatProtocol,
  run: (protocol: ChatProtocol) => AsyncIterable<ChatEvent[]>,
  onSwitch: (change: ProtocolSwitch) => void | Promise<void>,
): AsyncGenerator<ChatEvent[]> {
  let first = true;
  for await (const batch of run(protocol)) {
    const e = batch[0];
    if (first && e?.type === 'error' && isProtocolRejection(e.error)) {
      const to = fallbackProtocol(model, protocol);
      if (to) {
        await onSwitch({ model: model.id, from: protocol, to, error: e.error });
        yield* run(to);
        return;
      }
    }
    if (e) first = false;
    yield batch;
  }
}

/** Protocols (and FIM, see RefusedRoute) refused per model id at one gateway. */
export type RefusedProtocols = Record<string, RefusedRoute[]>;

/** Where refusals are remembered between sessions and windows (models/refusalMemory.ts). */
export interface RefusedProtocolStore {
  /** The refusals at this gateway origin that have not expired. */
  load(origin: string): Promise<RefusedProtocols>;
  /** Records a refusal; returns the origin's refusals with it. */
  add(origin: string, model: string, protocol: RefusedRoute): Promise<RefusedProtocols>;
  /** Forgets every refusal (the "Reset Remembered Protocol Refusals" command). */
  clear(): Promise<void>;
}

/**
 * The models with the protocols their relay refused taken out of their list, so the next request,
 * the protocol picker's default and VS Code's chat all use what works. The refused ones stay
 * reachable as `refused`: a user who picks one explicitly gets it. A model never ends up with no
 * protocol: if every listed one was refused, the list stays as the gateway gave it.
 */
export function withoutRefused(models: ModelInfo[], refused: RefusedProtocols): ModelInfo[] {
  return models.map((m) => {
    const out = refused[m.id];
    if (!out?.length || m.kind !== 'chat') return m;
    // A refused FIM request says how the model completes code (completion/learning.ts).
    const model = out.includes('fim') ? { ...m, fimRefused: true } : m;
    const left = m.protocols.filter((p) => !out.includes(p));
    return left.length && left.length !== m.protocols.length
      ? { ...model, protocols: left, refused: m.protocols.filter((p) => out.includes(p)) }
      : model;
  });
}
