// Over 450 lines: the tool commands (parse, OCR, search, read, results) are to be split per tool
// together with the chat host's split; listed in eslint.config.mjs until then.
import * as path from 'node:path';
import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { GatewayError, isGatewayError } from '../../core/errors';
import type { BilledTool } from '../../core/tools/billing';
import { formatNumber, formatWhen } from '../../shared/format';
import { checkOcrFile, ocrFile, parsePdf, pdfParseForm, readPage, webSearch } from '../../core/tools/glm';
import {
  extractForm,
  fileContent,
  IMAGE_REFUSED,
  kimiFetch,
  kimiSearch,
  uploadForExtract,
  type KimiFile,
} from '../../core/tools/kimi';
import { citation, resultsMarkdown, type SearchResult } from '../../core/tools/searchResult';
import { parseWith } from '../../core/validate';
import { openExternalLink } from '../links';
import { showError } from '../notify';
import type { Services } from '../services';
import { confirmBilled, withToolProgress } from '../tools/billedCalls';
import { KimiFileList } from '../tools/kimiFiles';
import { saveResult, showResult, shownResult, type ResultSource } from '../tools/results';
import { resolveTarget, targetFile } from '../tools/targets';
import type { CommandContext, CommandDef } from './types';

const PDF = { PDF: ['pdf'] };
// Functions, not constants: the filter names are translated when a dialog opens, not at module load.
const ocrFiles = () => ({ [vscode.l10n.t('Scans (PDF, PNG, JPEG)')]: ['pdf', 'png', 'jpg', 'jpeg'] });
const documents = () => ({
  [vscode.l10n.t('Documents')]: [
    'pdf',
    'doc',
    'docx',
    'txt',
    'md',
    'ppt',
    'pptx',
    'xls',
    'xlsx',
    'csv',
    'html',
    'epub',
  ],
});

type Failure = { error: string; kind?: string };

