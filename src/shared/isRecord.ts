/**
 * The one check for "a JSON object" (not null, not an array), for the hand-written fast paths in
 * front of a schema and for reading values whose shape is not known: the host's and the webviews'
 * code share it (src/shared is in both builds).
 */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
