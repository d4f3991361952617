import * as vscode from 'vscode';
import { formatAmount, formatDuration, formatNumber, formatWhen } from '../shared/format';
import type { RegistrySnapshot } from '../core/models/modelRegistry';
import { quotaLine, quotaShort } from '../core/quota';
import type { BillingMeter, ChatTokenFigures, MediaFigures } from '../core/tools/billing';
import { quotaDisplay } from './quota';
import type { Services } from './services';

/**
 * Shows whether a key is set (masked) and whether the gateway answered the last time it was asked.
 * It never calls the network itself: reachability comes from the model refreshes that run anyway.
 */
export class GatewayStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    'modelGateway.status',
    vscode.StatusBarAlignment.Right,
    100,
  );
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly services: Services) {
    this.item.name = vscode.l10n.t('Model Gateway');
    this.subscriptions = [
      services.keys.onDidChange(() => void this.update()),
      services.registry.onDidChange(() => void this.update()),
      services.onDidChangeSettings(() => void this.update()),
      services.billing.onDidChange(() => void this.update()),
      services.quota.onDidChange(() => void this.update()),
    ];
    void this.update();
    this.item.show();
  }

  async update(): Promise<void> {
    const masked = await this.services.keys.masked();
    const snap: RegistrySnapshot = this.services.registry.snapshot;
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.appendMarkdown(`**${vscode.l10n.t('Model Gateway')}**\n\n`);
    // Without a key there is no connection to check: the click goes where the fix is. With one, the
    // click opens the report itself (at the top of the window): a notice offering it would open
    // under the pointer, where this item's tooltip covers its buttons.
    this.item.command = masked
      ? {
          command: 'modelGateway.checkConnection',
          title: vscode.l10n.t('Check Connection'),
          arguments: [{ report: true }],
        }
      : 'modelGateway.setApiKey';
    if (!masked) {
      this.item.text = `$(key) ${vscode.l10n.t('Gateway: no key')}`;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
      tooltip.appendMarkdown(vscode.l10n.t('No API key is set. Run **Model Gateway: Set API Key**.'));
    } else {
      this.item.backgroundColor = undefined;
      const err = snap.keyError;
      if (snap.updatedAt === 0) {
        this.item.text = `$(key) ${vscode.l10n.t('Gateway {0}', masked)}`;
        tooltip.appendMarkdown(vscode.l10n.t('Key {0} is set; the gateway has not been asked yet.', masked));
      } else if (snap.keyModels) {
        this.item.text = `$(check) ${vscode.l10n.t('Gateway {0}', masked)}`;
        tooltip.appendMarkdown(
          vscode.l10n.t(
            'Key {0} accepted; {1} models available. Last checked {2}.',
            masked,
            formatNumber(snap.keyModels.length),
            formatWhen(snap.updatedAt),
          ),
        );
      } else if (err?.kind === 'auth' && err.status !== undefined) {
        this.item.text = `$(error) ${vscode.l10n.t('Gateway {0}', masked)}`;
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        tooltip.appendMarkdown(`${vscode.l10n.t('The gateway refused key {0}.', masked)} ${escape(err.message)}`);
      } else {
        this.item.text = `$(debug-disconnect) ${vscode.l10n.t('Gateway {0}', masked)}`;
        tooltip.appendMarkdown(`${vscode.l10n.t('The gateway could not be reached.')} ${escape(err?.message ?? '')}`);
      }
    }
    // The key's quota, only while the gateway accepts the key (the figures of a refused key are stale).
    const quota = masked && snap.keyModels ? this.services.quota.current : undefined;
    const perKey = masked && snap.keyModels && (snap.keyLists?.length ?? 0) > 1 ? this.services.quota.all() : [];
    // With several keys, each key's quota under its name; the status bar text keeps the first key's.
    if (perKey.length)
      for (const { key, quota: q } of perKey) tooltip.appendMarkdown(`\n\n${escape(quotaLine(q, key.name))}`);
    else if (quota) tooltip.appendMarkdown(`\n\n${escape(quotaLine(quota))}`);
    if (quota && quotaDisplay() === 'statusBar') this.item.text += ` · ${quotaShort(quota)}`;
    const figures = sessionFigures(this.services.billing);
    if (figures.length) tooltip.appendMarkdown(`\n\n${vscode.l10n.t('This session: {0}.', figures.join('; '))}`);
    const completions = completionFigures(this.services.billing);
    if (completions) tooltip.appendMarkdown(`\n\n${escape(completions)}`);
    tooltip.appendMarkdown(
      `\n\n${masked ? vscode.l10n.t('Click to check the connection and see the report.') : vscode.l10n.t('Click to set an API key.')}`,
    );
    this.item.tooltip = tooltip;
  }

  /** What the item shows now: its text and its tooltip's markdown (for "Refresh Key Quota"'s result). */
  shown(): { text: string; tooltip: string } {
    const tooltip = this.item.tooltip;
    return { text: this.item.text, tooltip: typeof tooltip === 'string' ? tooltip : (tooltip?.value ?? '') };
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}

