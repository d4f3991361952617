import * as l10n from '@vscode/l10n';
import type { NormalisedBase } from './config';
import type { ErrorKind } from './errors';
import { countByKind } from './models/classify';
import type { RegistrySnapshot } from './models/modelRegistry';
import type { ModelKind } from './models/types';
import { quotaLine, type KeyQuota } from './quota';
import { formatAge, formatNumber } from '../shared/format';

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
export function keyChecks(
  snap: RegistrySnapshot,
  masked: (keyId: string) => string,
  quota: (keyId: string) => KeyQuota | undefined,
): KeyCheck[] {
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
  const head =
    k.accepted === true
      ? l10n.t('Key "{0}" ({1}): accepted, {2} models.', k.name, k.masked, formatNumber(k.models ?? 0))
      : k.accepted === false
        ? l10n.t('Key "{0}" ({1}): refused by the gateway.', k.name, k.masked)
        : l10n.t('Key "{0}" ({1}): not checked.', k.name, k.masked);
  return [head, k.error, k.quota && quotaLine(k.quota)].filter(Boolean).join(' ');
}

/** With several keys, the report speaks of each key and of all of them together, never of "this key". */
function severalKeys(r: ConnectionReport): KeyCheck[] | undefined {
  return r.keys && r.keys.length > 1 ? r.keys : undefined;
}

/** "2 of 2 keys accepted": the first fact of a report with several keys. */
function keysCounted(keys: readonly KeyCheck[]): string {
  return l10n.t('{0} of {1} keys accepted by the gateway', keys.filter((k) => k.accepted === true).length, keys.length);
}

/**
 * The outcome with several keys: each accepted key's own count, and the models of all of them
 * together named as such (a model two keys list is counted once in the total).
 */
function severalKeysOutcome(keys: readonly KeyCheck[], total: number): string {
  const accepted = keys.filter((k) => k.accepted === true);
  const [only] = accepted;
  if (accepted.length === 1 && only)
    return l10n.t(
      'Key "{0}" ({1}) accepted: it may use {2} models.',
      only.name,
      only.masked,
      formatNumber(only.models ?? 0),
    );
  const each = accepted.map((k) => l10n.t('"{0}" may use {1} models', k.name, formatNumber(k.models ?? 0)));
  return l10n.t(
    '{0} keys accepted: {1}. All keys together: {2} models.',
    accepted.length,
    each.join('; '),
    formatNumber(total),
  );
}

