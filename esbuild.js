// Bundles the extension host code (Node, CommonJS, `vscode` external) into dist/.
// Webview apps are added to `webviewEntries` as they are written; they build as browser bundles.
const esbuild = require('esbuild');
const fs = require('node:fs');
const path = require('node:path');
// A development dependency, as esbuild is: only for reading which exports the lazy parts use.
const ts = require('typescript');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const tests = process.argv.includes('--tests');

/** TypeScript files below `dir` (Node 20 has no fs.globSync). */
function tsFiles(dir) {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/**
 * undici (~310 KiB minified, most of the host code) goes to dist/undici.js, which the host bundle
 * requires on the first request (src/core/http.ts), so activation does not read it. Only the one
 * module src/core/undiciParts.ts holds undici; nothing else of ours goes to that file, so no module
 * state is split between the two.
 * @type {import('esbuild').Plugin}
 */
const undiciApart = {
  name: 'undici-apart',
  setup(build) {
    build.onResolve({ filter: /^\.\/undiciParts$/ }, () => ({ path: './undici.js', external: true }));
  },
};

/**
 * The parts of our own code that activation does not need, each built into a file of its own that
 * is required on first use, so activation does not read them (`npm run bench` reports what it
 * loads). What two parts (or a part and the entry) share is kept once, in the entry (throughEntry).
 * - the features (src/host/features.ts and what only it uses) go to dist/features.js, which the
 *   entry requires the first time a command runs or a view, tool or provider is used (src/extension.ts);
 * - the HTTP client (src/core/http.ts: its TLS, proxy, body and error handling) goes to dist/http.js,
 *   which src/host/services.ts requires when it makes the client for the first request (just
 *   before the client requires dist/undici.js).
 */
const LAZY_PARTS = [
  { source: 'src/host/features.ts', file: 'features.js' },
  { source: 'src/core/http.ts', file: 'http.js' },
];

/**
 * Leaves every import of a lazy part (LAZY_PARTS, paths below `absWorkingDir`) as a require of its file.
 * @returns {import('esbuild').Plugin}
 */
function partsApart(absWorkingDir) {
  const files = new Map(LAZY_PARTS.map((p) => [path.resolve(absWorkingDir, p.source), p.file]));
  const names = [...new Set(LAZY_PARTS.map((p) => path.basename(p.source, '.ts')))];
  return {
    name: 'parts-apart',
    setup(build) {
      build.onResolve({ filter: new RegExp(`(^|/)(${names.join('|')})$`) }, async (args) => {
        if (args.kind === 'entry-point' || args.pluginData?.partsApart) return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: { partsApart: true },
        });
        const file = files.get(resolved.path);
        return file ? { path: `./${file}`, external: true } : undefined;
      });
    },
  };
}

/**
 * One namespace object for the `vscode` module per output file. esbuild gives each file that does
 * `import * as vscode from 'vscode'` its own copy of the module's exports (`__toESM`: a getter per
 * name), and VS Code's API has some 300 names: the entry's 13 copies took 5–15 ms of its loading in
 * an extension host. Every import of `vscode` now reads one module that re-exports it, copied once.
 * @type {import('esbuild').Plugin}
 */
const vscodeOnce = {
  name: 'vscode-once',
  setup(build) {
    build.onResolve({ filter: /^vscode$/ }, (args) =>
      args.namespace === 'vscode-once'
        ? { path: 'vscode', external: true }
        : { path: 'vscode', namespace: 'vscode-once' },
    );
    build.onLoad({ filter: /.*/, namespace: 'vscode-once' }, () => ({
      contents: "export * from 'vscode';",
      loader: 'js',
    }));
  },
};

/**
 * Packages whose modules have no side effects although their package.json does not say so
 * (`"sideEffects": false`), so esbuild kept the top level of modules nothing uses: jsonc-parser's
 * formatter cache (impl/string-intern.js) builds some 1,200 strings as the entry loads, ~1.5 ms of
 * activation, for formatting, which the extension never does (it only parses).
 */
