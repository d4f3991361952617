import * as vscode from 'vscode';
import { completionCost } from '../../core/completion/cost';
import { requestCompletion, type CompletionAnswer, type CompletionRun } from '../../core/completion/engine';
import { finalCompletion } from '../../core/completion/filters';
import { buildPrompt, DEFAULT_PROMPT_BUDGET, type CompletionPrompt } from '../../core/completion/prompt';
import { ReuseCache } from '../../core/completion/reuse';
import { toEol } from '../../core/completion/window';
import { thinkingControl, thinkingRequest } from '../../core/chat/thinking';
import type { GatewayError } from '../../core/errors';
import type { Services } from '../services';
import { RecentFiles } from './recentFiles';
import { COMPLETIONS, type CompletionSwitch, type InlineCompletionFeature } from './switch';
import { CompletionStatusView } from './statusView';
import { TypingPause } from './typingPause';
import { WorkspaceRule } from './workspaceRule';

/** How long a multi-line completion may keep its first complete lines waiting for the rest. */
const SHOW_LINES_AFTER_MS = 600;
/** How long completion pauses after a 429 that names no Retry-After. */
const RATE_PAUSE_MS = 30_000;

/**
 * The inline completion provider: the typed-ahead reuse, an adaptive pause in typing, the prompt,
 * the request (the lowest place in the key's queue, aborted as the user types on), the filters, and
 * the figures and errors of each completion: to the log and the status item, never a notification
 * per keystroke. A quota refusal turns completion off with one notice.
 */