export function buildReport(
  base: NormalisedBase,
  keySet: boolean,
  maskedKey: string | undefined,
  snap: RegistrySnapshot,
  now = Date.now(),
): ConnectionReport {
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

/** "3 chat, 1 image, …": the models per kind. */
function kindsText(r: ConnectionReport): string {
  const c = r.modelsPerKind;
  return l10n.t(
    '{0} chat, {1} image, {2} video, {3} tool',
    formatNumber(c.chat),
    formatNumber(c.image),
    formatNumber(c.video),
    formatNumber(c.tool),
  );
}

/** Whose models the per-kind counts are: this key's, or with several keys all of them together. */
function modelsLabel(r: ConnectionReport): string {
  return severalKeys(r) ? l10n.t('Models of all keys together') : l10n.t('Models for this key');
}

function modelsText(r: ConnectionReport): string {
  return l10n.t('{0}: {1}', modelsLabel(r), kindsText(r));
}

/** One key's line of the report, named and masked. */
function keyFact(k: KeyCheck): ReportFact {
  const value =
    k.accepted === true
      ? l10n.t('{0}, accepted, {1} models', k.masked, formatNumber(k.models ?? 0))
      : k.accepted === false
        ? l10n.t('{0}, refused by the gateway', k.masked)
        : l10n.t('{0}, not checked (the gateway did not answer)', k.masked);
  const detail = [k.error, k.quota && quotaLine(k.quota)].filter(Boolean).join(' ');
  return {
    label: l10n.t('Key "{0}"', k.name),
    value,
    ...(detail ? { detail } : {}),
    state: k.accepted === true ? 'ok' : k.accepted === false ? 'problem' : 'info',
  };
}

export function formatReport(r: ConnectionReport): string {
  const lines = [l10n.t('Base address: {0}', baseText(r))];
  const several = severalKeys(r);
  if (several) lines.push(l10n.t('API keys: {0}', keysCounted(several)));
  else {
    lines.push(r.keySet ? l10n.t('API key: set ({0})', r.maskedKey ?? '') : l10n.t('API key: not set'));
    if (r.keyAccepted === true) lines.push(l10n.t('Key accepted by the gateway.'));
    else if (r.keyAccepted === false) lines.push(l10n.t('Key refused by the gateway.'));
  }
  if (r.error)
    lines.push(
      l10n.t(
        'Problem: {0}',
        r.error.requestId ? l10n.t('{0} (request id: {1})', r.error.message, r.error.requestId) : r.error.message,
      ),
    );
  lines.push(modelsText(r));
  if (r.keys?.length) lines.push(...r.keys.map(keyLine));
  else if (r.quota) lines.push(quotaLine(r.quota));
  if (r.catalog) {
    const age = formatAge(r.catalog.ageSeconds);
    lines.push(
      r.catalog.source === 'cache'
        ? l10n.t(
            'Catalog: {0} models ({1}), downloaded {2} ago, from the offline cache',
            formatNumber(r.catalog.models),
            r.catalog.format,
            age,
          )
        : l10n.t(
            'Catalog: {0} models ({1}), downloaded {2} ago',
            formatNumber(r.catalog.models),
            r.catalog.format,
            age,
          ),
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

/**
 * The outcome in one sentence or two, for the notification: whether the key works and, if not,
 * the one problem (said once: a missing key is not repeated as its own "problem"). The facts
 * behind it are in reportFacts, which "Show Report" lists.
 */
export function summariseReport(r: ConnectionReport): string {
  const key = r.maskedKey ?? '';
  const total = Object.values(r.modelsPerKind).reduce((sum, n) => sum + n, 0);
  let outcome: string;
  if (!r.keySet) outcome = l10n.t('No API key is set. Set one to use the gateway at {0}.', r.base);
  else if (r.keyAccepted === true) {
    const several = severalKeys(r);
    outcome = several
      ? severalKeysOutcome(several, total)
      : l10n.t('Key accepted: {0} may use {1} models.', key, formatNumber(total));
  } else if (r.keyAccepted === false)
    outcome = l10n.t('Key refused by the gateway ({0}): {1}', key, r.error?.message ?? l10n.t('no reason given'));
  else
    outcome = l10n.t(
      'The gateway at {0} could not be reached: {1}',
      r.base,
      r.error?.message ?? l10n.t('no reason given'),
    );
  // A catalog problem is worth a word even when the key works; its details are in the report.
  if (r.keySet && r.catalogError) outcome += ` ${l10n.t('The model catalog could not be read.')}`;
  const refused = r.keys?.filter((k) => k.accepted !== true).length ?? 0;
  if (refused)
    outcome += ` ${l10n.t('{0} of your {1} keys did not work; see the report.', refused, r.keys?.length ?? 0)}`;
  return outcome;
}

/** One line of the connection report: what was checked, what was found, and whether it is a problem. */
export interface ReportFact {
  label: string;
  value: string;
  /** More words, e.g. the request id of a failure or the gateway's own message. */
  detail?: string;
  state: 'ok' | 'problem' | 'info';
}

/** The one key's fact: not set, accepted, refused or not checked. */
function keyFactOf(r: ConnectionReport): ReportFact {
  return !r.keySet
    ? { label: l10n.t('API key'), value: l10n.t('not set'), state: 'problem' }
    : r.keyAccepted === true
      ? { label: l10n.t('API key'), value: l10n.t('{0}, accepted by the gateway', r.maskedKey ?? ''), state: 'ok' }
      : r.keyAccepted === false
        ? {
            label: l10n.t('API key'),
            value: l10n.t('{0}, refused by the gateway', r.maskedKey ?? ''),
            state: 'problem',
          }
        : {
            label: l10n.t('API key'),
            value: l10n.t('{0}, not checked (the gateway did not answer)', r.maskedKey ?? ''),
            state: 'info',
          };
}

/** The report as separate facts, most important first; the key appears only masked. */
export function reportFacts(r: ConnectionReport): ReportFact[] {
  const facts: ReportFact[] = [];
  const several = severalKeys(r);
  const accepted = several?.filter((k) => k.accepted === true).length;
  facts.push(
    several
      ? {
          label: l10n.t('API keys'),
          value: keysCounted(several),
          state: accepted === several.length ? 'ok' : accepted ? 'info' : 'problem',
        }
      : keyFactOf(r),
  );
  if (r.keySet && r.error) {
    facts.push({
      label: l10n.t('Problem'),
      value: r.error.message,
      ...(r.error.requestId ? { detail: l10n.t('Request id: {0}', r.error.requestId) } : {}),
      state: 'problem',
    });
  }
  facts.push({
    label: l10n.t('Base address'),
    value: r.base,
    ...(r.baseChanges.length ? { detail: l10n.t('Normalised: {0}', r.baseChanges.join('; ')) } : {}),
    state: r.reachable ? 'ok' : r.keySet ? 'problem' : 'info',
  });
  if (r.keyAccepted) facts.push({ label: modelsLabel(r), value: kindsText(r), state: 'ok' });
  // With several keys each gets its own line (accepted, its models and quota, or why not); with one, its quota.
  if (r.keys?.length) facts.push(...r.keys.map(keyFact));
  else if (r.quota) facts.push({ label: l10n.t('Quota'), value: quotaLine(r.quota), state: 'info' });
  if (r.catalog) {
    const age = formatAge(r.catalog.ageSeconds);
    facts.push({
      label: l10n.t('Catalog'),
      value:
        r.catalog.source === 'cache'
          ? l10n.t(
              '{0} models ({1}), downloaded {2} ago, from the offline cache',
              formatNumber(r.catalog.models),
              r.catalog.format,
              age,
            )
          : l10n.t('{0} models ({1}), downloaded {2} ago', formatNumber(r.catalog.models), r.catalog.format, age),
      ...(r.catalog.problem ? { detail: l10n.t('Catalog server problem: {0}', r.catalog.problem) } : {}),
      state: r.catalog.problem ? 'problem' : 'ok',
    });
  } else if (r.catalogError) facts.push({ label: l10n.t('Catalog'), value: r.catalogError, state: 'problem' });
  else
    facts.push({ label: l10n.t('Catalog'), value: l10n.t('not configured (modelGateway.catalogUrl)'), state: 'info' });
  for (const notice of r.ignoredSettings ?? [])
    facts.push({ label: l10n.t('Ignored workspace setting'), value: notice, state: 'info' });
  return facts;
}
