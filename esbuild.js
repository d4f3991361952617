// Bundles the extension host code (Node, CommonJS, `vscode` external) into dist/.
// Webview apps are added to `webviewEntries` as they are written; they build as browser bundles.
const esbuild = require('esbuild');
const fs = require('node:fs');
const path = require('node:path');

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

/** The host bundles' options (also used by test/bench, so that it measures what ships). */
function hostBuilds(options = {}) {
  const shared = {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: options.production ?? production,
    sourcemap: (options.production ?? production) ? false : 'linked',
    legalComments: 'none',
    logLevel: 'info',
  };
  return [
    {
      ...shared,
      entryPoints: ['src/extension.ts'],
      outfile: 'dist/extension.js',
      // jsonc-parser's "main" is a UMD build whose factory requires its own files at run time, which a
      // bundler cannot follow; its "module" (ES) build bundles. Packages with "exports" are unaffected.
      mainFields: ['module', 'main'],
      external: ['vscode'],
      plugins: [undiciApart],
    },
    {
      ...shared,
      entryPoints: ['src/core/undiciParts.ts'],
      outfile: 'dist/undici.js',
    },
  ];
}

/** @type {import('esbuild').BuildOptions[]} */
const builds = [
  ...hostBuilds(),
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
  builds.push({
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
    const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
    await Promise.all(contexts.map((c) => c.watch()));
    return;
  }
  await Promise.all(builds.map((b) => esbuild.build(b)));
}

module.exports = { hostBuilds };

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
