import * as path from 'node:path';
import * as vscode from 'vscode';
import { Endpoints, normaliseBaseUrl, type NormalisedBase } from '../core/config';
import { GatewayError } from '../core/errors';
import type { HttpClient } from '../core/http';
import { type HttpRequest, type RequestKey } from '../core/httpTypes';
import { KeyQueue } from '../core/keyQueue';
import { keyForRequest, type KeyEntry } from '../core/keys';
import { FileCatalogStore } from '../core/models/catalogSync';
import { FileKeyListMemory } from '../core/models/keyListMemory';
import { ModelRegistry } from '../core/models/modelRegistry';
import { timeoutsFrom, type Settings } from '../core/settings';
import { BillingMeter } from '../core/tools/billing';
import type { RefusedProtocolStore } from '../core/models/protocolFallback';
import { refusedProtocolStore } from './protocolSwitch';
import { QuotaWatcher } from './quota';
import { KeyStore } from './secrets';
import { affectsGateway, readHostSettings, readProxySettings, readTrustSettings, SECTION } from './settings';
import { WorkspaceOverrides } from './trust/workspaceOverrides';
import { words } from '../shared/words';

/**
 * Everything the commands and views share. Nothing here touches the network when it is built:
 * the HTTP client (and undici) is created on first use, and its code is read then too, so
 * activation stays cheap.
 */
export class Services implements vscode.Disposable {
  readonly keys: KeyStore;
  readonly registry: ModelRegistry;
  /** What the relay refused per model at this gateway: chat protocols, and FIM for inline completion. */
  readonly refusals: RefusedProtocolStore;
  /** Billed tool calls of this session (counted, never persisted). */
  readonly billing = new BillingMeter();
  /** The user accepted the billing notice in this session. */
  billingConfirmed = false;
  /** The key's quota, as the gateway tells it (when it does). */
  readonly quota: QuotaWatcher;
  private client?: HttpClient;
  /** One per window and kept across clients (a settings change makes a new one): all front ends queue together. */
  private readonly keyQueue = new KeyQueue();
  private settingsCache?: Settings;
  private catalogTimer?: ReturnType<typeof setInterval>;
  private readonly disposables: vscode.Disposable[] = [];
  private overrideCheck: ReturnType<typeof setTimeout> | undefined;
  private readonly announcedBases = new Set<string>();
  private readonly settingsChanged = new vscode.EventEmitter<void>();
  /** Workspace values of user-only settings, announced once each and never used. */
  readonly overrides: WorkspaceOverrides;
  readonly onDidChangeSettings = this.settingsChanged.event;

