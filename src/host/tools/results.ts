import * as vscode from 'vscode';
import { GatewayError } from '../../core/errors';
import { readableText } from '../../core/tools/readableText';
import { words } from '../../shared/words';

/** The scheme of the read-only documents tool results are shown in. */
export const RESULT_SCHEME = 'model-gateway-result';

/** Where a result came from: the tool, and the file, address or query it ran on. */
export interface ResultSource {
  /** A short stable tool name (`parse`, `ocr`, `search`…): the same source under two tools gets two tabs. */
  tool: string;
  /** A local file (Save writes next to it), or an address, query or id (Save asks where). */
  source: vscode.Uri | string;
  /** What the result is called in its tab and as chat context, e.g. "Parsed report.pdf". */
  label: string;
  /** Shown rendered (Markdown's preview) rather than as text: a list of links to read, not text to edit. */
  rendered?: boolean;
}

export interface ShownResult extends ResultSource {
  content: string;
}

/**
 * Holds the results shown this session, one read-only document per tool and source: running a
 * tool again on the same source replaces the text of the tab it already has instead of opening
 * another untitled document (which would also ask to be saved on close).
 */
class ResultDocuments implements vscode.TextDocumentContentProvider {
  private readonly results = new Map<string, ShownResult>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    // A tab restored after a reload has no result behind it: say so instead of showing nothing.
    return (
      this.results.get(uri.toString())?.content ??
      vscode.l10n.t('This result is no longer available. Run the tool again to see it.')
    );
  }

  set(uri: vscode.Uri, result: ShownResult): void {
    this.results.set(uri.toString(), result);
    // Fired even for a new result: its tab may already be open (restored after a reload).
    this.changed.fire(uri);
  }

  get(uri: vscode.Uri): ShownResult | undefined {
    return this.results.get(uri.toString());
  }

  dispose(): void {
    this.changed.dispose();
  }
}

const shown = new ResultDocuments();

/** Registers the result documents' provider; called once on activation. */
export function registerResultDocuments(): vscode.Disposable {
  return vscode.Disposable.from(vscode.workspace.registerTextDocumentContentProvider(RESULT_SCHEME, shown), shown);
}

/** A Markdown file name made of a label or title: a result's tab, the name a web result or an exported chat is offered to be saved as. */
export function markdownFileName(label: string): string {
  return `${
    label
      .replace(/[\\/:*?"<>|\r\n\t]+/g, ' ')
      .trim()
      .slice(0, 100) || 'result'
  }.md`;
}

/** The same tool and source always give the same address, so its tab is reused. */
export function resultUri(result: ResultSource): vscode.Uri {
  const source = typeof result.source === 'string' ? result.source : result.source.toString();
  return vscode.Uri.from({
    scheme: RESULT_SCHEME,
    path: `/${result.tool}/${markdownFileName(result.label)}`,
    query: source,
  });
}

/**
 * Shows a tool's Markdown result (as readableText makes it: form feeds become page separators) in
 * its source's own read-only tab, in the editor group the user works in: a result opened in a
 * second column split the editor area and left the first half empty when nothing else was open.
 * A result already open in some group is brought forward there rather than opened a second time.
 * A result marked `rendered` (web search results) is shown as Markdown's preview of the document.
 */
export async function showResult(result: ResultSource, content: string): Promise<vscode.TextDocument> {
  const uri = resultUri(result);
  shown.set(uri, { ...result, content: readableText(content) });
  let doc = await vscode.workspace.openTextDocument(uri);
  // An open document learns of new text through onDidChange; wait for it before returning it.
  if (doc.getText() !== readableText(content)) {
    await new Promise<void>((resolve) => {
      const sub = vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.toString() === uri.toString() && e.document.getText() === readableText(content)) {
          sub.dispose();
          resolve();
        }
      });
      if (doc.getText() === readableText(content)) {
        sub.dispose();
        resolve();
      }
    });
    doc = await vscode.workspace.openTextDocument(uri);
  }
  if (doc.languageId !== 'markdown') doc = await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
  if (result.rendered) await vscode.commands.executeCommand('markdown.showPreview', uri);
  else await vscode.window.showTextDocument(doc, { viewColumn: openIn(uri), preview: false });
  return doc;
}

/** The group already showing this result (it is brought forward there, not opened twice), else the one the user works in. */
function openIn(uri: vscode.Uri): vscode.ViewColumn {
  const key = uri.toString();
  const group = vscode.window.tabGroups.all.find((g) =>
    g.tabs.some((tab) => tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === key),
  );
  return group?.viewColumn ?? vscode.ViewColumn.Active;
}

/** The result shown at `uri`, or in the active editor; a clear error when there is none. */
export function shownResult(uri: unknown): ShownResult & { uri: vscode.Uri } {
  const target =
    uri instanceof vscode.Uri
      ? uri
      : typeof uri === 'string'
        ? vscode.Uri.parse(uri)
        : vscode.window.activeTextEditor?.document.uri;
  const result = target?.scheme === RESULT_SCHEME ? shown.get(target) : undefined;
  if (!target || !result)
    throw new GatewayError(
      'badRequest',
      words('No tool result is open. Run a tool first (e.g. Parse PDF or Search the Web).'),
    );
  return { ...result, uri: target };
}
