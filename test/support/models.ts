import type { ChatProtocol, ModelInfo } from '../../src/core/models/types';

/** The three chat protocols, in the order the gateway double lists them. */
export const ALL_PROTOCOLS: ChatProtocol[] = ['chatCompletions', 'responses', 'messages'];

/**
 * A chat model as the registry lists it, for tests: available, over Chat Completions, decided by
 * the gateway; `over` sets what a test is about.
 */
export function chatModel(id: string, over: Partial<ModelInfo> = {}): ModelInfo {
  return {
    id,
    name: id,
    provider: 'openai',
    kind: 'chat',
    protocols: ['chatCompletions'],
    protocolSource: 'gateway',
    available: true,
    inCatalog: false,
    ...over,
  };
}

/** A chat model of the gateway's channel `ownedBy` (its `owned_by`), by default over all three protocols. */
export function channelModel(id: string, ownedBy: string, protocols: ChatProtocol[] = ALL_PROTOCOLS): ModelInfo {
  return chatModel(id, { provider: ownedBy, ownedBy, protocols });
}