/** Runs a billed tool call with the notice, progress, cancel and the session's meter. */
async function billedCall<T>(
  services: Services,
  tool: BilledTool,
  title: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T | undefined> {
  if (!(await confirmBilled(services, tool, true))) return undefined;
  const result = await withToolProgress(title, work);
  services.billing.record(tool);
  return result;
}

function failure(err: unknown, services: Services, extra: Parameters<typeof showError>[2] = []): Failure {
  const message = showError(err, services.log, extra);
  return { error: message, ...(isGatewayError(err) ? { kind: err.kind } : {}) };
}

/** Offers what can be done with a shown result: save it (next to its source file), or use it as chat context. */
function offerResultActions(result: ResultSource, doc: vscode.TextDocument, services: Services): void {
  const save = typeof result.source === 'string' ? vscode.l10n.t('Save…') : vscode.l10n.t('Save Next to File');
  const addToChat = vscode.l10n.t('Add to Chat');
  // Counted as shown and as Add to Chat attaches it (readableText: page breaks become separators), so the chip says the same.
  void vscode.window
    .showInformationMessage(
      vscode.l10n.t('{0}: {1} characters.', result.label, formatNumber(doc.getText().length)),
      save,
      addToChat,
    )
    .then(async (choice) => {
      try {
        if (choice === save) await vscode.commands.executeCommand('modelGateway.saveResult', doc.uri);
        else if (choice === addToChat) await vscode.commands.executeCommand('modelGateway.addResultToChat', doc.uri);
      } catch (err) {
        showError(err, services.log);
      }
    });
}

export const toolCommands: CommandDef[] = [
  {
    id: 'modelGateway.parsePdf',
    async run(ctx: CommandContext, arg) {
      const uri = await resolveTarget(arg, PDF, vscode.l10n.t('Choose a PDF to parse'));
      if (!uri) return undefined;
      const name = path.basename(uri.fsPath);
      try {
        // Local checks (size with the form) come first: a refused file never asks to be billed.
        const file = await targetFile(uri);
        const form = await pdfParseForm(file);
        const result = await billedCall(ctx.services, 'parse', vscode.l10n.t('Parsing {0}…', name), (signal) =>
          parsePdf(ctx.services.http(), file, signal, form),
        );
        if (!result) return undefined;
        if (result.empty) {
          void vscode.window
            .showWarningMessage(
              vscode.l10n.t(
                'No text was found in {0}. The upload worked, but scanned documents need OCR to get their text.',
                name,
              ),
              vscode.l10n.t('Run OCR'),
            )
            .then((choice) => {
              if (choice) void vscode.commands.executeCommand('modelGateway.ocrFile', uri);
            });
          return { content: '', empty: true };
        }
        const shown: ResultSource = { tool: 'parse', source: uri, label: vscode.l10n.t('Parsed {0}', name) };
        const doc = await showResult(shown, result.content);
        offerResultActions(shown, doc, ctx.services);
        return { content: result.content, document: doc.uri.toString(), empty: false };
      } catch (err) {
        return failure(err, ctx.services);
      }
    },
  },
  {
    id: 'modelGateway.ocrFile',
    async run(ctx: CommandContext, arg) {
      const uri = await resolveTarget(arg, ocrFiles(), vscode.l10n.t('Choose a scan or image for OCR'));
      if (!uri) return undefined;
      const name = path.basename(uri.fsPath);
      try {
        const file = await targetFile(uri);
        await checkOcrFile(file);
        const result = await billedCall(
          ctx.services,
          'ocr',
          vscode.l10n.t('Reading the text of {0} (OCR)…', name),
          (signal) => ocrFile(ctx.services.http(), file, signal),
        );
        if (!result) return undefined;
        if (!result.markdown.trim()) {
          void vscode.window.showWarningMessage(vscode.l10n.t('OCR found no text in {0}.', name));
          return { markdown: '', pages: result.pages };
        }
        const shown: ResultSource = { tool: 'ocr', source: uri, label: vscode.l10n.t('OCR of {0}', name) };
        const doc = await showResult(shown, result.markdown);
        offerResultActions(shown, doc, ctx.services);
        return { markdown: result.markdown, document: doc.uri.toString(), pages: result.pages };
      } catch (err) {
        return failure(err, ctx.services);
      }
    },
  },
  {
    id: 'modelGateway.extractFile',
    async run(ctx: CommandContext, arg) {
      const uri = await resolveTarget(
        arg,
        documents(),
        vscode.l10n.t('Choose a document for Kimi to extract text from'),
      );
      if (!uri) return undefined;
      const name = path.basename(uri.fsPath);
      try {
        // The file belongs to the key that uploads it: it is read (and found again) with that key only.
        const owner = await ctx.services.keyEntryFor({});
        const key = owner && (await ctx.services.keys.secret(owner.id));
        const http = ctx.services.http();
        const real = await targetFile(uri);
        const form = await extractForm(real);
        const file = await billedCall(
          ctx.services,
          'upload',
          vscode.l10n.t('Uploading {0} for extraction…', name),
          (signal) => uploadForExtract(http, owner?.id, real, signal, form),
        );
        if (!file) return undefined;
        // The list only saves reading the file again for free: not keeping it does not fail the extract.
        if (key)
          await new KimiFileList(ctx.services.context)
            .add(key, file)
            .catch((err: unknown) =>
              ctx.services.log.warn(`Could not keep ${file.id} in the list of extracted files: ${String(err)}`),
            );
        const content = await withToolProgress(vscode.l10n.t('Reading the text of {0}…', name), (signal) =>
          fileContent(http, owner?.id, file.id, signal),
        );
        const shown: ResultSource = { tool: 'extract', source: uri, label: vscode.l10n.t('Extracted {0}', name) };
        const doc = await showResult(shown, content);
        offerResultActions(shown, doc, ctx.services);
        return { id: file.id, content, document: doc.uri.toString() };
      } catch (err) {
        const isImage = isGatewayError(err, 'badRequest') && err.code === IMAGE_REFUSED;
        return failure(
          err,
          ctx.services,
          isImage
            ? [
                {
                  title: vscode.l10n.t('Ask About This Image'),
                  run: () => vscode.commands.executeCommand('modelGateway.askAboutImage', uri),
                },
              ]
            : [],
        );
      }
    },
  },
  {
    id: 'modelGateway.showExtractedFiles',
    async run(ctx: CommandContext) {
      const keys = await ctx.services.keys.list();
      if (!keys.length)
        return failure(
          new GatewayError('auth', vscode.l10n.t('No API key is set. Run "Model Gateway: Set API Key".')),
          ctx.services,
        );
      // Each key's own files, each read with the key that uploaded it.
      const lists = new KimiFileList(ctx.services.context);
      const owned: Array<{ file: KimiFile; keyId: string; keyName: string; secret: string }> = [];
      for (const k of keys) {
        const secret = await ctx.services.keys.secret(k.id);
        if (secret !== undefined)
          for (const file of await lists.list(secret)) owned.push({ file, keyId: k.id, keyName: k.name, secret });
      }
      const files = owned.map((o) => o.file);
      if (!files.length) {
        void vscode.window.showInformationMessage(vscode.l10n.t('This key has not extracted any files yet.'));
        return [];
      }
      const pick = await vscode.window.showQuickPick(
        owned.map((o) => ({
          label: o.file.filename,
          description:
            keys.length > 1 ? `${formatWhen(o.file.createdAt)} · ${o.keyName}` : formatWhen(o.file.createdAt),
          detail: o.file.id,
          owned: o,
        })),
        { title: vscode.l10n.t('Files extracted with this key (reading them again is not billed)') },
      );
      if (!pick) return files;
      const { file, keyId, secret } = pick.owned;
      try {
        const content = await withToolProgress(vscode.l10n.t('Reading {0}…', file.filename), (signal) =>
          fileContent(ctx.services.http(), keyId, file.id, signal),
        );
        await showResult(
          { tool: 'extract', source: file.id, label: vscode.l10n.t('Extracted {0}', file.filename) },
          content,
        );
      } catch (err) {
        if (isGatewayError(err) && err.status === 404) await lists.remove(secret, file.id);
        return failure(err, ctx.services);
      }
      return files;
    },
  },
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
  {
    /** Save (editor title of a result): next to its source file as `<name>.md`, or where the user picks; never over an existing file. */
    id: 'modelGateway.saveResult',
    async run(ctx: CommandContext, arg) {
      try {
        const saved = await saveResult(shownResult(arg));
        if (!saved) return undefined;
        void vscode.window.showInformationMessage(vscode.l10n.t('Saved {0}.', path.basename(saved.fsPath)));
        return { saved: saved.toString() };
      } catch (err) {
        return failure(err, ctx.services);
      }
    },
  },
  {
    /** Add to Chat (editor title of a result): the result becomes context of the next chat message, as the sidebar's attach does. */
    id: 'modelGateway.addResultToChat',
    async run(ctx: CommandContext, arg) {
      try {
        const result = shownResult(arg);
        await vscode.commands.executeCommand('modelGateway.chat.focus');
        await ctx.chat.addContext(result.label, result.content);
        return { label: result.label, chars: result.content.length };
      } catch (err) {
        return failure(err, ctx.services);
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
