import type { ChatEvent } from '../chat/events';
import { CACHE_FIELD_WIRE_NAMES, CACHE_FIELDS, type CacheField } from '../chat/cacheFields';
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

/**
 * The prompt-caching field an upstream refused, when the refusal names one the request carried
 * (`sent`): OpenAI's "Unrecognized request argument supplied: prompt_cache_key", Anthropic's
 * "cache_control: Extra inputs are not permitted", relayed by the gateway as its JSON error.
 */
export function refusedField(error: GatewayError, sent: readonly CacheField[]): CacheField | undefined {
  if (!error.jsonBody || (error.status !== 400 && error.status !== 422)) return undefined;
  const said = `${error.detail ?? ''} ${error.message}`;
  return sent.find((f) => said.includes(CACHE_FIELD_WIRE_NAMES[f]));
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
 * request once over the model's next listed protocol. When the upstream refuses a prompt-caching
 * field the request carried (`sent` says which it carries over a protocol), tells `onField` (which
 * remembers it) and runs the request once more without it. A retry's events are passed on as they
 * are, error included: each kind of retry happens once, so nothing loops. Events go in the batches
 * the stream decoded them in (see `ChatStream.batches`).
 */
export async function* withProtocolFallback(
  model: ModelInfo,
  protocol: ChatProtocol,
  run: (protocol: ChatProtocol, without: readonly CacheField[]) => AsyncIterable<ChatEvent[]>,
  onSwitch: (change: ProtocolSwitch) => void | Promise<void>,
  fields?: {
    sent: (protocol: ChatProtocol) => CacheField[];
    onField: (field: CacheField, error: GatewayError) => void | Promise<void>;
  },
): AsyncGenerator<ChatEvent[]> {
  let over = protocol;
  let switched = false;
  const without: CacheField[] = [];
  for (;;) {
    let first = true;
    let retry = false;
    for await (const batch of run(over, without)) {
      const e = batch[0];
      if (first && e?.type === 'error') {
        const field = refusedField(e.error, fields?.sent(over).filter((f) => !without.includes(f)) ?? []);
        const to = !switched && isProtocolRejection(e.error) ? fallbackProtocol(model, over) : undefined;
        if (field) {
          await fields?.onField(field, e.error);
          without.push(field);
          retry = true;
          break;
        }
        if (to) {
          await onSwitch({ model: model.id, from: over, to, error: e.error });
          switched = true;
          over = to;
          retry = true;
          break;
        }
      }
      if (e) first = false;
      yield batch;
    }
    if (!retry) return;
  }
}

/** What a relay or an upstream refused for a model: a protocol, a fill-in-the-middle request, or a request field. */
export type Refusable = RefusedRoute | CacheField;

/** Whether a refusal is of a chat protocol (else of FIM or of a field). */
export function isProtocol(what: Refusable): what is ChatProtocol {
  return what !== 'fim' && !(CACHE_FIELDS as readonly string[]).includes(what);
}

/** Protocols, FIM and fields refused per model id at one gateway. */
export type RefusedProtocols = Record<string, Refusable[]>;

/** Where refusals are remembered between sessions and windows (models/refusalMemory.ts). */
export interface RefusedProtocolStore {
  /** The refusals at this gateway origin that have not expired. */
  load(origin: string): Promise<RefusedProtocols>;
  /** Records a refusal; returns the origin's refusals with it. */
  add(origin: string, model: string, protocol: Refusable): Promise<RefusedProtocols>;
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
    const all = refused[m.id];
    if (!all?.length || m.kind !== 'chat') return m;
    const out = all.filter(isProtocol);
    const fields = all.filter((r): r is CacheField => r !== 'fim' && !isProtocol(r));
    // A refused FIM request says how the model completes code (completion/learning.ts).
    const withFim = all.includes('fim') ? { ...m, fimRefused: true } : m;
    const withFields = fields.length ? { ...withFim, refusedFields: fields } : withFim;
    const left = m.protocols.filter((p) => !out.includes(p));
    return left.length && left.length !== m.protocols.length
      ? { ...withFields, protocols: left, refused: m.protocols.filter((p) => out.includes(p)) }
      : withFields;
  });
}
