import * as path from 'node:path';
import * as vscode from 'vscode';
import * as z from 'zod/mini';
import { GatewayError, isGatewayError } from '../../core/errors';
import type { HttpClient } from '../../core/http';
import { DEFAULT_CALL_PRICE_USD, type BilledTool } from '../../core/tools/billing';
import { checkOcrFile, ocrFile, parsePdf, pdfParseForm, readPage, webSearch } from '../../core/tools/glm';
import { kimiFetch, kimiSearch } from '../../core/tools/kimi';
import type { OpenedFile } from '../../core/tools/openedFile';
import type { SearchResult } from '../../core/tools/searchResult';
import { parseWith } from '../../core/validate';
import { formatAmount } from '../../shared/format';
import { chatSettings } from '../chat/chatSettings';
import type { MediaStudio } from '../media/mediaStudio';
import type { Services } from '../services';
import { withWorkspaceFile } from '../trust/workspaceFiles';

/**
 * The gateway's tools as agent tools of VS Code's chat (`vscode.lm.registerTool`, stable before
 * 1.100). Each calls the same core functions as the palette commands, counts in the same session
 * billing meter and fails with the same GatewayError messages; the result is text the model can use.
 * The names, descriptions and input schemas are declared in package.json (`languageModelTools`).
 */

export const TOOL_NAMES = {
  searchWeb: 'modelGateway_searchWeb',
  readWebPage: 'modelGateway_readWebPage',
  parsePdf: 'modelGateway_parsePdf',
  ocr: 'modelGateway_ocr',
  generateImage: 'modelGateway_generateImage',
} as const;

const billedLabel = (tool: BilledTool): string =>
  ({
    parse: vscode.l10n.t('Parsing a PDF'),
    ocr: vscode.l10n.t('OCR'),
    upload: vscode.l10n.t('Uploading a file'),
    search: vscode.l10n.t('A web search'),
    read: vscode.l10n.t('Reading a web page'),
  })[tool];

const provider = z.optional(z.enum(['glm', 'kimi']));
const maxChars = z.optional(z.number());
const searchInput = z.object({ query: z.string(), count: z.optional(z.number()), provider });
const readInput = z.object({ url: z.string(), provider, maxChars });
const fileInput = z.object({ path: z.string(), maxChars });
const imageInput = z.object({ prompt: z.string(), size: z.optional(z.string()), model: z.optional(z.string()) });

interface ToolDef<T> {
  name: string;
  input: z.ZodMiniType<T>;
  /** The per-call billed tool, if any; decides the confirmation and the meter. */
  billed?: (input: T) => BilledTool;
  invocationMessage(input: T): string;
  /** A confirmation for calls that cost money beyond the per-call tools (image generation). */
  confirmation?(input: T): Confirmation | undefined;
  /** The text the model gets. */
  run(input: T, signal: AbortSignal, services: Services): Promise<string>;
}

/**
 * The agent tools by name. The extension's entry registers each tool package.json declares at
 * activation with a forwarder that reaches these on first use (src/extension.ts).
 */
export function agentTools(
  services: Services,
  media: () => MediaStudio,
): Map<string, vscode.LanguageModelTool<unknown>> {
  const defs = [searchTool(), readTool(), parseTool(), ocrTool(), imageTool(media)] as ToolDef<unknown>[];
  return new Map(defs.map((def) => [def.name, toVsCodeTool(def, services)]));
}

function toVsCodeTool<T>(def: ToolDef<T>, services: Services): vscode.LanguageModelTool<unknown> {
  const parse = (raw: unknown): T => {
    const input = parseWith(def.input, raw, vscode.l10n.t('The input of {0}', def.name));
    if (input === undefined) throw new GatewayError('badRequest', vscode.l10n.t('{0} needs an input.', def.name));
    return input;
  };
  return {
    prepareInvocation(options) {
      const input = parse(options.input);
      const billed = def.billed?.(input);
      const asks = vscode.workspace.getConfiguration('modelGateway.tools').get<boolean>('confirmBilledCalls') !== false;
      const confirmation = billed ? billedConfirmation(billed) : def.confirmation?.(input);
      return {
        invocationMessage: def.invocationMessage(input),
        ...(asks && confirmation ? { confirmationMessages: confirmation } : {}),
      };
    },
    async invoke(options, token) {
      const input = parse(options.input);
      const abort = new AbortController();
      const onCancel = token.onCancellationRequested(() => abort.abort());
      try {
        const text = await def.run(input, abort.signal, services);
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
      } catch (err) {
        const error = isGatewayError(err)
          ? err
          : new GatewayError('protocol', err instanceof Error ? err.message : String(err), { cause: err });
        if (error.kind !== 'cancelled') services.log.warn(`${def.name} failed: ${error.describe()}`);
        // The message goes to the model (and the user) as the tool's failure.
        throw new Error(error.describe());
      } finally {
        onCancel.dispose();
      }
    },
  };
}

interface Confirmation {
  title: string;
  message: vscode.MarkdownString;
}