/** The session's figures as tooltip phrases: billed tool calls, generated images and videos, and the tokens of the sidebar chat and of VS Code's own chat. */
export function sessionFigures(billing: BillingMeter): string[] {
  const figures: string[] = [];
  if (billing.calls > 0) {
    const usd = formatAmount(billing.usd);
    figures.push(
      billing.calls === 1
        ? vscode.l10n.t('1 billed tool call, about US${0}', usd)
        : vscode.l10n.t('{0} billed tool calls, about US${1}', formatNumber(billing.calls), usd),
    );
  }
  figures.push(...mediaFigures(billing.media));
  const side = billing.sidebarChatTokens;
  if (side.answers > 0) {
    const tokens = [formatNumber(side.inputTokens), formatNumber(side.outputTokens)] as const;
    figures.push(
      side.answers === 1
        ? vscode.l10n.t('1 answer in the sidebar chat, {0} input and {1} output tokens', ...tokens)
        : vscode.l10n.t(
            '{0} answers in the sidebar chat, {1} input and {2} output tokens',
            formatNumber(side.answers),
            ...tokens,
          ),
    );
  }
  const t = billing.chatTokens;
  if (t.answers > 0) {
    const tokens = [formatNumber(t.inputTokens), formatNumber(t.outputTokens)] as const;
    figures.push(
      t.answers === 1
        ? vscode.l10n.t("1 answer in VS Code's chat, {0} input and {1} output tokens", ...tokens)
        : vscode.l10n.t(
            "{0} answers in VS Code's chat, {1} input and {2} output tokens",
            formatNumber(t.answers),
            ...tokens,
          ),
    );
  }
  figures.push(...cacheFigures(side, t));
  return figures;
}

/**
 * What the chats read from the upstreams' prompt caches, and what their tokens cost at the
 * catalog's prices: the cache price where the catalog has one, else the input price (new-api gives
 * a model without a cache ratio no discount), and it says so.
 */
export function cacheFigures(sidebar: ChatTokenFigures, vscodeChat: ChatTokenFigures): string[] {
  const figures: string[] = [];
  if (sidebar.cachedInputTokens > 0)
    figures.push(
      vscode.l10n.t(
        "{0} of the sidebar chat's input tokens came from the prompt cache",
        formatNumber(sidebar.cachedInputTokens),
      ),
    );
  if (vscodeChat.cachedInputTokens > 0)
    figures.push(
      vscode.l10n.t(
        "{0} of VS Code's chat's input tokens came from the prompt cache",
        formatNumber(vscodeChat.cachedInputTokens),
      ),
    );
  const priced = sidebar.answers + vscodeChat.answers - sidebar.unpricedAnswers - vscodeChat.unpricedAnswers;
  if (priced > 0) {
    const usd = formatAmount(sidebar.estimatedUsd + vscodeChat.estimatedUsd);
    figures.push(vscode.l10n.t("Chat tokens: about US${0} at the catalog's prices", usd));
    const cacheUnknown = sidebar.cacheUnpricedAnswers + vscodeChat.cacheUnpricedAnswers;
    if (cacheUnknown > 0)
      figures.push(
        vscode.l10n.t(
          'The cache price of {0} answers is unknown: their cached tokens are counted at the input price',
          formatNumber(cacheUnknown),
        ),
      );
  }
  const unpriced = sidebar.unpricedAnswers + vscodeChat.unpricedAnswers;
  if (unpriced > 0 && priced > 0)
    figures.push(
      vscode.l10n.t('{0} answers have no price in the catalog and are not in the amount', formatNumber(unpriced)),
    );
  return figures;
}

/** The session's inline completions, a line of their own: how many and what they cost. */
export function completionFigures(billing: BillingMeter): string | undefined {
  const c = billing.completions;
  if (c.count === 0) return undefined;
  const usd = formatNumber(c.usd, 4);
  const line =
    c.count === 1
      ? vscode.l10n.t('Code completion this session: 1 request, about US${0}', usd)
      : vscode.l10n.t('Code completion this session: {0} requests, about US${1}', formatNumber(c.count), usd);
  return c.unpriced > 0
    ? `${line} ${vscode.l10n.t('({0} at a price not known here)', formatNumber(c.unpriced))}`
    : line;
}

/**
 * Generated images and videos. No price is known for them (each model has its own, set by the
 * gateway), so they are not in the amount; videos are counted by what they are billed by: seconds
 * at each resolution tier.
 */
export function mediaFigures(media: MediaFigures): string[] {
  const figures: string[] = [];
  if (media.images > 0) {
    figures.push(
      media.images === 1
        ? vscode.l10n.t('1 image generated (priced per model; not in the amount)')
        : vscode.l10n.t('{0} images generated (priced per model; not in the amount)', formatNumber(media.images)),
    );
  }
  if (media.videos > 0) {
    const tiers = ['480P', '720P', '1080P', 'other']
      .filter((tier) => (media.videoSeconds[tier] ?? 0) > 0)
      .map((tier) =>
        tier === 'other'
          ? vscode.l10n.t('{0} at another resolution', formatDuration((media.videoSeconds[tier] ?? 0) * 1000))
          : vscode.l10n.t('{0} at {1}', formatDuration((media.videoSeconds[tier] ?? 0) * 1000), tier),
      );
    const detail = tiers.join(', ');
    figures.push(
      media.videos === 1
        ? vscode.l10n.t(
            '1 video task, {0} (billed per model by duration and resolution; no price is known here, so not in the amount)',
            detail,
          )
        : vscode.l10n.t(
            '{0} video tasks, {1} (billed per model by duration and resolution; no price is known here, so not in the amount)',
            formatNumber(media.videos),
            detail,
          ),
    );
  }
  if (media.failedVideos > 0) {
    figures.push(
      media.failedVideos === 1
        ? vscode.l10n.t("1 video task failed (left out: the gateway may refund it; the key's quota says)")
        : vscode.l10n.t(
            "{0} video tasks failed (left out: the gateway may refund them; the key's quota says)",
            formatNumber(media.failedVideos),
          ),
    );
  }
  return figures;
}

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}
