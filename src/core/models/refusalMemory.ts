import * as z from 'zod/mini';
import { WIRE_PROTOCOLS } from '../../shared/protocolNames';
import { CACHE_FIELDS } from '../chat/cacheFields';
import { SharedJsonFile } from '../sharedState';
import { lazySchema } from '../validate';
import type { Refusable, RefusedProtocols, RefusedProtocolStore } from './protocolFallback';

/**
 * Refused protocols as kept between sessions and shared by every window: one entry per gateway
 * origin, model and protocol, with when it was last refused. A refusal says something about one
 * gateway's relay for one model at one time: another gateway (a changed base address) starts with
 * none, and an entry expires (the relay's administrator may add the missing conversion). A request
 * field an upstream refused (a prompt-caching field, see chat/promptCache.ts) is kept the same way.
 */
export const REFUSAL_TTL_MS = 7 * 24 * 3600 * 1000;

export interface RememberedRefusal {
  origin: string;
  model: string;
  /**
   * The protocol refused, `fim`, or the request field. A string: a newer version may record kinds this
   * one does not know, which it keeps in the file (every window shares it) and leaves out of `load`.
   */
  protocol: string;
  /** When the relay last refused it (ms since the epoch). */
  at: number;
}

const fileSchema = lazySchema(() =>
  z.object({
    version: z.literal(1),
    refusals: z.array(
      z.object({
        origin: z.string(),
        model: z.string(),
        protocol: z.string(),
        at: z.number(),
      }),
    ),
  }),
);
type RefusalFileShape = z.infer<ReturnType<typeof fileSchema>>;

/** The form the global state used before: refused protocols per model id, of no gateway in particular. */
const legacySchema = lazySchema(() => z.record(z.string(), z.array(z.enum(WIRE_PROTOCOLS))));

const KNOWN: readonly string[] = [...WIRE_PROTOCOLS, 'fim', ...CACHE_FIELDS];

function isKnown(kind: string): kind is Refusable {
  return KNOWN.includes(kind);
}

/** The unexpired refusals at `origin`, per model, of the kinds this version knows. */
export function refusedAt(refusals: readonly RememberedRefusal[], origin: string, now: number): RefusedProtocols {
  const out: RefusedProtocols = {};
  for (const r of refusals) {
    if (r.origin !== origin || now - r.at >= REFUSAL_TTL_MS || !isKnown(r.protocol)) continue;
    const list = (out[r.model] ??= []);
    if (!list.includes(r.protocol)) list.push(r.protocol);
  }
  return out;
}

/** The list with this refusal recorded (or renewed) and the expired ones dropped. */
export function withRefusal(refusals: readonly RememberedRefusal[], r: RememberedRefusal): RememberedRefusal[] {
  const kept = refusals.filter(
    (o) => r.at - o.at < REFUSAL_TTL_MS && !(o.origin === r.origin && o.model === r.model && o.protocol === r.protocol),
  );
  return [...kept, r];
}

export interface RefusalMemoryOptions {
  now?: () => number;
}

/** The refusals in a file of the extension's global storage (SharedJsonFile: one lock, every window). */
export class RefusalMemory implements RefusedProtocolStore {
  private readonly doc: SharedJsonFile<RefusalFileShape>;
  private readonly now: () => number;

  constructor(file: string, options: RefusalMemoryOptions = {}) {
    this.now = options.now ?? Date.now;
    this.doc = new SharedJsonFile(
      file,
      (raw) => {
        const parsed = z.safeParse(fileSchema(), raw);
        return parsed.success ? parsed.data : undefined;
      },
      () => ({ version: 1, refusals: [] }),
    );
  }

  async load(origin: string): Promise<RefusedProtocols> {
    return refusedAt((await this.doc.read()).refusals, origin, this.now());
  }

  async add(origin: string, model: string, protocol: Refusable): Promise<RefusedProtocols> {
    const at = this.now();
    const next = await this.doc.update((d) => ({
      version: 1,
      refusals: withRefusal(d.refusals, { origin, model, protocol, at }),
    }));
    return refusedAt(next.refusals, origin, at);
  }

  async clear(): Promise<void> {
    await this.doc.update(() => ({ version: 1, refusals: [] }));
  }

  /**
   * Takes over the refusals an older version kept in one window's global state (per model, of no
   * gateway in particular): they are filed under the gateway in use now and expire from now.
   */
  async migrate(legacy: unknown, origin: string, forget: () => Promise<void>): Promise<void> {
    await this.doc.migrate(() => {
      const parsed = z.safeParse(legacySchema(), legacy);
      if (!parsed.success || !origin) return undefined;
      const at = this.now();
      const refusals = Object.entries(parsed.data).flatMap(([model, protocols]) =>
        protocols.map((protocol) => ({ origin, model, protocol, at })),
      );
      return refusals.length ? { version: 1, refusals } : undefined;
    }, forget);
  }
}
