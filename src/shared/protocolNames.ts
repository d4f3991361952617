/**
 * The chat protocols' ids and names, apart from the chat view's messages (shared/protocol.ts builds
 * its schema from them and re-exports them): the Models view and the refused-protocol store need
 * them at activation, the message schemas only the chat does, so the extension's entry does not
 * carry those.
 */
export const WIRE_PROTOCOLS = ['chatCompletions', 'responses', 'messages'] as const;
export type WireProtocol = (typeof WIRE_PROTOCOLS)[number];

/** The protocols' names as the gateway's documentation writes them (names, never translated). */
export const PROTOCOL_LABELS: Record<WireProtocol, string> = {
  chatCompletions: 'Chat Completions',
  responses: 'Responses',
  messages: 'Messages',
};
