/**
 * Checks the host's messages against the shared protocol before the chat view uses them, without
 * checking again what it already holds. A snapshot describes every message of the view again (a
 * long conversation's older ones were asked for, a message was added): up to thousands of
 * messages, and checking each against the schema took 20–50 ms of one task. A snapshot's message
 * that is equal to one the view holds (checked when it came) is taken as that one, so the store
 * and the list leave it alone; only the others are checked.
 */
import { chatMessageSchema, hostMessageSchema, type ChatMessageView, type HostMessage } from '../../shared/protocol';
import { isRecord } from '../../shared/isRecord';
import type { MessageSchema } from '../shared/channel';

type Result = ReturnType<MessageSchema<HostMessage>['safeParse']>;

/** A reader of host messages; `held` gives the message with that id the view holds, if any. */
export function hostMessageReader(held: (id: string) => ChatMessageView | undefined): MessageSchema<HostMessage> {
  return {
    safeParse(data: unknown): Result {
      if (!isRecord(data) || data.type !== 'snapshot' || !isRecord(data.state) || !Array.isArray(data.state.messages))
        return hostMessageSchema.safeParse(data);
      const raw: unknown[] = data.state.messages;
      const messages: ChatMessageView[] = [];
      for (const [index, m] of raw.entries()) {
        const known = isRecord(m) && typeof m.id === 'string' ? held(m.id) : undefined;
        if (known !== undefined && sameJson(known, m)) {
          messages.push(known);
          continue;
        }
        const parsed = chatMessageSchema.safeParse(m);
        if (!parsed.success)
          return {
            success: false,
            error: {
              issues: parsed.error.issues.map((issue) => ({
                ...issue,
                path: ['state', 'messages', index, ...issue.path],
              })),
            },
          };
        messages.push(parsed.data);
      }
      // The rest of the snapshot is checked as the protocol says, its messages as above.
      const rest = hostMessageSchema.safeParse({ ...data, state: { ...data.state, messages: [] } });
      if (!rest.success || rest.data.type !== 'snapshot') return rest;
      return { success: true, data: { ...rest.data, state: { ...rest.data.state, messages } } };
    },
  };
}

/** Whether two JSON-like values (plain objects, arrays, strings, numbers, booleans) are equal. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ob = b as Record<string, unknown>;
  const oa = a as Record<string, unknown>;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(ob, k) && sameJson(oa[k], ob[k]));
}
