import * as vscode from 'vscode';
import { guessedPath } from '../../core/completion/paths';
import type { KeyListing } from '../../core/models/modelRegistry';
import { modalityName } from '../../core/models/modalityNames';
import { providerName } from '../../core/models/providerNames';
import type { ModelInfo, ModelKind } from '../../core/models/types';
import { quotaShort } from '../../core/quota';
import { formatAge, formatNumber } from '../../shared/format';
import { PROTOCOL_LABELS } from '../../shared/protocolNames';
import type { Services } from '../services';

/** With several keys the view is grouped by key first: `keyId` says under which key a kind or a model is shown. */
type Node =
  | { type: 'key'; listing: KeyListing; masked: string }
  | { type: 'kind'; kind: ModelKind; models: ModelInfo[]; keyId?: string }
  | { type: 'model'; model: ModelInfo; keyId?: string }
  | { type: 'notice'; label: string; detail?: string; icon: string; command?: vscode.Command };

/** A function, not a constant: the display language's bundle is read when the view renders. */
function kindLabel(kind: ModelKind): string {
  switch (kind) {
    case 'chat':
      return vscode.l10n.t('Chat');
    case 'image':
      return vscode.l10n.t('Image');
    case 'video':
      return vscode.l10n.t('Video');
    case 'tool':
      return vscode.l10n.t('Tools');
    case 'other':
      return vscode.l10n.t('Other (not for chat)');
  }
}
const KIND_ICONS: Record<ModelKind, string> = {
  chat: 'comment-discussion',
  image: 'file-media',
  video: 'device-camera-video',
  tool: 'tools',
  other: 'symbol-misc',
};

