import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { isGatewayError } from '../../core/errors';
import { readPage, webSearch } from '../../core/tools/glm';
import { kimiFetch, kimiSearch } from '../../core/tools/kimi';
import { citation, resultsMarkdown, type SearchResult } from '../../core/tools/searchResult';
import { parseWith } from '../../core/validate';
import { openExternalLink } from '../links';
import { billedCall } from '../tools/billedCalls';
import { failure, offerResultActions } from '../tools/outcomes';
import { showResult, type ResultSource } from '../tools/results';
import type { CommandContext, CommandDef } from './types';

/** The web commands: search the web (results in a quick pick, a document or a citation) and read a page. */
export const webToolCommands: CommandDef[] = [
  {
    id: 'modelGateway.searchWeb',
    async run(ctx: CommandContext, arg) {
      const args = parseWith(searchArgs, arg, vscode.l10n.t('The argument of "Search the Web"')) ?? {};
      const query =
        args.query ??
        (await vscode.window.showInputBox({
          title: vscode.l10n.t('Model Gateway: Search the Web'),
          prompt: vscode.l10n.t('Search query (billed per call)'),
          ignoreFocusOut: true,
        }));
      if (!query?.trim()) return undefined;
      const config = vscode.workspace.getConfiguration('modelGateway.tools');
      const provider = args.provider ?? config.get<'glm' | 'kimi'>('searchProvider') ?? 'glm';
      const count = args.count ?? config.get<number>('searchCount') ?? 10;
      let results: SearchResult[] | undefined;
      try {
        results = await billedCall(
          ctx.services,
          'search',
          vscode.l10n.t('Searching the web for "{0}"…', query),
          (signal) =>
            provider === 'kimi'
              ? kimiSearch(ctx.services.http(), query, count, false, signal)
              : webSearch(
                  ctx.services.http(),
                  query,
                  {
                    engine: config.get<string>('searchEngine') || 'search_std',
                    count,
                    intent: config.get<boolean>('searchIntent') ?? false,
                  },
                  signal,
                ),
        );
      } catch (err) {
        if (provider === 'kimi' && isGatewayError(err, 'upstreamBlocked')) {
          const message = vscode.l10n.t(
            "Kimi's search is blocked upstream (its account is blocked, HTTP 403). Nothing was found.",
          );
          const choice = args.query
            ? undefined
            : await vscode.window.showWarningMessage(message, vscode.l10n.t('Search with GLM'));
          // The user typed this query, so the first provider's results go to the same quick pick.
          if (choice)
            return vscode.commands.executeCommand('modelGateway.searchWeb', {
              ...args,
              query,
              provider: 'glm',
              action: args.action ?? 'pick',
            });
          return { error: message, kind: err.kind };
        }
        return failure(err, ctx.services);
      }
      if (!results) return undefined;
      const action = args.action ?? (args.query ? 'none' : 'pick');
      if (action === 'document') {
        const doc = await showResult(
          searchSource(query, provider),
          resultsMarkdown(query, providerName(provider), results),
        );
        return { results, document: doc.uri.toString() };
      }
      if (action === 'insert' && results[0]) {
        await insertText(citation(results[0]));
        return { results, inserted: citation(results[0]) };
      }
      if (action === 'pick') await pickResult(query, provider, results);
      return { results };
    },
  },
  {
    id: 'modelGateway.readWebPage',
    async run(ctx: CommandContext, arg) {
      const args = parseWith(readArgs, arg, vscode.l10n.t('The argument of "Read a Web Page"')) ?? {};
      const url =
        args.url ??
        (await vscode.window.showInputBox({
          title: vscode.l10n.t('Model Gateway: Read a Web Page'),
          prompt: vscode.l10n.t('Address of a public web page (billed per call)'),
          placeHolder: 'https://example.com/article',
          ignoreFocusOut: true,
        }));
      if (!url?.trim()) return undefined;
      const provider = args.provider ?? 'glm';
      try {
        const page = await billedCall(ctx.services, 'read', vscode.l10n.t('Reading {0}…', url), (signal) =>
          provider === 'kimi'
            ? kimiFetch(ctx.services.http(), url, signal)
            : readPage(ctx.services.http(), url, signal),
        );
        if (!page) return undefined;
        const source = `_${vscode.l10n.t('Source: {0}', page.url)}_`;
        const content =
          page.title && !page.markdown.startsWith('# ')
            ? `# ${page.title}\n\n${source}\n\n${page.markdown}`
            : `${page.markdown}\n\n${source}\n`;
        const shown: ResultSource = {
          tool: 'page',
          source: url,
          label: vscode.l10n.t('Page {0}', page.title ?? page.url),
        };
        const doc = await showResult(shown, content);
        offerResultActions(shown, doc, ctx.services);
        return { markdown: content, title: page.title, document: doc.uri.toString() };
      } catch (err) {
        const alternative = provider === 'glm' ? 'kimi' : 'glm';
        return failure(err, ctx.services, [
          {
            title: alternative === 'kimi' ? vscode.l10n.t('Try Kimi') : vscode.l10n.t('Try GLM'),
            run: () => vscode.commands.executeCommand('modelGateway.readWebPage', { url, provider: alternative }),
          },
        ]);
      }
    },
  },
];