export class CompletionService implements InlineCompletionFeature, vscode.Disposable {
  private readonly reuse = new ReuseCache();
  private readonly recent = new RecentFiles();
  private readonly rule: WorkspaceRule;
  private readonly pause = new TypingPause();
  private pausedUntil = 0;
  readonly status: CompletionStatusView;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly services: Services,
    private readonly completions: CompletionSwitch,
  ) {
    this.rule = new WorkspaceRule(completions);
    this.status = new CompletionStatusView(completions);
    this.subscriptions = [
      this.status,
      this.recent,
      this.rule,
      vscode.workspace.onDidCloseTextDocument((d) => this.reuse.forget(d.uri.toString())),
    ];
  }

  async provide(
    document: vscode.TextDocument,
    position: vscode.Position,
    context: vscode.InlineCompletionContext,
    token: vscode.CancellationToken,
  ): Promise<vscode.InlineCompletionItem[] | undefined> {
    // With the suggest widget open, an item would have to extend its selection: left to the widget.
    if (context.selectedCompletionInfo) return undefined;
    const automatic = context.triggerKind === vscode.InlineCompletionTriggerKind.Automatic;
    if (automatic) this.pause.typed(Date.now());
    const relative = await this.rule.pathOf(document);
    if (!relative || token.isCancellationRequested) return undefined;
    const key = document.uri.toString();
    const offset = document.offsetAt(position);
    const read = (start: number, end: number) =>
      document.getText(new vscode.Range(document.positionAt(start), document.positionAt(end)));
    const reused = this.reuse.lookup(key, offset, read);
    if (reused !== undefined) return [new vscode.InlineCompletionItem(reused, new vscode.Range(position, position))];
    if (this.pausedUntil > Date.now()) return undefined;
    if (automatic && !(await this.pause.wait(token))) return undefined;
    const prompt = buildPrompt({
      doc: { lineCount: document.lineCount, lineAt: (i) => document.lineAt(i).text },
      line: position.line,
      character: position.character,
      path: relative,
      language: document.languageId,
      snippets: await this.recent.snippets(document, (d) => this.rule.pathOf(d)),
      budget: DEFAULT_PROMPT_BUDGET,
    });
    if (token.isCancellationRequested) return undefined;
    const text = await this.ask(prompt, token, document);
    if (text === undefined) return undefined;
    const kept = finalCompletion(text, prompt);
    if (!('text' in kept)) {
      this.services.log.debug(`completion dropped (${kept.dropped})`);
      return undefined;
    }
    const insert = toEol(kept.text, document.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n');
    this.reuse.remember(key, offset, insert, read);
    return [new vscode.InlineCompletionItem(insert, new vscode.Range(position, position))];
  }

  /** Sends the request; the model's text once enough of it arrived, or undefined (cancelled, failed). */
  private async ask(
    prompt: CompletionPrompt,
    token: vscode.CancellationToken,
    document: vscode.TextDocument,
  ): Promise<string | undefined> {
    const modelId = this.completions.settings().model;
    const model = this.services.registry.find(modelId);
    const protocol = model?.protocols[0] ?? 'chatCompletions';
    const thinking = model ? thinkingRequest(thinkingControl(model, protocol), 'off') : undefined;
    const controller = new AbortController();
    this.services.log.debug(`completion: asking ${modelId}`);
    // Typing on cancels VS Code's request: the HTTP request is closed with it, so nothing more is billed.
    // VS Code may keep a request running while the user types on (it can still use its answer), so
    // an edit of the document before the answer is shown aborts it too.
    const cancel = vscode.Disposable.from(
      token.onCancellationRequested(() => controller.abort()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.toString() !== document.uri.toString() || !e.contentChanges.length) return;
        this.services.log.debug('completion: the document changed before the answer was shown; aborted');
        controller.abort();
      }),
    );
    this.status.report({ state: 'waiting' });
    const run = requestCompletion(
      {
        http: this.services.http(),
        refusals: this.services.refusals,
        origin: () => this.services.http().endpoints.origin,
        log: (line) => this.services.log.info(line),
      },
      {
        model: modelId,
        ...(model?.keyId ? { key: model.keyId } : {}),
        chatProtocol: protocol,
        ...(thinking ? { thinking } : {}),
      },
      prompt,
      controller.signal,
      () => controller.abort(),
    );
    void run.done.then((answer) => {
      cancel.dispose();
      this.settle(answer, model?.catalog?.cost);
    });
    const text = await shownText(run, prompt.multiline);
    // Shown from here on: the rest of a multi-line answer may still arrive, for the reuse cache.
    cancel.dispose();
    return token.isCancellationRequested || controller.signal.aborted ? undefined : text;
  }

  /** Counts a finished completion and reports how it went (log and status item only). */
  private settle(answer: CompletionAnswer, price: { input?: number; output?: number } | undefined): void {
    if (answer.usage) this.services.billing.recordCompletion(answer.usage, completionCost(answer.usage, price));
    const error = answer.error;
    if (!error || error.kind === 'cancelled') return this.status.report({ state: 'idle' });
    this.services.log.warn(`completion (${answer.path}) failed: ${error.message}`);
    if (error.kind === 'rateLimited') {
      this.pausedUntil = Date.now() + (error.retryAfterMs ?? RATE_PAUSE_MS);
      return this.status.report({ state: 'paused', until: this.pausedUntil, reason: error.message });
    }
    if (error.kind === 'quota') return void this.turnOffForQuota(error);
    this.status.report({ state: 'error', message: error.message });
  }

  private async turnOffForQuota(error: GatewayError): Promise<void> {
    if (!this.completions.settings().enabled) return;
    await vscode.workspace.getConfiguration(COMPLETIONS).update('enabled', false, vscode.ConfigurationTarget.Global);
    void vscode.window.showWarningMessage(
      vscode.l10n.t('Code completion was turned off: the gateway refused it for quota. {0}', error.message),
    );
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}

/**
 * The text to show: for one line, the first complete line (or the whole answer); for several, the
 * whole answer, or the complete lines that arrived once the first came SHOW_LINES_AFTER_MS ago.
 */
async function shownText(run: CompletionRun, multiline: boolean): Promise<string> {
  const whole = run.done.then((a) => a.text);
  if (!multiline) return Promise.race([run.firstLine, whole]);
  let early = '';
  const lines = run.firstLine.then(
    (first) =>
      new Promise<string>((resolve) => {
        early = first;
        setTimeout(() => resolve(early), SHOW_LINES_AFTER_MS);
      }),
  );
  return Promise.race([whole, lines]);
}
