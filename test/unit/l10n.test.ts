import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import * as l10n from '@vscode/l10n';
import { errorFromResponse } from '../../src/core/errorBody';
import { l10nStrings, sourceFiles, wordsCalls } from '../support/l10nStrings';

/**
 * The strings of the code are localised through `vscode.l10n.t` (host) and `l10n.t` from
 * @vscode/l10n (core and webviews), or kept as `words(…)` to be worded when shown; `npm run l10n`
 * extracts them into l10n/bundle.l10n.json, the English bundle, and l10n/bundle.l10n.zh-cn.json
 * holds the Simplified Chinese.
 */
const root = path.resolve(__dirname, '../..');
const sources = sourceFiles();
const readJson = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path.join(root, file), 'utf8')) as Record<string, unknown>;

/** `{0}`, `{name}`: what a translation must keep. */
const placeholders = (text: string): string => (text.match(/\{[^{}\s]+\}/g) ?? []).sort().join(' ');

/** The message of a bundle entry (a string, or `{message, comment}`). */
function messageOf(entry: unknown): string {
  if (typeof entry === 'string') return entry;
  if (entry && typeof entry === 'object' && typeof (entry as { message?: unknown }).message === 'string')
    return (entry as { message: string }).message;
  throw new Error(`unexpected bundle entry ${JSON.stringify(entry)}`);
}

/** An English word: two letters or more with a lower-case one (`MP4`, `PNG`, `×` are not words). */
const ENGLISH_WORD = /[A-Za-z]*[a-z][A-Za-z]*/g;
const hasEnglish = (text: string): boolean => (text.match(ENGLISH_WORD) ?? []).some((word) => word.length >= 2);

/** Whether an expression can be, or contain, a literal English text (an `l10n.t(…)` call cannot). */
function literalEnglish(node: ts.Expression): boolean {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return hasEnglish(node.text);
  if (ts.isTemplateExpression(node))
    return (
      hasEnglish([node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' ')) ||
      node.templateSpans.some((span) => literalEnglish(span.expression))
    );
  if (ts.isConditionalExpression(node)) return literalEnglish(node.whenTrue) || literalEnglish(node.whenFalse);
  if (ts.isBinaryExpression(node)) return literalEnglish(node.left) || literalEnglish(node.right);
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node)) return literalEnglish(node.expression);
  return false;
}

/** Properties and attributes whose value the user reads or hears. */
const SHOWN_PROPERTIES = new Set([
  'textContent',
  'innerText',
  'title',
  'placeholder',
  'alt',
  'ariaLabel',
  'text',
  'label',
  'aria-label',
]);
const SHOWN_ATTRIBUTES = new Set(['title', 'aria-label', 'placeholder', 'alt', 'label']);
/** Webview helpers that put an argument on screen, and which arguments (from this index on). */
const SHOWING_CALLS: Record<string, number> = {
  button: 0,
  field: 0,
  labelled: 0,
  showNote: 0,
  setText: 1,
  fillModels: 4,
  h: 2,
  append: 0,
  prepend: 0,
  after: 0,
  before: 0,
  replaceChildren: 0,
};

