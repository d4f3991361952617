import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as z from 'zod/mini';
import { GatewayError, isGatewayError } from '../errors';
import type { HttpClient } from '../http';
import { writeFileAtomic } from '../atomicFile';
import { lazySchema, parseJsonText, parseWith } from '../validate';
import { parseCatalog } from './catalogFormats';
import type { CatalogEntry, CatalogFormat } from './types';
import { words } from '../../shared/words';

export interface CatalogCache {
  url: string;
  body: string;
  etag?: string;
  lastModified?: string;
  /** When the body was downloaded. */
  fetchedAt: number;
  /** When the server last confirmed it (200 or 304). */
  checkedAt: number;
}

export interface CatalogStore {
  load(): Promise<CatalogCache | undefined>;
  save(cache: CatalogCache): Promise<void>;
}

export interface CatalogState {
  url: string;
  format: CatalogFormat;
  entries: CatalogEntry[];
  fetchedAt: number;
  checkedAt: number;
  /** `network`: downloaded now; `revalidated`: 304; `cache`: the server could not be used. */
  source: 'network' | 'revalidated' | 'cache';
  /** Why the cache was used instead of the server, when it was. */
  problem?: GatewayError;
}

/**
 * Downloads the catalog with ETag / Last-Modified revalidation and falls back to the cached copy
 * when the server cannot be reached or sends something unusable. The key is never sent.
 */
export async function syncCatalog(
  http: HttpClient,
  url: string,
  store: CatalogStore,
  signal?: AbortSignal,
  now = Date.now,
): Promise<CatalogState> {
  const cached = await store.load().catch(() => undefined);
  const usable = cached && cached.url === url ? cached : undefined;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (usable?.etag) headers['if-none-match'] = usable.etag;
  if (usable?.lastModified) headers['if-modified-since'] = usable.lastModified;
  try {
    const response = await http.send({ method: 'GET', url, headers, signal, acceptStatus: [304], anonymous: true });
    if (response.status === 304 && usable) {
      response.body.resume();
      const refreshed = { ...usable, checkedAt: now() };
      await store.save(refreshed);
      return stateFrom(refreshed, 'revalidated');
    }
    const body = await response.text();
    const fresh: CatalogCache = {
      url,
      body,
      etag: response.headers.etag,
      lastModified: response.headers['last-modified'],
      fetchedAt: now(),
      checkedAt: now(),
    };
    const state = stateFrom(fresh, 'network');
    await store.save(fresh);
    return state;
  } catch (err) {
    if (isGatewayError(err, 'cancelled') || !usable) throw err;
    const problem = isGatewayError(err) ? err : new GatewayError('network', String(err));
    return { ...stateFrom(usable, 'cache'), problem };
  }
}

/** The cached copy of the catalog at `url`, without asking the server; none when there is none or it is unusable. */
export async function cachedCatalog(url: string, store: CatalogStore): Promise<CatalogState | undefined> {
  const cached = await store.load().catch(() => undefined);
  if (!cached || cached.url !== url) return undefined;
  try {
    return stateFrom(cached, 'cache');
  } catch {
    return undefined;
  }
}

function stateFrom(cache: CatalogCache, source: CatalogState['source']): CatalogState {
  const parsed = parseCatalog(parseJsonText(cache.body, words('The model catalog')));
  return {
    url: cache.url,
    format: parsed.format,
    entries: parsed.entries,
    fetchedAt: cache.fetchedAt,
    checkedAt: cache.checkedAt,
    source,
  };
}

const cacheSchema = lazySchema(() =>
  z.object({
    url: z.string(),
    body: z.string(),
    etag: z.optional(z.string()),
    lastModified: z.optional(z.string()),
    fetchedAt: z.number(),
    checkedAt: z.number(),
  }),
);

/** Keeps the cached catalog as one JSON file (in VS Code's global storage folder). */
export class FileCatalogStore implements CatalogStore {
  constructor(private readonly file: string) {}

  async load(): Promise<CatalogCache | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch {
      return undefined;
    }
    return parseWith(cacheSchema(), parseJsonText(text, words('The cached catalog')), words('The cached catalog'));
  }

  async save(cache: CatalogCache): Promise<void> {
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    await writeFileAtomic(this.file, JSON.stringify(cache), { overwrite: true });
  }
}