/**
 * The confirmations are read in the Chat view, a narrow side panel: a few short sentences, each a
 * paragraph of its own. The setting that turns them off is a link that opens it in the Settings
 * editor: its id has no place to wrap and was cut at the panel's edge even alone on a line in code
 * formatting (seen in VS Code 1.139). The one command a link may run is that one; names that come
 * from the model (an image model's id) are text, never markdown.
 */
function confirmationText(parts: Array<string | { text: string }>): vscode.MarkdownString {
  const md = new vscode.MarkdownString(undefined, false);
  md.isTrusted = { enabledCommands: [OPEN_SETTINGS] };
  md.supportHtml = false;
  parts.forEach((part, i) => {
    if (i) md.appendMarkdown('\n\n');
    if (typeof part === 'string') md.appendMarkdown(part);
    else md.appendText(part.text);
  });
  const target = `command:${OPEN_SETTINGS}?${encodeURIComponent(JSON.stringify([CONFIRM_SETTING]))}`;
  md.appendMarkdown(`\n\n[${vscode.l10n.t('Turn this question off in Settings')}](${target} "${CONFIRM_SETTING}")`);
  return md;
}

const OPEN_SETTINGS = 'workbench.action.openSettings';

const CONFIRM_SETTING = 'modelGateway.tools.confirmBilledCalls';

function billedConfirmation(tool: BilledTool): Confirmation {
  return {
    title: vscode.l10n.t('{0} is billed', billedLabel(tool)),
    message: confirmationText([
      vscode.l10n.t("Usually US${0} per call, from the key's quota.", formatAmount(DEFAULT_CALL_PRICE_USD)),
    ]),
  };
}

function imageConfirmation(model: string | undefined): Confirmation {
  return {
    title: vscode.l10n.t('Generate an image (billed)'),
    message: confirmationText([
      ...(model ? [vscode.l10n.t('Image model:'), { text: model }] : []),
      vscode.l10n.t("Billed at the image model's price."),
      vscode.l10n.t("Saved in the workspace's output folder."),
    ]),
  };
}

/** Runs a billed call and counts it in the session's meter once it succeeded. */
async function countBilled<T>(services: Services, tool: BilledTool, call: () => Promise<T>): Promise<T> {
  const result = await call();
  services.billing.record(tool);
  return result;
}

function searchTool(): ToolDef<z.infer<typeof searchInput>> {
  return {
    name: TOOL_NAMES.searchWeb,
    input: searchInput,
    billed: () => 'search',
    invocationMessage: (i) => vscode.l10n.t('Searching the web for "{0}"', i.query),
    async run(input, signal, services) {
      const config = vscode.workspace.getConfiguration('modelGateway.tools');
      const count = Math.min(Math.max(Math.floor(input.count ?? config.get<number>('searchCount') ?? 10), 1), 50);
      const chosen = input.provider ?? config.get<'glm' | 'kimi'>('searchProvider') ?? 'glm';
      const glm = () =>
        webSearch(
          services.http(),
          input.query,
          {
            engine: config.get<string>('searchEngine') || 'search_std',
            count,
            intent: config.get<boolean>('searchIntent') ?? false,
          },
          signal,
        );
      if (chosen === 'kimi') {
        try {
          return resultsText(
            input.query,
            await countBilled(services, 'search', () => kimiSearch(services.http(), input.query, count, false, signal)),
          );
        } catch (err) {
          if (!isGatewayError(err, 'upstreamBlocked')) throw err;
          // The second provider's search answers 403 (its upstream account is blocked): the first
          // provider's search is used instead, and the model is told.
          const results = await countBilled(services, 'search', glm);
          return `Kimi's search is blocked upstream (HTTP 403); these results are from GLM's search.\n\n${resultsText(input.query, results)}`;
        }
      }
      return resultsText(input.query, await countBilled(services, 'search', glm));
    },
  };
}

function resultsText(query: string, results: SearchResult[]): string {
  if (!results.length) return `No web results for "${query}".`;
  const lines = results.map((r, i) => {
    const meta = [r.site, r.date].filter(Boolean).join(', ');
    return `${i + 1}. ${r.title}\n   URL: ${r.url}${meta ? `\n   (${meta})` : ''}\n   ${r.snippet.replace(/\s+/g, ' ').trim()}`;
  });
  return `Web results for "${query}" (cite them by URL):\n\n${lines.join('\n\n')}`;
}

function readTool(): ToolDef<z.infer<typeof readInput>> {
  return {
    name: TOOL_NAMES.readWebPage,
    input: readInput,
    billed: () => 'read',
    invocationMessage: (i) => vscode.l10n.t('Reading {0}', i.url),
    async run(input, signal, services) {
      const page = await countBilled(services, 'read', () =>
        input.provider === 'kimi'
          ? kimiFetch(services.http(), input.url, signal)
          : readPage(services.http(), input.url, signal),
      );
      const head = `${page.title ? `Title: ${page.title}\n` : ''}URL: ${page.url}\n\n`;
      return head + limitText(page.markdown, input.maxChars);
    },
  };
}

type FileInput = z.infer<typeof fileInput>;

