import * as vscode from 'vscode';
import type { CompletionSwitch } from './switch';

/** What the provider reports for the status item: working, waiting for the gateway, paused, failed. */
export type CompletionActivity =
  | { state: 'idle' }
  | { state: 'waiting' }
  | { state: 'paused'; until: number; reason: string }
  | { state: 'error'; message: string };

/**
 * The completion status item once the features run: on / off / snoozed / the model, and what the
 * last request did (waiting for the gateway, paused after a 429 until when, the last error), with
 * a tooltip saying it. A snooze or a pause ends by itself, and the item says so when it does.
 */
export class CompletionStatusView implements vscode.Disposable {
  private activity: CompletionActivity = { state: 'idle' };
  private wake?: ReturnType<typeof setTimeout>;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly completions: CompletionSwitch) {
    completions.draw = () => this.draw();
    // A changed setting starts afresh: an old error says nothing about the new model.
    this.subscription = completions.onDidChange(() => (this.activity = { state: 'idle' }));
    this.draw();
  }

  report(activity: CompletionActivity): void {
    if (JSON.stringify(activity) === JSON.stringify(this.activity)) return;
    this.activity = activity;
    this.draw();
  }

  get current(): CompletionActivity {
    return this.activity;
  }

  private draw(): void {
    const s = this.completions.settings();
    const snoozedUntil = this.completions.snoozedUntil;
    const snoozed = snoozedUntil > Date.now();
    const a = this.activity;
    const time = (ms: number) =>
      new Date(ms).toLocaleTimeString(vscode.env.language, { hour: '2-digit', minute: '2-digit' });
    let text: string;
    let tip: string;
    if (!s.enabled || !s.model) {
      text = `$(circle-slash) ${vscode.l10n.t('Completion off')}`;
      tip = vscode.l10n.t('Code completion through the gateway is off. Click to turn it on or choose its model.');
    } else if (snoozed) {
      text = `$(clock) ${vscode.l10n.t('Completion snoozed')}`;
      tip = vscode.l10n.t('Code completion with {0} is snoozed until {1}.', s.model, time(snoozedUntil));
    } else if (a.state === 'waiting') {
      text = `$(loading~spin) ${s.model}`;
      tip = vscode.l10n.t('Waiting for the gateway to complete with {0}.', s.model);
    } else if (a.state === 'paused') {
      text = `$(debug-pause) ${s.model}`;
      tip = vscode.l10n.t('Code completion with {0} is paused until {1}: {2}', s.model, time(a.until), a.reason);
    } else if (a.state === 'error') {
      text = `$(warning) ${s.model}`;
      tip = vscode.l10n.t('The last completion with {0} failed: {1}', s.model, a.message);
    } else {
      text = `$(sparkle) ${s.model}`;
      tip = vscode.l10n.t('Code completion with {0} is on.', s.model);
    }
    const item = this.completions.item;
    item.text = text;
    item.tooltip = `${tip}\n${vscode.l10n.t('Click for the completion menu (on/off, snooze, model, languages).')}`;
    clearTimeout(this.wake);
    const until = snoozed ? snoozedUntil : a.state === 'paused' ? a.until : 0;
    if (until)
      this.wake = setTimeout(
        () => {
          if (this.activity.state === 'paused' && this.activity.until <= Date.now()) this.activity = { state: 'idle' };
          this.draw();
        },
        Math.max(0, until - Date.now()) + 50,
      );
  }

  dispose(): void {
    clearTimeout(this.wake);
    this.subscription.dispose();
  }
}
