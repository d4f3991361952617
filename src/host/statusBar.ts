import * as vscode from 'vscode';
import type { RegistrySnapshot } from '../core/models/modelRegistry';
import type { BillingMeter } from '../core/tools/billing';
import type { Services } from './services';

/**
 * Shows whether a key is set (masked) and whether the gateway answered the last time it was asked.
 * It never calls the network itself: reachability comes from the model refreshes that run anyway.
 */
export class GatewayStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('modelGateway.status', vscode.StatusBarAlignment.Right, 100);
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly services: Services) {
    this.item.name = 'Model Gateway';
    this.item.command = 'modelGateway.checkConnection';
    this.subscriptions = [
      services.keys.onDidChange(() => void this.update()),
      services.registry.onDidChange(() => void this.update()),
      services.onDidChangeSettings(() => void this.update()),
      services.billing.onDidChange(() => void this.update()),
    ];
    void this.update();
    this.item.show();
  }

  async update(): Promise<void> {
    const masked = await this.services.keys.masked();
    const snap: RegistrySnapshot = this.services.registry.snapshot;
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.appendMarkdown('**Model Gateway**\n\n');
    if (!masked) {
      this.item.text = '$(key) Gateway: no key';
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
      tooltip.appendMarkdown('No API key is set. Run **Model Gateway: Set API Key**.');
    } else {
      this.item.backgroundColor = undefined;
      const err = snap.keyError;
      if (snap.updatedAt === 0) {
        this.item.text = `$(key) Gateway ${masked}`;
        tooltip.appendMarkdown(`Key ${masked} is set; the gateway has not been asked yet. Click to check the connection.`);
      } else if (snap.keyModels) {
        this.item.text = `$(check) Gateway ${masked}`;
        tooltip.appendMarkdown(`Key ${masked} accepted; ${snap.keyModels.length} models available. Last checked ${new Date(snap.updatedAt).toLocaleTimeString()}.`);
      } else if (err?.kind === 'auth' && err.status !== undefined) {
        this.item.text = `$(error) Gateway ${masked}`;
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        tooltip.appendMarkdown(`The gateway refused key ${masked}. ${escape(err.message)}`);
      } else {
        this.item.text = `$(debug-disconnect) Gateway ${masked}`;
        tooltip.appendMarkdown(`The gateway could not be reached. ${escape(err?.message ?? '')}`);
      }
    }
    const figures = sessionFigures(this.services.billing);
    if (figures.length) tooltip.appendMarkdown(`\n\nThis session: ${figures.join('; ')}.`);
    tooltip.appendMarkdown('\n\nClick to check the connection.');
    this.item.tooltip = tooltip;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}

/** The session's figures as tooltip phrases: billed tool calls, and the tokens of VS Code's own chat. */
export function sessionFigures(billing: BillingMeter): string[] {
  const figures: string[] = [];
  if (billing.calls > 0) figures.push(`${billing.calls} billed tool call${billing.calls === 1 ? '' : 's'}, about US$${billing.usd.toFixed(2)}`);
  const t = billing.chatTokens;
  if (t.answers > 0) {
    const n = (x: number) => x.toLocaleString('en-US');
    figures.push(`${n(t.answers)} answer${t.answers === 1 ? '' : 's'} in VS Code's chat, ${n(t.inputTokens)} input and ${n(t.outputTokens)} output tokens`);
  }
  return figures;
}

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&');
}