/** The sidebar's Models view: grouped by kind, with protocol badges and availability. */
export class ModelsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];
  private loading = false;
  private attempted = false;
  /** Why the last load failed before any model could be listed (e.g. no base address). */
  private failure?: string;
  /** The view itself, whose header (beside the title) shows the key's quota. */
  private header?: { description?: string };

  constructor(private readonly services: Services) {
    // A key or settings change reloads the list only once the view has been shown: setting a
    // key alone calls no network.
    this.subscriptions = [
      services.registry.onDidChange(() => {
        this.changed.fire(undefined);
        this.updateHeader();
      }),
      // The root also depends on whether an address and a key are set (welcome content if not).
      services.keys.onDidChange(() => this.setupChanged()),
      services.onDidChangeSettings(() => this.setupChanged()),
      services.quota.onDidChange(() => {
        this.updateHeader();
        // With several keys each key's node shows its own quota.
        if ((services.registry.snapshot.keyLists?.length ?? 0) > 1) this.changed.fire(undefined);
      }),
    ];
  }

  private setupChanged(): void {
    this.changed.fire(undefined);
    if (this.attempted) void this.reload();
  }

  /** Shows the key's quota in the view's header from now on. */
  showHeaderIn(view: { description?: string }): void {
    this.header = view;
    this.updateHeader();
  }

  updateHeader(): void {
    if (!this.header) return;
    const quota = this.services.quota.current;
    // With several keys each key's row has its own quota; the header names whose it shows (the first key's).
    const [first, ...others] = this.services.quota.all();
    const short =
      quota &&
      (others.length && first ? vscode.l10n.t('Key "{0}": {1}', first.key.name, quotaShort(quota)) : quotaShort(quota));
    this.header.description = quota && this.services.registry.snapshot.keyModels ? short : undefined;
  }

  /** What the header shows beside the title, if anything. */
  get headerText(): string | undefined {
    return this.header?.description;
  }

  async reload(): Promise<void> {
    if (this.loading) return;
    this.loading = true;
    this.attempted = true;
    const before = this.failure;
    try {
      this.services.ensureCatalogTimer();
      await this.services.registry.refresh();
      this.failure = undefined;
    } catch (err) {
      this.failure = err instanceof Error ? err.message : String(err);
      this.services.log.warn(`Model refresh failed: ${this.failure}`);
    } finally {
      this.loading = false;
      // New data re-renders the tree through the registry's own event; a redundant refresh
      // would only reset the user's keyboard focus in the tree.
      if (this.failure !== before) this.changed.fire(undefined);
    }
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.type === 'key') return this.keyItem(node.listing, node.masked);
    if (node.type === 'kind') {
      const available = node.models.filter((m) => m.available).length;
      const known = this.services.registry.snapshot.keyModels !== undefined;
      const item = new vscode.TreeItem(
        kindLabel(node.kind),
        node.kind === 'chat' ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
      );
      item.id = node.keyId === undefined ? `kind:${node.kind}` : `key:${node.keyId}:kind:${node.kind}`;
      const missing = node.models.length - available;
      item.description = !known
        ? vscode.l10n.t('{0} in the catalog', formatNumber(node.models.length))
        : missing > 0
          ? vscode.l10n.t('{0} available, {1} not for this key', formatNumber(available), formatNumber(missing))
          : vscode.l10n.t('{0} available', formatNumber(available));
      item.iconPath = new vscode.ThemeIcon(KIND_ICONS[node.kind]);
      item.contextValue = 'modelKind';
      return item;
    }
    if (node.type === 'notice') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
      item.tooltip = node.detail ?? node.label;
      item.iconPath = new vscode.ThemeIcon(node.icon);
      item.command = node.command;
      return item;
    }
    const m = node.model;
    const item = new vscode.TreeItem(m.id, vscode.TreeItemCollapsibleState.None);
    item.id = node.keyId === undefined ? `model:${m.id}` : `key:${node.keyId}:model:${m.id}`;
    const badges = m.protocols.map((p) => PROTOCOL_LABELS[p]).join(' · ');
    // Without the key's own list (no key, refused, offline) availability is unknown, not "no".
    const known = this.services.registry.snapshot.keyModels !== undefined;
    const state = m.available
      ? vscode.l10n.t('available')
      : known
        ? vscode.l10n.t('not available to this key')
        : vscode.l10n.t('availability unknown');
    // The provider first: a narrow view cuts a row's end, and the protocols are also in the tooltip.
    item.description = m.available
      ? [m.provider && providerName(m.provider), badges, this.calledWith(m, node.keyId)].filter(Boolean).join(' — ')
      : state;
    item.iconPath = new vscode.ThemeIcon(m.available ? KIND_ICONS[m.kind] : known ? 'circle-slash' : 'question');
    // `.keys`: several keys list the model, so the key it is called with can be picked.
    item.contextValue = m.available
      ? `model.${m.kind}${(m.keyIds?.length ?? 0) > 1 ? '.keys' : ''}`
      : 'model.unavailable';
    item.tooltip = tooltipFor(m, known);
    item.accessibilityInformation = {
      label: vscode.l10n.t(
        '{0}, {1} model, {2}',
        m.id,
        kindLabel(m.kind),
        m.available ? `${state}, ${badges || vscode.l10n.t('no chat protocol')}` : state,
      ),
    };
    return item;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node?.type === 'kind')
      return [...node.models]
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((model) => ({ type: 'model', model, keyId: node.keyId }));
    if (node?.type === 'key')
      return kindGroups(
        this.services.registry.snapshot.models.filter((m) => m.keyIds?.includes(node.listing.key.id)),
        node.listing.key.id,
      );
    if (node) return [];
    // Without an address or a key the view is empty, so VS Code shows the welcome content
    // (package.json viewsWelcome) that says what to set, with a button for it.
    if (!this.services.settings().baseUrl.trim() || !(await this.services.keys.has())) return [];
    const snap = this.services.registry.snapshot;
    const notices: Node[] = [];
    if (this.failure) {
      notices.push({
        type: 'notice',
        label: vscode.l10n.t('Models could not be loaded'),
        detail: this.failure,
        icon: 'warning',
        command: { command: 'modelGateway.openSettings', title: vscode.l10n.t('Open Settings') },
      });
    }
    if (snap.updatedAt === 0) {
      if (!this.loading && !this.attempted) void this.reload();
      return notices;
    }
    const lists = snap.keyLists ?? [];
    if (lists.length > 1) {
      // Grouped by key: each key's own models, then what no key lists (from the catalog), by kind.
      const masked = new Map((await this.services.keys.shown()).map((k) => [k.id, k.masked]));
      const keyNodes: Node[] = lists.map((listing) => ({
        type: 'key',
        listing,
        masked: masked.get(listing.key.id) ?? '',
      }));
      return [...notices, ...keyNodes, ...kindGroups(snap.models.filter((m) => !m.keyIds?.length))];
    }
    if (snap.keyError && snap.keyError.kind !== 'cancelled') {
      notices.push({
        type: 'notice',
        label:
          snap.keyError.kind === 'auth'
            ? vscode.l10n.t('Key missing or refused')
            : vscode.l10n.t('Could not list models'),
        detail: snap.keyError.message,
        icon: 'warning',
        command:
          snap.keyError.kind === 'auth'
            ? { command: 'modelGateway.setApiKey', title: vscode.l10n.t('Set API Key') }
            : { command: 'modelGateway.checkConnection', title: vscode.l10n.t('Check Connection') },
      });
    }
    if (snap.catalogError)
      notices.push({
        type: 'notice',
        label: vscode.l10n.t('Catalog unavailable'),
        detail: snap.catalogError.message,
        icon: 'warning',
        command: { command: 'modelGateway.refreshCatalog', title: vscode.l10n.t('Refresh Catalog') },
      });
    else if (snap.catalog?.problem)
      notices.push({
        type: 'notice',
        label: vscode.l10n.t(
          'Catalog from offline cache ({0} old)',
          formatAge(Math.round((Date.now() - snap.catalog.fetchedAt) / 1000)),
        ),
        detail: snap.catalog.problem.message,
        icon: 'cloud-download',
      });
    return [...notices, ...kindGroups(snap.models)];
  }

  /** A key's node: its name, its masked key, its quota, or why its list could not be read. */
  private keyItem(listing: KeyListing, masked: string): vscode.TreeItem {
    const { key, error, models } = listing;
    const item = new vscode.TreeItem(
      key.name,
      error ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Expanded,
    );
    item.id = `key:${key.id}`;
    const quota = this.services.quota.forKey(key.id);
    item.description = [
      masked,
      error ? vscode.l10n.t('refused or unreachable') : vscode.l10n.t('{0} models', formatNumber(models?.length ?? 0)),
      quota && quotaShort(quota),
    ]
      .filter(Boolean)
      .join(' — ');
    item.tooltip = error ? error.message : vscode.l10n.t('API key "{0}" ({1})', key.name, masked);
    // Read as the kind rows are (name, then description); a string tooltip would otherwise be the row's accessible label.
    item.accessibilityInformation = { label: `${key.name} ${String(item.description)}` };
    item.iconPath = new vscode.ThemeIcon(error ? 'warning' : 'key');
    item.contextValue = 'apiKey';
    return item;
  }

  /** Under a key, for a model that key lists but is called with another: which key it is called with. */
  private calledWith(m: ModelInfo, under: string | undefined): string | undefined {
    if (under === undefined || m.keyId === undefined || m.keyId === under) return undefined;
    const other = this.services.registry.snapshot.keyLists?.find((l) => l.key.id === m.keyId)?.key.name;
    return other === undefined ? undefined : vscode.l10n.t('called with "{0}"', other);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
  }
}