/** `file:line: text` for every literal English text the webview code puts on screen without l10n.t. */
export function unlocalisedWebviewText(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Expression): void => {
    if (literalEnglish(node))
      found.push(
        `${path.relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText(source)}`,
      );
  };
  const nameOf = (name: ts.PropertyName | ts.MemberName): string =>
    ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : '';
  const visit = (node: ts.Node): void => {
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(node.left) &&
      SHOWN_PROPERTIES.has(node.left.name.text)
    )
      report(node.right);
    else if (ts.isPropertyAssignment(node) && SHOWN_PROPERTIES.has(nameOf(node.name))) report(node.initializer);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : '';
      const [first, second] = node.arguments;
      if (name === 'setAttribute' && first && second && ts.isStringLiteral(first) && SHOWN_ATTRIBUTES.has(first.text))
        report(second);
      const from = SHOWING_CALLS[name];
      if (from !== undefined)
        node.arguments.slice(from).forEach((arg) => report(ts.isSpreadElement(arg) ? arg.expression : arg));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('localisation of the code', function () {
  // A guard against a hang, not a time limit: extracting every string of src takes a minute of CPU,
  // and more than two when `npm test` runs it beside other suites on two busy cores.
  this.timeout(600_000);
  const english = readJson('l10n/bundle.l10n.json');
  const chinese = readJson('l10n/bundle.l10n.zh-cn.json');

  it('has every string the code uses in the English bundle, and nothing the code no longer uses', async () => {
    const extracted = await l10nStrings(sources);
    const used = Object.keys(extracted).sort();
    const bundled = Object.keys(english).sort();
    assert.ok(used.length > 20, `only ${used.length} localised strings found in src`);
    assert.deepEqual(
      used.filter((k) => !bundled.includes(k)),
      [],
      'in the code but not in l10n/bundle.l10n.json: run `npm run l10n`',
    );
    assert.deepEqual(
      bundled.filter((k) => !used.includes(k)),
      [],
      'in l10n/bundle.l10n.json but no longer in the code: run `npm run l10n`',
    );
  });

  it('has a Chinese translation of every string, with the same placeholders', () => {
    const missing = Object.keys(english).filter(
      (key) => typeof chinese[key] !== 'string' || (chinese[key] as string).trim() === '',
    );
    assert.deepEqual(missing, [], 'no translation in l10n/bundle.l10n.zh-cn.json');
    const differ = Object.entries(english)
      .filter(
        ([key, entry]) =>
          typeof chinese[key] === 'string' && placeholders(messageOf(entry)) !== placeholders(chinese[key] as string),
      )
      .map(([key]) => key);
    assert.deepEqual(differ, [], 'a translation whose placeholders differ from its English');
    assert.deepEqual(
      Object.keys(chinese).filter((key) => !(key in english)),
      [],
      'translations of strings the code no longer has',
    );
  });

  it("speaks the display language in core's messages, and shows the gateway's own words as they came", () => {
    try {
      l10n.config({ contents: chinese as Record<string, string> });
      const error = errorFromResponse({
        status: 401,
        body: JSON.stringify({ error: { message: '无效的令牌', type: 'new_api_error' } }),
        route: 'gateway',
      });
      // Chinese sentences follow each other with no space between them (no "）。 网关返回").
      assert.match(error.message, /^API 密钥未被接受（HTTP 401）。网关返回：无效的令牌。请在控制台/);
    } finally {
      l10n.config({ contents: {} });
    }
    const english = errorFromResponse({
      status: 401,
      body: JSON.stringify({ error: { message: 'invalid token', type: 'new_api_error' } }),
      route: 'gateway',
    });
    assert.match(english.message, /^The API key was not accepted \(HTTP 401\)\. The gateway said: invalid token\./);
  });

  it('passes no bare English to a VS Code UI API in host code, nor to a GatewayError anywhere', () => {
    const host = sources.filter((f) => /[\\/]src[\\/](host[\\/]|extension\.ts$)/.test(f));
    const core = sources.filter((f) => /[\\/]src[\\/]core[\\/]/.test(f));
    const found = [
      ...host.flatMap((f) => unlocalisedText(f, 'host')),
      ...core.flatMap((f) => unlocalisedText(f, 'core')),
    ];
    assert.ok(host.length > 20 && core.length > 20, 'the scan found the sources');
    assert.deepEqual(
      found,
      [],
      'text shown to the user without l10n: wrap it in vscode.l10n.t (host) or l10n.t (core)',
    );
  });

  it('catches bare text in each kind of place the scan looks at', () => {
    // The scan must be able to fail: one example per rule, each of which it has to report.
    const bad = [
      "vscode.window.showInformationMessage('Saved the file.');",
      'vscode.window.showWarningMessage(`No text in ${name}.`, { modal: true });',
      'vscode.window.showWarningMessage(message, { modal: true, detail: `More about ${name}` });',
      'vscode.window.showWarningMessage(message, { modal: true }, "Run OCR");',
      "void vscode.window.setStatusBarMessage('Copied to the clipboard', 2000);",
      "vscode.window.withProgress({ location: 1, title: 'Parsing the file…' }, run);",
      "vscode.window.showQuickPick([{ label: 'First item' }]);",
      "vscode.window.showQuickPick(['First item']);",
      "vscode.window.showQuickPick(items, { title: 'Pick one' });",
      "vscode.window.showQuickPick(models.map((m) => ({ label: m.id, description: 'a model' })));",
      "vscode.window.showInputBox({ prompt: 'What to search for' });",
      "vscode.window.showOpenDialog({ openLabel: 'Attach' });",
      "vscode.window.showOpenDialog({ filters: { Images: ['png'] } });",
      'qp.title = `Results for ${query}`;',
      "item.tooltip = 'Click to check the connection.';",
      'status.text = `$(key) Gateway ${masked}`;',
      "new vscode.TreeItem('Chat models');",
      "new vscode.MarkdownString('**Model Gateway**');",
      'tooltip.appendMarkdown(`Key ${masked} is set.`);',
      "throw new GatewayError('badRequest', 'The task is gone.');",
      'const x = { invocationMessage: (i) => `Reading ${i.url}` };',
      "vscode.window.showErrorMessage(ok ? vscode.l10n.t('Fine') : 'Not fine');",
    ];
    for (const line of bad) assert.equal(unlocalisedText('example.ts', 'host', line).length, 1, line);
    const good = [
      "vscode.window.showInformationMessage(vscode.l10n.t('Saved {0}.', name), open);",
      "status.text = `$(key) ${vscode.l10n.t('Gateway {0}', masked)}`;",
      'qp.items = items; item.tooltip = tooltip; status.text = `$(check) ${masked}`;',
      "throw new GatewayError('badRequest', l10n.t('The task is gone.'), { code: 'EEXIST' });",
      'vscode.window.showQuickPick(models.map((m) => ({ label: m.id, description: m.provider })), { title: what });',
    ];
    for (const line of good) assert.deepEqual(unlocalisedText('example.ts', 'host', line), [], line);
    // Core has no VS Code UI; only its errors are checked there.
    assert.deepEqual(unlocalisedText('example.ts', 'core', "item.tooltip = 'x y z';"), []);
    assert.equal(
      unlocalisedText('example.ts', 'core', "throw new GatewayError('protocol', `Bad ${what} answer`);").length,
      1,
    );
  });

  it('puts no literal English on screen in the webviews: texts, titles, accessible names and placeholders go through l10n.t', () => {
    const webview = sources.filter(
      (file) => path.relative(root, file).split(path.sep).slice(0, 2).join('/') === 'src/webview',
    );
    assert.ok(webview.length > 20, `only ${webview.length} webview files found`);
    assert.deepEqual(
      webview.flatMap((file) => unlocalisedWebviewText(file, readFileSync(file, 'utf8'))),
      [],
    );
  });

  it('recognises each way webview code puts a literal on screen (the scan above can fail)', () => {
    const found = unlocalisedWebviewText(
      path.join(root, 'src/webview/example.ts'),
      [
        "el.textContent = 'Saved';",
        "el.title = ok ? l10n.t('Fine') : 'Not fine';",
        "el.setAttribute('aria-label', `Open ${name}`);",
        "h('input', { attrs: { placeholder: 'Type here' } });",
        "button('Send', { ariaLabel: l10n.t('Send the message') });",
        "h('label', {}, input, ' Web search');",
        "setText(note, problem || 'Looks good');",
        // Not shown, or already localised, or no words: none of these is reported.
        "el.textContent = l10n.t('Saved');",
        "el.setAttribute('aria-disabled', 'true');",
        "h('span', { className: 'btn-small', text: `${model} · ${size}` });",
        "h('div', { text: '▶ MP4' });",
      ].join('\n'),
    ).map((line) => line.replace(/^[^:]+:(\d+): .*$/, '$1'));
    assert.deepEqual(found, ['1', '2', '3', '4', '5', '6', '7']);
  });

  it('gives every l10n.t and words call a literal first argument (the extractor cannot see any other)', () => {
    const bad: string[] = [];
    // say() words a template that was extracted where its words(…) call wrote it.
    const wording = path.join(root, 'src/shared/words.ts');
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      for (const call of wordsCalls(file, text))
        if (call.template === undefined) bad.push(`${path.relative(root, file)}:${call.line}`);
      if (file === wording) continue;
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node) && /(^|\.)l10n\.t$/.test(node.expression.getText(source))) {
          const first = node.arguments[0];
          const literal =
            first &&
            (ts.isStringLiteral(first) ||
              ts.isNoSubstitutionTemplateLiteral(first) ||
              ts.isObjectLiteralExpression(first));
          if (!literal)
            bad.push(`${path.relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    assert.deepEqual(bad, []);
  });
});

/** VS Code UI calls whose string arguments (all but option objects) are shown as they are. */
const MESSAGE_CALLS =
  /(^|\.)(showInformationMessage|showWarningMessage|showErrorMessage|setStatusBarMessage|appendMarkdown)$/;
/** UI calls taking an options object (or quick pick items) whose text properties are shown. */
const OPTION_CALLS =
  /(^|\.)(withProgress|showQuickPick|showInputBox|showOpenDialog|showSaveDialog|showInformationMessage|showWarningMessage|showErrorMessage|report|createWebviewPanel)$/;
/** Properties of those objects, of quick pick items and of tree/status bar items, that people read. */
const TEXT_PROPERTIES = new Set([
  'title',
  'prompt',
  'placeHolder',
  'placeholder',
  'detail',
  'openLabel',
  'saveLabel',
  'label',
  'description',
  'tooltip',
  'message',
  'text',
  'invocationMessage',
]);
/** Assignments to these properties set what a quick pick, input box, tree item or status bar item shows. */
const ASSIGNED_PROPERTIES = new Set(['title', 'placeholder', 'prompt', 'tooltip', 'text', 'label', 'description']);
/** Constructors whose first argument is shown. */
const SHOWN_CONSTRUCTORS = /(^|\.)(TreeItem|MarkdownString)$/;

/**
 * Where text reaches the user without l10n: a string or template literal with words in it (the
 * parts outside `${…}`, codicons like `$(key)` aside) passed to a VS Code UI API or as a
 * GatewayError's message. `where` is `host` (all rules) or `core` (GatewayError only, core has no UI).
 */
function unlocalisedText(file: string, where: 'host' | 'core', text = readFileSync(file, 'utf8')): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node): void => {
    found.push(
      `${path.relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText(source).slice(0, 100)}`,
    );
  };
  /** Reports each literal with words that `node` may evaluate to (through ?:, ??, || and parentheses). */
  const check = (node: ts.Expression | undefined): void => {
    if (!node) return;
    if (ts.isParenthesizedExpression(node)) return check(node.expression);
    if (ts.isConditionalExpression(node)) {
      check(node.whenTrue);
      check(node.whenFalse);
      return;
    }
    if (
      ts.isBinaryExpression(node) &&
      [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(node.operatorToken.kind)
    )
      return check(node.right);
    if (ts.isArrowFunction(node) && !ts.isBlock(node.body)) return check(node.body);
    const literalText =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
        ? node.text
        : ts.isTemplateExpression(node)
          ? [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ')
          : undefined;
    // Codicons (`$(key)`) and example addresses are not words to translate.
    if (literalText !== undefined && /[A-Za-z]{2,}/.test(literalText.replace(/\$\([\w~-]+\)|\b[a-z]+:\/\/\S*/g, '')))
      report(node);
  };
  /** The text properties of an object literal (and of the object literals in an array literal). */
  const checkProperties = (node: ts.Expression): void => {
    if (ts.isArrayLiteralExpression(node)) {
      for (const element of node.elements) if (ts.isObjectLiteralExpression(element)) checkProperties(element);
      return;
    }
    if (!ts.isObjectLiteralExpression(node)) return;
    for (const p of node.properties) {
      if (!ts.isPropertyAssignment(p) || !p.name) continue;
      const name = p.name.getText(source);
      if (TEXT_PROPERTIES.has(name)) check(p.initializer);
      // A file dialog's filter names are shown: `{ Images: ['png'] }` must be `{ [l10n.t('Images')]: … }`.
      if (name === 'filters' && ts.isObjectLiteralExpression(p.initializer)) {
        for (const f of p.initializer.properties) if (f.name && !ts.isComputedPropertyName(f.name)) report(f.name);
      }
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node)) {
      const callee = node.expression.getText(source);
      if (/(^|\.)GatewayError$/.test(callee)) check(node.arguments?.[1]);
      else if (where === 'host' && SHOWN_CONSTRUCTORS.test(callee)) check(node.arguments?.[0]);
    }
    if (where === 'host') {
      if (ts.isCallExpression(node)) {
        const callee = node.expression.getText(source);
        if (MESSAGE_CALLS.test(callee)) for (const a of node.arguments) if (!ts.isObjectLiteralExpression(a)) check(a);
        if (OPTION_CALLS.test(callee)) for (const a of node.arguments) checkProperties(a);
        if (/(^|\.)createWebviewPanel$/.test(callee)) check(node.arguments[1]);
        if (
          /(^|\.)showQuickPick$/.test(callee) &&
          node.arguments[0] &&
          ts.isArrayLiteralExpression(node.arguments[0])
        ) {
          for (const element of node.arguments[0].elements) if (!ts.isObjectLiteralExpression(element)) check(element);
        }
      }
      if (
        ts.isBinaryExpression(node) &&
        node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
        ts.isPropertyAccessExpression(node.left) &&
        ASSIGNED_PROPERTIES.has(node.left.name.text)
      ) {
        check(node.right);
      }
      if (ts.isPropertyAssignment(node) && node.name.getText(source) === 'invocationMessage') check(node.initializer);
      if (
        ts.isCallExpression(node) &&
        /(^|\.)map$/.test(node.expression.getText(source)) &&
        node.parent &&
        ts.isCallExpression(node.parent) &&
        /(^|\.)showQuickPick$/.test(node.parent.expression.getText(source))
      ) {
        // Quick pick items built with `.map(m => ({ label, description }))`.
        const fn = node.arguments[0];
        if (fn && ts.isArrowFunction(fn) && !ts.isBlock(fn.body))
          checkProperties(ts.isParenthesizedExpression(fn.body) ? fn.body.expression : fn.body);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
