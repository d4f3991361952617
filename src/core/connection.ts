import * as l10n from '@vscode/l10n';
import type { NormalisedBase } from './config';
import type { ErrorKind } from './errors';
import { countByKind } from './models/classify';
import type { RegistrySnapshot } from './models/modelRegistry';
import type { ModelKind } from './models/types';
import { quotaLine, type KeyQuota } from './quota';
import { formatNumber } from '../shared/format';

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
  /** The key's quota, when the gateway tells it and showing it is not turned off. */
  quota?: KeyQuota;
  /** With several keys: each key's own check, in the user's order. */
  keys?: KeyCheck[];
}

/** One key's part of the report: named and masked, never the key itself. */
export interface KeyCheck {
  name: string;
  masked: string;
  /** As ConnectionReport.keyAccepted, for this key alone. */
  accepted?: boolean;
  models?: number;
  error?: string;
  quota?: KeyQuota;
}

/** Each key's check from its own model list (see RegistrySnapshot.keyLists). */
export function keyChecks(snap: RegistrySnapshot, masked: (keyId: string) => string, quota: (keyId: string) => KeyQuota | undefined): KeyCheck[] {
  return (snap.keyLists ?? []).map(({ key, models, error }) => {
    const figures = models ? quota(key.id) : undefined;
    return {
      name: key.name,
      masked: masked(key.id),
      accepted: models ? true : error?.kind === 'auth' && error.status !== undefined ? false : undefined,
      ...(models ? { models: models.length } : {}),
      ...(error ? { error: error.message } : {}),
      ...(figures ? { quota: figures } : {}),
    };
  });
}

/** One sentence per key: accepted with how many models (and its quota), or refused and why. */
function keyLine(k: KeyCheck): string {
  const head = k.accepted === true ? l10n.t('Key "{0}" ({1}): accepted, {2} models.', k.name, k.masked, formatNumber(k.models ?? 0)) : k.accepted === false ? l10n.t('Key "{0}" ({1}): refused by the gateway.', k.name, k.masked) : l10n.t('Key "{0}" ({1}): not checked.', k.name, k.masked);
  return [head, k.error, k.quota && quotaLine(k.quota)].filter(Boolean).join(' ');
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

/** The base address line's value: the address, and what was removed from what the user typed. */
function baseText(r: ConnectionReport): string {
  return r.baseChanges.length ? l10n.t('{0} (normalised: {1})', r.base, r.baseChanges.join('; ')) : r.base;
}

function modelsText(r: ConnectionReport): string {
  const c = r.modelsPerKind;
  return l10n.t('Models for this key: {0} chat, {1} image, {2} video, {3} tool', formatNumber(c.chat), formatNumber(c.image), formatNumber(c.video), formatNumber(c.tool));
}

export function formatReport(r: ConnectionReport): string {
  const lines = [l10n.t('Base address: {0}', baseText(r))];
  lines.push(r.keySet ? l10n.t('API key: set ({0})', r.maskedKey ?? '') : l10n.t('API key: not set'));
  if (r.keyAccepted === true) lines.push(l10n.t('Key accepted by the gateway.'));
  else if (r.keyAccepted === false) lines.push(l10n.t('Key refused by the gateway.'));
  if (r.error) lines.push(l10n.t('Problem: {0}', r.error.requestId ? l10n.t('{0} (request id: {1})', r.error.message, r.error.requestId) : r.error.message));
  lines.push(modelsText(r));
  if (r.keys?.length) lines.push(...r.keys.map(keyLine));
  else if (r.quota) lines.push(quotaLine(r.quota));
  if (r.catalog) {
    const age = formatAge(r.catalog.ageSeconds);
    lines.push(
      r.catalog.source === 'cache'
        ? l10n.t('Catalog: {0} models ({1}), downloaded {2} ago, from the offline cache', formatNumber(r.catalog.models), r.catalog.format, age)
        : l10n.t('Catalog: {0} models ({1}), downloaded {2} ago', formatNumber(r.catalog.models), r.catalog.format, age),
    );
    if (r.catalog.problem) lines.push(l10n.t('Catalog server problem: {0}', r.catalog.problem));
  } else if (r.catalogError) {
    lines.push(l10n.t('Catalog: {0}', r.catalogError));
  } else {
    lines.push(l10n.t('Catalog: not configured (modelGateway.catalogUrl)'));
  }
  for (const notice of r.ignoredSettings ?? []) lines.push(notice);
  return lines.join('\n');
}

/** The same report as a few sentences, most important first, for a one-line notification. */
export function summariseReport(r: ConnectionReport): string {
  const parts: string[] = [];
  const key = r.maskedKey ?? '';
  if (!r.keySet) parts.push(l10n.t('No API key is set.'));
  else if (r.keyAccepted === true) parts.push(l10n.t('Key accepted by the gateway. API key: set ({0}).', key));
  else if (r.keyAccepted === false) parts.push(l10n.t('Key refused by the gateway. API key: set ({0}).', key));
  else parts.push(l10n.t('The gateway could not be reached. API key: set ({0}).', key));
  if (r.error) parts.push(l10n.t('Problem: {0}', r.error.message));
  if (r.keyAccepted) parts.push(l10n.t('{0}.', modelsText(r)));
  if (r.keys?.length) parts.push(...r.keys.map(keyLine));
  else if (r.quota) parts.push(quotaLine(r.quota));
  if (r.catalog) {
    const age = formatAge(r.catalog.ageSeconds);
    parts.push(r.catalog.source === 'cache' ? l10n.t('Catalog: {0} models, {1} old (offline cache).', formatNumber(r.catalog.models), age) : l10n.t('Catalog: {0} models, {1} old.', formatNumber(r.catalog.models), age));
  } else if (r.catalogError) parts.push(l10n.t('Catalog problem: {0}', r.catalogError));
  parts.push(l10n.t('Base address: {0}.', baseText(r)));
  return parts.join(' ');
}

export function formatAge(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${Math.round(seconds / 3600)} h`;
  return l10n.t('{0} days', Math.round(seconds / 86400));
}
