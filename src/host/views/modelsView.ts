import * as vscode from 'vscode';
import { formatAge } from '../../core/connection';
import type { ModelInfo, ModelKind } from '../../core/models/types';
import { PROTOCOL_LABELS } from '../../shared/protocol';
import type { Services } from '../services';

type Node = { type: 'kind'; kind: ModelKind; models: ModelInfo[] } | { type: 'model'; model: ModelInfo } | { type: 'notice'; label: string; detail?: string; icon: string; command?: vscode.Command };

const KIND_LABELS: Record<ModelKind, string> = { chat: 'Chat', image: 'Image', video: 'Video', tool: 'Tools' };
const KIND_ICONS: Record<ModelKind, string> = { chat: 'comment-discussion', image: 'file-media', video: 'device-camera-video', tool: 'tools' };

/** The sidebar's Models view: grouped by kind, with protocol badges and availability. */
export class ModelsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];
  private loading = false;
  private attempted = false;
  /** Why the last load failed before any model could be listed (e.g. no base address). */
  private failure?: string;

  constructor(private readonly services: Services) {
    // A key or settings change reloads the list only once the view has been shown: setting a
    // key alone calls no network.
    this.subscriptions = [
      services.registry.onDidChange(() => this.changed.fire(undefined)),
      services.keys.onDidChange(() => this.attempted && void this.reload()),
      services.onDidChangeSettings(() => this.attempted && void this.reload()),
    ];
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
    if (node.type === 'kind') {
      const available = node.models.filter((m) => m.available).length;
      const known = this.services.registry.snapshot.keyModels !== undefined;
      const item = new vscode.TreeItem(KIND_LABELS[node.kind], node.kind === 'chat' ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `kind:${node.kind}`;
      item.description = known ? `${available} available${node.models.length > available ? `, ${node.models.length - available} not for this key` : ''}` : `${node.models.length} in the catalog`;
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
    item.id = `model:${m.id}`;
    const badges = m.protocols.map((p) => PROTOCOL_LABELS[p]).join(' · ');
    // Without the key's own list (no key, refused, offline) availability is unknown, not "no".
    const known = this.services.registry.snapshot.keyModels !== undefined;
    const state = m.available ? 'available' : known ? 'not available to this key' : 'availability unknown';
    item.description = m.available ? [badges, m.provider].filter(Boolean).join(' — ') : state;
    item.iconPath = new vscode.ThemeIcon(m.available ? KIND_ICONS[m.kind] : known ? 'circle-slash' : 'question');
    item.contextValue = m.available ? `model.${m.kind}` : 'model.unavailable';
    item.tooltip = tooltipFor(m, known);
    item.accessibilityInformation = { label: `${m.id}, ${KIND_LABELS[m.kind]} model, ${m.available ? `available, ${badges || 'no chat protocol'}` : state}` };
    return item;
  }

  getChildren(node?: Node): Node[] {
    if (node?.type === 'kind') return [...node.models].sort((a, b) => a.id.localeCompare(b.id)).map((model) => ({ type: 'model', model }));
    if (node) return [];
    const snap = this.services.registry.snapshot;
    const notices: Node[] = [];
    if (this.failure) {
      notices.push({ type: 'notice', label: 'Models could not be loaded', detail: this.failure, icon: 'warning', command: { command: 'modelGateway.openSettings', title: 'Open Settings' } });
    }
    if (snap.updatedAt === 0) {
      if (!this.loading && !this.attempted) void this.reload();
      return notices;
    }
    if (snap.keyError && snap.keyError.kind !== 'cancelled') {
      notices.push({ type: 'notice', label: snap.keyError.kind === 'auth' ? 'Key missing or refused' : 'Could not list models', detail: snap.keyError.message, icon: 'warning', command: snap.keyError.kind === 'auth' ? { command: 'modelGateway.setApiKey', title: 'Set API Key' } : { command: 'modelGateway.checkConnection', title: 'Check Connection' } });
    }
    if (snap.catalogError) notices.push({ type: 'notice', label: 'Catalog unavailable', detail: snap.catalogError.message, icon: 'warning', command: { command: 'modelGateway.refreshCatalog', title: 'Refresh Catalog' } });
    else if (snap.catalog?.problem) notices.push({ type: 'notice', label: `Catalog from offline cache (${formatAge(Math.round((Date.now() - snap.catalog.fetchedAt) / 1000))} old)`, detail: snap.catalog.problem.message, icon: 'cloud-download' });
    const kinds: ModelKind[] = ['chat', 'image', 'video', 'tool'];
    const groups: Node[] = kinds.map((kind) => ({ type: 'kind' as const, kind, models: snap.models.filter((m) => m.kind === kind) })).filter((g) => g.models.length > 0);
    return [...notices, ...groups];
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
  }
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
  text(`Kind: ${KIND_LABELS[m.kind]} · Provider: ${m.provider}`);
  md.appendMarkdown('\n\n');
  if (m.protocols.length) {
    const source = { gateway: "the gateway's endpoint types", catalog: 'the catalog', fallback: 'the default (Chat Completions is every provider\'s entry)', none: '' }[m.protocolSource];
    text(`Protocols: ${m.protocols.map((p) => PROTOCOL_LABELS[p]).join(', ')} (from ${source})`);
    md.appendMarkdown('\n\n');
  }
  if (m.available) md.appendMarkdown('Available to this key.');
  else if (known) md.appendMarkdown('Listed in the catalog but **not available to this key**: an administrator must grant it to the key\'s group.');
  else md.appendMarkdown('Listed in the catalog. Whether this key may use it is unknown until the gateway lists the key\'s models.');
  const c = m.catalog;
  const lines: string[] = [];
  if (c?.contextWindow) lines.push(`Context: ${c.contextWindow.toLocaleString()} tokens`);
  if (c?.inputModalities?.length) lines.push(`Input: ${c.inputModalities.join(', ')}`);
  if (c?.video?.sizes?.length) lines.push(`Sizes: ${c.video.sizes.join(', ')}`);
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