  constructor(
    readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {
    this.keys = new KeyStore(context.secrets, context.globalStorageUri.fsPath);
    this.refusals = refusedProtocolStore(
      context,
      () => {
        try {
          return this.http().endpoints.origin;
        } catch {
          return '';
        }
      },
      (line) => log.warn(line),
    );
    this.overrides = new WorkspaceOverrides(log);
    this.registry = new ModelRegistry({
      http: () => this.http(),
      catalogUrl: () => this.settings().catalogUrl,
      store: new FileCatalogStore(path.join(context.globalStorageUri.fsPath, 'catalog.json')),
      keyLists: new FileKeyListMemory(path.join(context.globalStorageUri.fsPath, 'keyModels.json')),
      keys: () => this.usableKeys(),
      modelChoices: () => this.keys.modelChoices(),
      refused: this.refusals,
    });
    this.quota = new QuotaWatcher({
      http: () => this.http(),
      keys: () => this.usableKeys(),
      keyOf: async (req) => (await this.keyEntryFor(req))?.id,
      log,
    });
    this.disposables.push(
      this.keys,
      this.overrides,
      this.quota,
      this.keys.onDidChange(() => this.quota.reset()),
      this.registry.onDidChange((snap) => this.quota.modelsRead(snap)),
      this.settingsChanged,
      // Subscribed before any view, so the registry is stale before they ask it to refresh.
      this.keys.onDidChange(() => this.registry.invalidate()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!affectsGateway(e)) return;
        // The figures may belong to another gateway now; they are read again with the models.
        this.quota.reset();
        this.registry.invalidate();
        this.settingsCache = undefined;
        void this.client?.close();
        this.client = undefined;
        this.restartCatalogTimer();
        this.settingsChanged.fire();
      }),
    );
  }

  settings(): Settings {
    if (!this.settingsCache) {
      const read = readHostSettings();
      for (const problem of read.problems) {
        this.log.warn(problem);
        void vscode.window.showWarningMessage(problem);
      }
      this.settingsCache = read.settings;
      // Not in the caller's task (activation's, often): the check inspects every user-only key in
      // every scope and reads the workspace's settings files.
      clearTimeout(this.overrideCheck);
      this.overrideCheck = setTimeout(() => void this.checkOverrides(), 0);
    }
    return this.settingsCache;
  }

  /**
   * Tells the user (once per setting and value) about workspace values of user-only settings,
   * which are never used. Settles when every notice of the current files has been given.
   */
  checkOverrides(): Promise<void> {
    return this.overrides
      .check()
      .catch((err: unknown) =>
        this.log.warn(`Looking for workspace values of user-only settings failed: ${String(err)}`),
      );
  }

  /** The normalised base address; tells the user once what was changed in what they typed. */
  base(): NormalisedBase {
    const raw = this.settings().baseUrl;
    if (!raw.trim()) {
      throw new GatewayError(
        'badRequest',
        words(
          'No gateway base address is set. Set "modelGateway.baseUrl" to the address from the console, e.g. https://gateway.example.com.',
        ),
      );
    }
    const base = normaliseBaseUrl(raw);
    if (base.changes.length && !this.announcedBases.has(raw)) {
      this.announcedBases.add(raw);
      const message = vscode.l10n.t(
        'Model Gateway uses the base address {0} ({1}).',
        base.base,
        base.changes.join('; '),
      );
      this.log.info(message);
      void vscode.window.showInformationMessage(message, vscode.l10n.t('Update Setting')).then((choice) => {
        if (choice)
          void vscode.workspace
            .getConfiguration(SECTION)
            .update('baseUrl', base.base, vscode.ConfigurationTarget.Global);
      });
    }
    return base;
  }

  http(): HttpClient {
    if (!this.client) {
      const settings = this.settings();
      // The client's code is dist/http.js, read on the first request (see esbuild.js), not at activation.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose, see above
      const { HttpClient } = require('../core/http') as typeof import('../core/http');
      this.client = new HttpClient({
        endpoints: new Endpoints(this.base().base),
        getKey: (req) => this.requestKey(req),
        timeouts: timeoutsFrom(settings),
        proxy: readProxySettings(settings.proxy, (line) => this.log.warn(line)),
        trust: readTrustSettings(settings),
        userAgent: `model-gateway-vscode/${this.context.extension.packageJSON.version as string} vscode/${vscode.version}`,
        log: (line) => this.log.info(line),
        afterBillableCall: () => this.quota.afterBilledCall(),
        quotaNote: (req) => this.quota.refusalNote(req),
        keyQueue: this.keyQueue,
      });
    }
    return this.client;
  }

  /** The keys that have their secret (one removed in another window may still be named for a moment). */
  private async usableKeys(): Promise<KeyEntry[]> {
    const keys = await this.keys.list();
    const has = await Promise.all(keys.map(async (k) => (await this.keys.secret(k.id)) !== undefined));
    return keys.filter((_, i) => has[i]);
  }

  /** The key a request goes with (see core/keys.ts keyForRequest). */
  async keyEntryFor(req: Pick<HttpRequest, 'key' | 'model'>): Promise<KeyEntry | undefined> {
    return keyForRequest(await this.keys.list(), req, (model) => this.registry.find(model)?.keyId);
  }

  private async requestKey(req: Pick<HttpRequest, 'key' | 'model'>): Promise<RequestKey | undefined> {
    const entry = await this.keyEntryFor(req);
    const secret = entry && (await this.keys.secret(entry.id));
    if (!entry || secret === undefined) return undefined;
    // With one key its name says nothing the message does not; with several it tells which one was refused.
    return (await this.keys.list()).length > 1 ? { id: entry.id, secret, name: entry.name } : { id: entry.id, secret };
  }

  /** Starts the slow catalog timer the first time models are needed; never on activation. */
  ensureCatalogTimer(): void {
    if (!this.catalogTimer) this.restartCatalogTimer(true);
  }

  private restartCatalogTimer(force = false): void {
    if (!this.catalogTimer && !force) return;
    if (this.catalogTimer) clearInterval(this.catalogTimer);
    this.catalogTimer = undefined;
    const hours = this.settings().catalogRefreshHours;
    if (hours > 0) {
      this.catalogTimer = setInterval(
        () => {
          this.registry
            .refresh()
            .catch((err: unknown) => this.log.warn(`Scheduled model refresh failed: ${String(err)}`));
        },
        hours * 3600 * 1000,
      );
    }
  }

  dispose(): void {
    if (this.catalogTimer) clearInterval(this.catalogTimer);
    clearTimeout(this.overrideCheck);
    void this.client?.close();
    for (const d of this.disposables) d.dispose();
  }
}
