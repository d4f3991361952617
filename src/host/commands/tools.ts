import * as path from 'node:path';
import * as vscode from 'vscode';
import { GatewayError, isGatewayError } from '../../core/errors';
import { formatWhen } from '../../shared/format';
import { checkOcrFile, ocrFile, parsePdf, pdfParseForm } from '../../core/tools/glm';
import { extractForm, fileContent, IMAGE_REFUSED, uploadForExtract, type KimiFile } from '../../core/tools/kimi';
import { billedCall, withToolProgress } from '../tools/billedCalls';
import { KimiFileList } from '../tools/kimiFiles';
import { failure, offerResultActions } from '../tools/outcomes';
import { showResult, shownResult, type ResultSource } from '../tools/results';
import { saveResult } from '../tools/resultSaving';
import { resolveTarget, withTargetFile } from '../tools/targets';
import { webToolCommands } from './webTools';
import type { CommandContext, CommandDef } from './types';

/**
 * The document commands (parse a PDF, OCR, Kimi's extraction and its list), the actions on a shown
 * result, and the web commands (webTools.ts). Each file is opened once and sent from that handle.
 */
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

export const toolCommands: CommandDef[] = [
  {
    id: 'modelGateway.parsePdf',
    async run(ctx: CommandContext, arg) {
      const uri = await resolveTarget(arg, PDF, vscode.l10n.t('Choose a PDF to parse'));
      if (!uri) return undefined;
      const name = path.basename(uri.fsPath);
      try {
        // Local checks (size with the form) come first: a refused file never asks to be billed.
        const result = await withTargetFile(uri, async (file) => {
          const form = await pdfParseForm(file);
          return billedCall(ctx.services, 'parse', vscode.l10n.t('Parsing {0}…', name), (signal) =>
            parsePdf(ctx.services.http(), file, signal, form),
          );
        });
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
        const result = await withTargetFile(uri, async (file) => {
          await checkOcrFile(file);
          return billedCall(ctx.services, 'ocr', vscode.l10n.t('Reading the text of {0} (OCR)…', name), (signal) =>
            ocrFile(ctx.services.http(), file, signal),
          );
        });
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
        const file = await withTargetFile(uri, async (opened) => {
          const form = await extractForm(opened);
          return billedCall(ctx.services, 'upload', vscode.l10n.t('Uploading {0} for extraction…', name), (signal) =>
            uploadForExtract(http, owner?.id, opened, signal, form),
          );
        });
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
  ...webToolCommands,
];