const SIDE_EFFECT_FREE = /[\\/]node_modules[\\/]jsonc-parser[\\/]/;

/** @type {import('esbuild').Plugin} */
const sideEffectFree = {
  name: 'side-effect-free',
  setup(build) {
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.sideEffectFree || !SIDE_EFFECT_FREE.test(args.importer)) return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { sideEffectFree: true },
      });
      if (resolved.errors.length || resolved.external || !SIDE_EFFECT_FREE.test(resolved.path)) return undefined;
      return { path: resolved.path, sideEffects: false };
    });
  },
};

/**
 * Keeps one copy of every module the entry and the lazy parts share. Each import of a part
 * bundle that resolves to a module of `entryModules` (absolute paths) becomes a read of that module's
 * exports from the entry (`require('./extension.js').__modules[i]`, the entry's own instance), so
 * classes (GatewayError and `instanceof`), caches and settings (the l10n bundle, the display
 * locale) exist once. `indexes` numbers those modules; with `external`, the imports are left as
 * external imports of `entry-module-<i>` (to read which names the parts use, see importedNames).
 * @param {Set<string>} entryModules
 * @param {Map<string, number>} indexes
 * @param {boolean} external
 * @returns {import('esbuild').Plugin}
 */
function throughEntry(entryModules, indexes, external) {
  // A package counts as a whole: the parts reach all of a package the entry uses through the
  // entry, which also gets the package's files it did not need itself (re-exporting index files).
  const packageOf = (file) => /^(.*[\\/]node_modules[\\/](?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(file)?.[1] ?? file;
  const entryPackages = new Set([...entryModules].map(packageOf));
  return {
    name: 'through-entry',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.namespace === 'through-entry') return { path: args.path, external: true };
        if (args.kind === 'entry-point' || args.pluginData?.throughEntry) return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: { throughEntry: true },
        });
        if (
          resolved.errors.length ||
          resolved.external ||
          !(entryModules.has(resolved.path) || entryPackages.has(packageOf(resolved.path)))
        )
          return undefined;
        if (!indexes.has(resolved.path)) {
          if (!external) throw new Error(`${resolved.path} was not seen when the parts' imports were read`);
          indexes.set(resolved.path, indexes.size);
        }
        const name = `entry-module-${indexes.get(resolved.path)}`;
        return external ? { path: name, external: true } : { path: name, namespace: 'through-entry' };
      });
      build.onLoad({ filter: /.*/, namespace: 'through-entry' }, (args) => ({
        contents: `module.exports = require('./extension.js').__modules[${Number(args.path.replace('entry-module-', ''))}];`,
        loader: 'js',
      }));
    },
  };
}

/**
 * For each namespace alias in `aliases`, the members read from it in `code` (`alias.name`), or `'*'`
 * if it is used in any other way. Parsed once with TypeScript (a development dependency), so that
 * strings, regular expressions and property names are not taken for uses.
 * @param {string} code
 * @param {Set<string>} aliases
 * @returns {Map<string, Set<string> | '*'>}
 */
