/**
 * The strings of src that the English bundle (l10n/bundle.l10n.json) must hold: what
 * @vscode/l10n-dev extracts from `l10n.t(…)` calls, and the literal template of every
 * `words(…)` call (src/shared/words.ts: a sentence kept as template and arguments, worded when
 * shown), which that extractor does not know. `npm run l10n` runs the extractor's export and then
 * this file, which adds the templates the export left out; the l10n unit test compares the bundle
 * with `l10nStrings()`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { getL10nJson, type l10nJsonFormat } from '@vscode/l10n-dev';
import { findFiles } from '../runAll';

const root = path.resolve(__dirname, '../..');

export function sourceFiles(): string[] {
  return findFiles(path.join(root, 'src'), '.ts').filter((f) => !f.endsWith('.d.ts'));
}

/** Every `words(…)` call of a file: its first argument, when it is a literal, and where it is. */
export function wordsCalls(file: string, text: string): Array<{ template?: string; line: number }> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Array<{ template?: string; line: number }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'words') {
      const first = node.arguments[0];
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      found.push(
        first && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first))
          ? { template: first.text, line }
          : { line },
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Adds to `bundle` the literal template of every `words(…)` call in `files` that it lacks, in the order found. */
function addWordsTemplates(bundle: l10nJsonFormat, files: ReadonlyArray<{ file: string; contents: string }>): void {
  for (const { file, contents } of files)
    for (const call of wordsCalls(file, contents))
      if (call.template !== undefined) bundle[call.template] ??= call.template;
}

const readSources = (files: string[]): Array<{ file: string; contents: string }> =>
  files.map((file) => ({ file, contents: readFileSync(file, 'utf8') }));

export async function l10nStrings(files = sourceFiles()): Promise<l10nJsonFormat> {
  const texts = readSources(files);
  const bundle = await getL10nJson(texts.map((t) => ({ contents: t.contents, extension: path.extname(t.file) })));
  addWordsTemplates(bundle, texts);
  return bundle;
}

/** Adds the `words(…)` templates to the bundle the export wrote, after its own strings (kept in its order). */
function main(): void {
  const file = path.join(root, 'l10n/bundle.l10n.json');
  const bundle = JSON.parse(readFileSync(file, 'utf8')) as l10nJsonFormat;
  addWordsTemplates(bundle, readSources(sourceFiles()));
  writeFileSync(file, JSON.stringify(bundle, undefined, 2));
  console.log(`l10n/bundle.l10n.json: ${Object.keys(bundle).length} strings`);
}

if (require.main === module) main();
