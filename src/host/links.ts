import * as vscode from 'vscode';

/** The only kinds of link opened outside VS Code from anything a model or a provider sent. */
const OPENABLE_SCHEMES = ['http', 'https', 'mailto'];

/**
 * Web links VS Code itself confirms before opening them: its link protection shows the exact
 * address (a link's text can say something other than where it goes) unless the user trusted the
 * domain. Asking first as well made every link take two modal confirmations.
 */
const CONFIRMED_BY_VSCODE = ['http', 'https'];

/**
 * Opens a link that came from a model answer, a search result, the catalog or any other provider
 * response: only web and mail links, and only once the user confirmed the exact address (VS Code
 * asks for web links, this asks for the rest). Returns whether it was opened.
 */
export async function openExternalLink(url: string): Promise<boolean> {
  let parsed: vscode.Uri;
  try {
    parsed = vscode.Uri.parse(url, true);
  } catch {
    void vscode.window.showWarningMessage(vscode.l10n.t('"{0}" is not a link that can be opened.', url.slice(0, 200)));
    return false;
  }
  if (!OPENABLE_SCHEMES.includes(parsed.scheme)) {
    void vscode.window.showWarningMessage(
      vscode.l10n.t('Links of the kind "{0}:" are not opened from Model Gateway.', parsed.scheme),
    );
    return false;
  }
  if (!CONFIRMED_BY_VSCODE.includes(parsed.scheme)) {
    const open = vscode.l10n.t('Open');
    const choice = await vscode.window.showInformationMessage(vscode.l10n.t('Open {0}?', url), { modal: true }, open);
    if (choice !== open) return false;
  }
  return vscode.env.openExternal(parsed);
}