function namespaceMembers(code, aliases) {
  const source = ts.createSourceFile('features.mjs', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  /** @type {Map<string, Set<string> | '*'>} */
  const uses = new Map([...aliases].map((alias) => [alias, new Set()]));
  const visit = (node) => {
    if (ts.isIdentifier(node) && aliases.has(node.text)) {
      const members = uses.get(node.text);
      const parent = node.parent;
      if (members !== '*') {
        if (ts.isPropertyAccessExpression(parent) && parent.expression === node) members.add(parent.name.text);
        else if (!(
          ts.isNamespaceImport(parent) ||
          (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
          (ts.isPropertyAssignment(parent) && parent.name === node)
        ))
          uses.set(node.text, '*');
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

/**
 * Which exports of each shared module a lazy part uses: read from the import statements of an
 * unminified ES-module build of the part in which the shared modules are external (esbuild
 * keeps only the names that are used). `'*'` when a module is used whole (a namespace, a require).
 * @returns {Promise<Map<number, Set<string> | '*'>>}
 */
async function importedNames(options, entryModules, indexes) {
  const result = await esbuild.build({
    ...options,
    format: 'esm',
    minify: false,
    sourcemap: false,
    metafile: false,
    write: false,
    logLevel: 'silent',
    plugins: [
      vscodeOnce,
      sideEffectFree,
      undiciApart,
      partsApart(options.absWorkingDir),
      throughEntry(entryModules, indexes, true),
    ],
  });
  const text = result.outputFiles[0].text;
  /** @type {Map<number, Set<string> | '*'>} */
  const names = new Map([...indexes.values()].map((i) => [i, new Set()]));
  const imports = [...text.matchAll(/^import\s*([^;]*?)\s*from\s*"entry-module-(\d+)";/gm)].map((m) => ({
    clause: m[1],
    i: Number(m[2]),
  }));
  const aliasOf = (clause) => /^\*\s*as\s+([\w$]+)$/.exec(clause)?.[1];
  const members = namespaceMembers(text, new Set(imports.map((m) => aliasOf(m.clause)).filter(Boolean)));
  for (const { clause, i } of imports) {
    const set = names.get(i);
    if (set === '*') continue;
    const alias = aliasOf(clause);
    // A namespace read as `ns.name` only gives those names; used in any other way, it is taken whole.
    const used = alias ? members.get(alias) : clause.includes('*') ? '*' : undefined;
    if (used === '*') names.set(i, '*');
    if (used) {
      if (used !== '*') for (const name of used) set.add(name);
      continue;
    }
    if (
      clause
        .replace(/\{[^}]*\}/, '')
        .replace(/,/g, '')
        .trim()
    )
      set.add('default');
    const braces = /\{([^}]*)\}/.exec(clause);
    for (const spec of (braces?.[1] ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean))
      set.add(spec.split(/\s+as\s+/)[0].trim());
  }
  for (const m of text.matchAll(/require\("entry-module-(\d+)"\)/g)) names.set(Number(m[1]), '*');
  return names;
}

/**
 * The entry: src/extension.ts, plus what the lazy parts read from it (`__modules`, see throughEntry):
 * for each shared module, an ES-module-like object with live getters for the names the parts
 * use, so that the entry keeps only those (a whole namespace only where a part uses it whole).
 * @param {Map<string, number>} indexes
 * @param {Map<number, Set<string> | '*'>} names
 */
function entrySource(indexes, names) {
  const lines = ["export { activate, deactivate } from './src/extension.ts';", 'export const __modules = [];'];
  for (const [file, i] of indexes) {
    const used = names.get(i) ?? '*';
    if (used === '*') {
      lines.push(`import * as m${i} from ${JSON.stringify(file)};`);
      lines.push(
        `__modules[${i}] = '__esModule' in m${i} ? m${i} : Object.defineProperty(m${i}, '__esModule', { value: true });`,
      );
      continue;
    }
    const list = [...used];
    lines.push(
      list.length
        ? `import { ${list.map((n, k) => `${n} as m${i}_${k}`).join(', ')} } from ${JSON.stringify(file)};`
        : `import ${JSON.stringify(file)};`,
    );
    lines.push(
      `__modules[${i}] = { __esModule: true, ${list.map((n, k) => `get ${JSON.stringify(n)}() { return m${i}_${k}; }`).join(', ')} };`,
    );
  }
  return lines.join('\n');
}

/**
 * The source files and packages an esbuild metafile says went into its (one) output. Each output
 * has its own `vscode` namespace module (vscodeOnce), which is not a shared module.
 */
function inputsOf(metafile, absWorkingDir) {
  const output = Object.values(metafile.outputs).find(
    (o) => o.entryPoint !== undefined || Object.keys(o.inputs).length,
  ) ?? { inputs: {} };
  return new Set(
    Object.keys(output.inputs)
      .filter((k) => k !== '<stdin>' && !k.startsWith('vscode-once:') && !k.startsWith('through-entry:'))
      .map((k) => path.resolve(absWorkingDir, k)),
  );
}

/** Both maps of names (importedNames) in one: a module used whole by either part is used whole. */
function mergeNames(into, from) {
  for (const [i, used] of from) {
    const had = into.get(i);
    if (had === '*' || used === '*') into.set(i, '*');
    else into.set(i, new Set([...(had ?? []), ...used]));
  }
  return into;
}

/**
 * Builds the host code into `outdir`: the entry dist/extension.js (what activation loads), the lazy
 * parts (LAZY_PARTS: dist/features.js, dist/http.js) and undici dist/undici.js, each loaded on
 * first use. Also used by test/bench, so that it measures what ships; `plugins` are added to every
 * build (the bench's instrumentation). Returns the metafiles of the outputs, by part.
 * @param {{ production?: boolean, outdir?: string, absWorkingDir?: string, plugins?: import('esbuild').Plugin[], logLevel?: import('esbuild').LogLevel }} options
 */
async function buildHost(options = {}) {
  const prod = options.production ?? production;
  const outdir = options.outdir ?? 'dist';
  const absWorkingDir = options.absWorkingDir ?? __dirname;
  const plugins = options.plugins ?? [];
  const shared = {
    absWorkingDir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: prod,
    sourcemap: prod ? false : 'linked',
    legalComments: 'none',
    logLevel: options.logLevel ?? 'info',
    metafile: true,
    // jsonc-parser's "main" is a UMD build whose factory requires its own files at run time, which a
    // bundler cannot follow; its "module" (ES) build bundles. Packages with "exports" are unaffected.
    mainFields: ['module', 'main'],
    external: ['vscode'],
  };
  const apart = partsApart(absWorkingDir);
  const undici = esbuild.build({
    ...shared,
    entryPoints: ['src/core/undiciParts.ts'],
    outfile: path.join(outdir, 'undici.js'),
    plugins,
  });
  // The entry's own modules first; the parts then take every one of them from the entry. A module
  // two parts share, or one the entry gains by exporting whole namespaces, is found by the overlap
  // check, and the builds are made again with it on the entry's side.
  const graph = await esbuild.build({
    ...shared,
    entryPoints: ['src/extension.ts'],
    write: false,
    sourcemap: false,
    logLevel: 'silent',
    plugins: [vscodeOnce, sideEffectFree, undiciApart, apart],
  });
  let entryModules = inputsOf(graph.metafile, absWorkingDir);
  for (let round = 0; round < 3; round++) {
    const indexes = new Map();
    const partOptions = LAZY_PARTS.map((part) => ({
      ...shared,
      entryPoints: [part.source],
      outfile: path.join(outdir, part.file),
    }));
    const names = new Map();
    for (const o of partOptions) mergeNames(names, await importedNames(o, entryModules, indexes));
    const parts = await Promise.all(
      partOptions.map((o) =>
        esbuild.build({
          ...o,
          plugins: [
            vscodeOnce,
            sideEffectFree,
            undiciApart,
            apart,
            throughEntry(entryModules, indexes, false),
            ...plugins,
          ],
        }),
      ),
    );
    const entry = await esbuild.build({
      ...shared,
      stdin: {
        contents: entrySource(indexes, names),
        resolveDir: absWorkingDir,
        sourcefile: 'extension-entry.js',
        loader: 'js',
      },
      outfile: path.join(outdir, 'extension.js'),
      plugins: [vscodeOnce, sideEffectFree, undiciApart, apart, ...plugins],
    });
    const inputs = [entry, ...parts].map((b) => inputsOf(b.metafile, absWorkingDir));
    const seen = new Map();
    for (const file of inputs.flatMap((set) => [...set])) seen.set(file, (seen.get(file) ?? 0) + 1);
    const twice = [...seen].filter(([, n]) => n > 1).map(([file]) => file);
    if (!twice.length)
      return {
        entry: entry.metafile,
        ...Object.fromEntries(LAZY_PARTS.map((p, i) => [path.basename(p.file, '.js'), parts[i].metafile])),
        undici: (await undici).metafile,
      };
    entryModules = new Set([...inputs[0], ...twice]);
    if (round === 2)
      throw new Error(
        `These modules are in more than one of dist/extension.js and the lazy parts: ${twice.join(', ')}`,
      );
  }
}

/**
 * `import source from './file?worker'` gives the text of `file`'s own browser bundle (minified
 * when the importing build is), which the page starts as a Web Worker from a blob: URL: VS Code
 * webviews run workers only from blob: or data: URLs, not from the extension's files
 * (https://code.visualstudio.com/api/extension-guides/webview#using-web-workers).
 * The webview tests and the bench build the chat bundle with this plugin too (test/webview/harness.ts).
 * @type {import('esbuild').Plugin}
 */
const workerText = {
  name: 'worker-text',
  setup(build) {
    build.onResolve({ filter: /\?worker$/ }, async (args) => {
      const resolved = await build.resolve(args.path.slice(0, -'?worker'.length), {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
      });
      if (resolved.errors.length) return { errors: resolved.errors };
      return { path: resolved.path, namespace: 'worker-text' };
    });
    build.onLoad({ filter: /.*/, namespace: 'worker-text' }, async (args) => {
      const result = await esbuild.build({
        entryPoints: [args.path],
        bundle: true,
        platform: 'browser',
        format: 'iife',
        target: build.initialOptions.target ?? 'es2022',
        minify: build.initialOptions.minify ?? false,
        legalComments: 'none',
        write: false,
        metafile: true,
        logLevel: 'silent',
      });
      const text = result.outputFiles[0]?.text ?? '';
      return {
        contents: text,
        loader: 'text',
        watchFiles: Object.keys(result.metafile.inputs).map((file) => path.resolve(file)),
      };
    });
  },
};

/** @type {import('esbuild').BuildOptions[]} */
const webviewBuilds = [
  {
    // The chat webview app (browser). `entities` is replaced by a small shim that lets the browser
    // decode HTML entities (saves ~75 KB; see src/webview/chat/entities.ts).
    entryPoints: ['src/webview/chat/main.ts'],
    outfile: 'dist/webview/chat.js',
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    alias: { entities: './src/webview/chat/entities.ts' },
    plugins: [workerText],
    minify: production,
    sourcemap: production ? false : 'linked',
    legalComments: 'none',
    logLevel: 'info',
  },
  {
    // The Media Studio webview app (browser): plain DOM and zod/mini, no Markdown.
    entryPoints: ['src/webview/media/main.ts'],
    outfile: 'dist/webview/media.js',
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: production,
    sourcemap: production ? false : 'linked',
    legalComments: 'none',
    logLevel: 'info',
  },
];

// Tests that run inside the VS Code extension host need JavaScript: transpile src and test
// file by file (no bundling) into out/, keeping the folder layout so relative imports work.
if (tests) {
  webviewBuilds.push({
    entryPoints: [...tsFiles('src/core'), ...tsFiles('test')],
    outdir: 'out',
    outbase: '.',
    bundle: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'warning',
  });
}

async function main() {
  if (watch) {
    const contexts = await Promise.all(webviewBuilds.map((b) => esbuild.context(b)));
    await Promise.all(contexts.map((c) => c.watch()));
    // The host bundles are built in steps (see buildHost), which esbuild's watch mode cannot
    // follow: they are built again whenever a file below src/ changes.
    let timer;
    const rebuild = () => buildHost().catch((err) => console.error(err));
    await rebuild();
    fs.watch('src', { recursive: true }, () => {
      clearTimeout(timer);
      timer = setTimeout(rebuild, 200);
    });
    return;
  }
  await Promise.all([buildHost(), ...webviewBuilds.map((b) => esbuild.build(b))]);
}

module.exports = { buildHost, workerText };

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
