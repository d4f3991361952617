import type { NormalisedBase } from './config';
import type { ErrorKind } from './errors';
import { countByKind } from './models/classify';
import type { RegistrySnapshot } from './models/modelRegistry';
import type { ModelKind } from './models/types';

/** What "Check Connection" reports; built without calling any billed endpoint. */
export interface ConnectionReport {
  base: string;
  baseChanges: string[];
  keySet: boolean;
  maskedKey?: string;
  /** true: the gateway listed models for the key; false: it refused the key; undefined: not known. */
  keyAccepted?: boolean;
  reachable: boolean;
  error?: { kind: ErrorKind; message: string; requestId?: string };
  modelsPerKind: Record<ModelKind, number>;
  catalog?: { url: string; format: string; models: number; ageSeconds: number; source: string; problem?: string };
  catalogError?: string;
  /** Workspace values of user-only settings that were ignored in this session, one sentence each. */
  ignoredSettings?: string[];
}

export function buildReport(base: NormalisedBase, keySet: boolean, maskedKey: string | undefined, snap: RegistrySnapshot, now = Date.now()): ConnectionReport {
  const err = snap.keyError;
  // A refused key or any HTTP answer proves the gateway is reachable; transport failures do not.
  const reachable = snap.keyModels !== undefined || (err !== undefined && err.status !== undefined);
  return {
    base: base.base,
    baseChanges: base.changes,
    keySet,
    maskedKey,
    keyAccepted: snap.keyModels ? true : err?.kind === 'auth' && err.status !== undefined ? false : undefined,
    reachable,
    error: err ? { kind: err.kind, message: err.message, requestId: err.requestId } : undefined,
    modelsPerKind: countByKind(snap.models),
    catalog: snap.catalog
      ? {
          url: snap.catalog.url,
          format: snap.catalog.format,
          models: snap.catalog.entries.length,
          ageSeconds: Math.max(0, Math.round((now - snap.catalog.fetchedAt) / 1000)),
          source: snap.catalog.source,
          problem: snap.catalog.problem?.message,
        }
      : undefined,
    catalogError: snap.catalogError?.message,
  };
}

export function formatReport(r: ConnectionReport): string {
  const lines = [`Base address: ${r.base}${r.baseChanges.length ? ` (normalised: ${r.baseChanges.join('; ')})` : ''}`];
  lines.push(`API key: ${r.keySet ? `set (${r.maskedKey})` : 'not set'}`);
  if (r.keyAccepted === true) lines.push('Key accepted by the gateway.');
  else if (r.keyAccepted === false) lines.push('Key refused by the gateway.');
  if (r.error) lines.push(`Problem: ${r.error.message}${r.error.requestId ? ` (request id: ${r.error.requestId})` : ''}`);
  const c = r.modelsPerKind;
  lines.push(`Models for this key: ${c.chat} chat, ${c.image} image, ${c.video} video, ${c.tool} tool`);
  if (r.catalog) {
    const age = formatAge(r.catalog.ageSeconds);
    lines.push(`Catalog: ${r.catalog.models} models (${r.catalog.format}), downloaded ${age} ago${r.catalog.source === 'cache' ? ', from the offline cache' : ''}`);
    if (r.catalog.problem) lines.push(`Catalog server problem: ${r.catalog.problem}`);
  } else if (r.catalogError) {
    lines.push(`Catalog: ${r.catalogError}`);
  } else {
    lines.push('Catalog: not configured (modelGateway.catalogUrl)');
  }
  for (const notice of r.ignoredSettings ?? []) lines.push(notice);
  return lines.join('\n');
}

/** The same report as a few sentences, most important first, for a one-line notification. */
export function summariseReport(r: ConnectionReport): string {
  const parts: string[] = [];
  if (!r.keySet) parts.push('No API key is set.');
  else if (r.keyAccepted === true) parts.push(`Key accepted by the gateway. API key: set (${r.maskedKey}).`);
  else if (r.keyAccepted === false) parts.push(`Key refused by the gateway. API key: set (${r.maskedKey}).`);
  else parts.push(`The gateway could not be reached. API key: set (${r.maskedKey}).`);
  if (r.error) parts.push(`Problem: ${r.error.message}`);
  const c = r.modelsPerKind;
  if (r.keyAccepted) parts.push(`Models for this key: ${c.chat} chat, ${c.image} image, ${c.video} video, ${c.tool} tool.`);
  if (r.catalog) parts.push(`Catalog: ${r.catalog.models} models, ${formatAge(r.catalog.ageSeconds)} old${r.catalog.source === 'cache' ? ' (offline cache)' : ''}.`);
  else if (r.catalogError) parts.push(`Catalog problem: ${r.catalogError}`);
  parts.push(`Base address: ${r.base}${r.baseChanges.length ? ` (normalised: ${r.baseChanges.join('; ')})` : ''}.`);
  return parts.join(' ');
}

export function formatAge(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} days`;
}