/** What tells the document tools apart; the rest (input, opening the file, billing) is one. */
interface DocumentTool<Prepared, Result> {
  name: string;
  billed: BilledTool;
  invocationMessage(path: string): string;
  /** The checks that need no request (format, size): a refused file is never billed. */
  prepare(file: OpenedFile, input: FileInput): Promise<Prepared>;
  /** The billed call. */
  call(http: HttpClient, file: OpenedFile, prepared: Prepared, signal: AbortSignal): Promise<Result>;
  /** The text for the model. */
  answer(result: Result, input: FileInput): string;
}

/**
 * A document tool: the file the model names is opened once, only among the open folders' own
 * files (trust/workspaceFiles.ts: links resolved, one name on disk, the open handle checked), so a
 * model cannot upload files the user never opened in this window (keys, home-folder documents), not
 * even through a link or a swap made meanwhile; everything sent is read through that handle.
 */
function documentTool<Prepared, Result>(tool: DocumentTool<Prepared, Result>): ToolDef<FileInput> {
  return {
    name: tool.name,
    input: fileInput,
    billed: () => tool.billed,
    invocationMessage: (i) => tool.invocationMessage(i.path),
    run: (input, signal, services) =>
      withWorkspaceFile(input.path, { outsideAllowed: false }, async (file) => {
        const prepared = await tool.prepare(file, input);
        const result = await countBilled(services, tool.billed, () =>
          tool.call(services.http(), file, prepared, signal),
        );
        return tool.answer(result, input);
      }),
  };
}

const parseTool = () =>
  documentTool({
    name: TOOL_NAMES.parsePdf,
    billed: 'parse',
    invocationMessage: (p) => vscode.l10n.t('Parsing {0}', p),
    async prepare(file, input) {
      if (path.extname(file.path).toLowerCase() !== '.pdf')
        throw new GatewayError(
          'badRequest',
          vscode.l10n.t(
            '{0} is not a PDF; the parser takes PDF files. Use {1} for PNG or JPEG scans.',
            input.path,
            TOOL_NAMES.ocr,
          ),
        );
      return pdfParseForm(file);
    },
    call: (http, file, form, signal) => parsePdf(http, file, signal, form),
    answer: (result, input) =>
      result.empty
        ? `No text was found in ${input.path}: the upload worked, but it is most likely a scan. Use ${TOOL_NAMES.ocr} to read its text.`
        : `Text of ${input.path}:\n\n${limitText(result.content, input.maxChars)}`,
  });

const ocrTool = () =>
  documentTool({
    name: TOOL_NAMES.ocr,
    billed: 'ocr',
    invocationMessage: (p) => vscode.l10n.t('Reading the text of {0} (OCR)', p),
    prepare: (file) => checkOcrFile(file),
    call: (http, file, _type, signal) => ocrFile(http, file, signal),
    answer(result, input) {
      if (!result.markdown.trim()) return `OCR found no text in ${input.path}.`;
      const pages = result.pages !== undefined ? ` (${result.pages} page${result.pages === 1 ? '' : 's'})` : '';
      return `Text of ${input.path}${pages}, read by OCR:\n\n${limitText(result.markdown, input.maxChars)}`;
    },
  });

function imageTool(media: () => MediaStudio): ToolDef<z.infer<typeof imageInput>> {
  return {
    name: TOOL_NAMES.generateImage,
    input: imageInput,
    invocationMessage: (i) => vscode.l10n.t('Generating an image: {0}', i.prompt.slice(0, 80)),
    confirmation: (i) => imageConfirmation(i.model),
    async run(input, signal) {
      if (signal.aborted) throw new GatewayError('cancelled', vscode.l10n.t('Image generation was cancelled.'));
      const studio = media();
      const onAbort = () => studio.images.cancel();
      signal.addEventListener('abort', onAbort);
      try {
        // The Images API route: the image model answers directly, nothing depends on an outer chat model.
        const result = await studio.images.generate({
          prompt: input.prompt,
          route: 'images',
          n: 1,
          ...(input.size ? { size: input.size } : {}),
          ...(input.model ? { model: input.model } : {}),
        });
        const shown = result.paths.map((p) => vscode.workspace.asRelativePath(p, false));
        const count = shown.length === 1 ? 'an image' : `${shown.length} images`;
        const list = shown.map((p) => `- ${p}`).join('\n');
        const revised = result.revisedPrompts.length ? `\nRevised prompt: ${result.revisedPrompts.join(' / ')}` : '';
        return `Generated ${count} with ${result.model} (${result.size}), saved in the workspace as:\n${list}${revised}`;
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    },
  };
}

/** Text longer than the limit (`maxChars`, else "modelGateway.chat.contextMaxChars") is cut, and says so. */
function limitText(text: string, requested: number | undefined): string {
  const limit =
    requested !== undefined && Number.isFinite(requested) && requested > 0
      ? Math.floor(requested)
      : chatSettings().contextMaxChars;
  if (text.length <= limit) return text;
  const kept = `${limit.toLocaleString('en-US')} of ${text.length.toLocaleString('en-US')}`;
  return `${text.slice(0, limit)}\n\n[Cut at ${kept} characters; ask again with a larger maxChars for more.]`;
}