/** The models by kind, in the view's order of kinds, without empty kinds. */
function kindGroups(models: ModelInfo[], keyId?: string): Node[] {
  const kinds: ModelKind[] = ['chat', 'image', 'video', 'tool', 'other'];
  return kinds
    .map((kind) => ({ type: 'kind' as const, kind, keyId, models: models.filter((m) => m.kind === kind) }))
    .filter((g) => g.models.length > 0);
}

/**
 * Names, ids, providers and hints come from the catalog file or the gateway, so they are text, never
 * markdown: escaped (appendText), with command links and HTML off, so a crafted model name cannot
 * run a command or fake a link in the tooltip.
 */
function tooltipFor(m: ModelInfo, known: boolean): vscode.MarkdownString {
  const md = new vscode.MarkdownString(undefined, false);
  md.isTrusted = false;
  md.supportHtml = false;
  const text = (s: string) => md.appendText(oneLine(s));
  md.appendMarkdown('**');
  text(m.name);
  md.appendMarkdown('** (');
  text(m.id);
  md.appendMarkdown(')\n\n');
  // The readable name first; the gateway's own id beside it, for matching the console.
  const provider = providerName(m.provider);
  text(
    vscode.l10n.t(
      'Kind: {0} · Provider: {1}',
      kindLabel(m.kind),
      provider === m.provider ? provider : `${provider} (${m.provider})`,
    ),
  );
  md.appendMarkdown('\n\n');
  if (m.protocols.length) {
    const protocols = m.protocols.map((p) => PROTOCOL_LABELS[p]).join(', ');
    const from = {
      gateway: () => vscode.l10n.t("Protocols: {0} (from the gateway's endpoint types)", protocols),
      catalog: () => vscode.l10n.t('Protocols: {0} (from the catalog)', protocols),
      fallback: () =>
        vscode.l10n.t("Protocols: {0} (the default: Chat Completions is every provider's entry)", protocols),
      none: () => vscode.l10n.t('Protocols: {0}', protocols),
    }[m.protocolSource];
    text(from());
    md.appendMarkdown('\n\n');
  }
  if (m.kind === 'chat') {
    text(
      guessedPath(m.id) !== 'chat' && !m.fimRefused
        ? vscode.l10n.t('Code completion: fill-in-the-middle')
        : vscode.l10n.t('Code completion: over chat (slower)'),
    );
    md.appendMarkdown('\n\n');
  }
  if (m.available) md.appendMarkdown(vscode.l10n.t('Available to this key.'));
  else if (known)
    md.appendMarkdown(
      vscode.l10n.t(
        "Listed in the catalog but **not available to this key**: an administrator must grant it to the key's group.",
      ),
    );
  else
    md.appendMarkdown(
      vscode.l10n.t(
        "Listed in the catalog. Whether this key may use it is unknown until the gateway lists the key's models.",
      ),
    );
  const c = m.catalog;
  const lines: string[] = [];
  if (c?.contextWindow) lines.push(vscode.l10n.t('Context: {0} tokens', formatNumber(c.contextWindow)));
  if (c?.inputModalities?.length)
    lines.push(vscode.l10n.t('Input: {0}', c.inputModalities.map(modalityName).join(', ')));
  if (c?.video?.sizes?.length) lines.push(vscode.l10n.t('Sizes: {0}', c.video.sizes.join(', ')));
  for (const line of lines) {
    md.appendMarkdown('\n\n');
    text(line);
  }
  return md;
}

/** Line breaks in a name would start new markdown blocks that escaping inside a line cannot prevent. */
function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