const searchArgs = z.optional(
  z.object({
    query: z.optional(z.string()),
    provider: z.optional(z.enum(['glm', 'kimi'])),
    count: z.optional(z.number()),
    /** What to do with the results: a quick pick (default when typed), a Markdown document, insert the first as a citation, or nothing. */
    action: z.optional(z.enum(['pick', 'document', 'insert', 'none'])),
  }),
);
const readArgs = z.optional(z.object({ url: z.optional(z.string()), provider: z.optional(z.enum(['glm', 'kimi'])) }));

async function pickResult(query: string, provider: string, results: SearchResult[]): Promise<void> {
  if (!results.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No results for "{0}".', query));
    return;
  }
  const openAll: vscode.QuickPickItem = {
    label: `$(book) ${vscode.l10n.t('Open all results as a Markdown document')}`,
    alwaysShow: true,
  };
  const items = results.map((r) => ({
    label: r.title,
    description: [r.site, r.date].filter(Boolean).join(' · '),
    detail: r.snippet.slice(0, 200),
    result: r,
    buttons: [
      { iconPath: new vscode.ThemeIcon('quote'), tooltip: vscode.l10n.t('Insert a Markdown citation at the cursor') },
    ],
  }));
  const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { result?: SearchResult }>();
  qp.title = vscode.l10n.t('Results for "{0}" — Enter opens the page; the quote button inserts a citation', query);
  qp.items = [...items, openAll];
  qp.matchOnDetail = true;
  await new Promise<void>((resolve) => {
    qp.onDidTriggerItemButton(async (e) => {
      if (e.item.result) await insertText(citation(e.item.result));
      qp.hide();
    });
    qp.onDidAccept(async () => {
      const item = qp.selectedItems[0];
      qp.hide();
      if (item === openAll)
        await showResult(searchSource(query, provider), resultsMarkdown(query, providerName(provider), results));
      else if (item?.result?.url) await openExternalLink(item.result.url);
    });
    qp.onDidHide(() => {
      qp.dispose();
      resolve();
    });
    qp.show();
  });
}

/** One tab per query and provider: searching again for the same words refreshes it. Shown rendered: its links are to be read and followed. */
function searchSource(query: string, provider: string): ResultSource {
  return { tool: 'search', source: `${provider}:${query}`, label: vscode.l10n.t('Search {0}', query), rendered: true };
}

function providerName(provider: string): string {
  return provider === 'kimi' ? vscode.l10n.t('Kimi') : vscode.l10n.t('GLM');
}

async function insertText(text: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    await showResult({ tool: 'citation', source: text, label: vscode.l10n.t('Citation') }, text);
    return;
  }
  await editor.edit((edit) => {
    for (const s of editor.selections) edit.replace(s, text);
  });
}
