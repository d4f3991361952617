import * as vscode from 'vscode';
import { completesNow, readCompletionSettings, type CompletionSettings } from '../../core/completion/settings';
import { SECTION } from '../settings';

/**
 * What activation holds of inline completion: the settings, the snooze, the status bar item and a
 * provider that forwards to the features (host/completion/service.ts) only while completion is on.
 * Off, a call returns at once and loads nothing, so nothing is sent and activation stays small.
 */

export const COMPLETIONS = `${SECTION}.completions`;
const SNOOZE_KEY = 'completions.snoozedUntil';
export const SNOOZE_MS = 3600 * 1000;

/**
 * The switch and its status bar item. At activation the item says only off, snoozed or on with the
 * model; once the features run, they draw it (host/completion/statusView.ts: waiting for the
 * gateway, paused after a 429, the last error) through `draw`.
 */
export class CompletionSwitch implements vscode.Disposable {
  private cached?: CompletionSettings;
  readonly item = vscode.window.createStatusBarItem('modelGateway.completions', vscode.StatusBarAlignment.Right, 99);
  private readonly changed = new vscode.EventEmitter<void>();
  /** The settings or the snooze changed. */
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[];
  /** Draws the item; replaced by the features' richer view once they are loaded. */
  draw: () => void = () => this.drawPlain();

  constructor(private readonly state: vscode.Memento) {
    this.item.name = vscode.l10n.t('Model Gateway: code completion');
    this.item.command = 'modelGateway.completionMenu';
    this.subscriptions = [
      this.changed,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration(COMPLETIONS)) return;
        this.cached = undefined;
        this.refresh();
      }),
    ];
    this.refresh();
    this.item.show();
  }

  settings(): CompletionSettings {
    if (!this.cached) {
      const config = vscode.workspace.getConfiguration(COMPLETIONS);
      const read = readCompletionSettings((key) => config.get(key));
      for (const key of read.problems)
        void vscode.window.showWarningMessage(
          vscode.l10n.t('The setting {0} has a value of the wrong type; its default is used.', key),
        );
      this.cached = read.settings;
    }
    return this.cached;
  }

  get snoozedUntil(): number {
    return this.state.get<number>(SNOOZE_KEY) ?? 0;
  }

  async snooze(until: number): Promise<void> {
    await this.state.update(SNOOZE_KEY, until > Date.now() ? until : undefined);
    this.refresh();
  }

  /** Whether a completion may be asked for in a document of this language now. */
  on(language: string): boolean {
    return completesNow(this.settings(), language, this.snoozedUntil, Date.now());
  }

  /** The item's text and tooltip now (for tests and the menu). */
  shown(): { text: string; tooltip: string } {
    const t = this.item.tooltip;
    return { text: this.item.text, tooltip: typeof t === 'string' ? t : (t?.value ?? '') };
  }

  private refresh(): void {
    this.draw();
    this.changed.fire();
  }

  private drawPlain(): void {
    const s = this.settings();
    if (!s.enabled || !s.model) this.item.text = `$(circle-slash) ${vscode.l10n.t('Completion off')}`;
    else if (this.snoozedUntil > Date.now()) this.item.text = `$(clock) ${vscode.l10n.t('Completion snoozed')}`;
    else this.item.text = `$(sparkle) ${s.model}`;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}

/** The provider VS Code calls as the user types; it reaches the features only while completion is on. */
export interface InlineCompletionFeature {
  provide(
    document: vscode.TextDocument,
    position: vscode.Position,
    context: vscode.InlineCompletionContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.InlineCompletionItem[] | undefined>;
}

export function registerCompletionForwarder(
  completions: CompletionSwitch,
  feature: () => InlineCompletionFeature,
): vscode.Disposable {
  return vscode.languages.registerInlineCompletionItemProvider(
    { pattern: '**' },
    {
      provideInlineCompletionItems: (document, position, context, token) =>
        completions.on(document.languageId) ? feature().provide(document, position, context, token) : undefined,
    },
  );
}
