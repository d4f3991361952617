import tseslint from 'typescript-eslint';

// The arrows go one way: webview → shared ← host → core (core may read shared's pure vocabularies).
// Each layer lists what it must not import; `vscode` only ever in src/host and src/extension.ts.
const vscode = { name: 'vscode', message: 'only src/host and src/extension.ts import vscode' };
// Relative imports only: a package's own folders (highlight.js/lib/core) are not layers.
const layer = (name) => ({
  regex: `^(\\.\\.?/)+(.+/)?${name}(/|$)`,
  message: `this layer must not import src/${name}`,
});
const nodeBuiltins = { group: ['node:*'], message: 'a webview runs in a browser: no Node modules' };

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', 'test-results/**', 'bench-results/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Prettier lays out code at 120; what it cannot break (strings, URLs, comments) gets some room.
      'max-len': [
        'error',
        {
          code: 120,
          comments: 160,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreUrls: true,
          ignoreRegExpLiterals: true,
          // Rows of a Markdown table in a doc comment stay one row a line.
          ignorePattern: '^\\s*\\* \\|',
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 450 }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [vscode], patterns: [layer('host'), layer('webview')] }] },
  },
  {
    files: ['src/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [vscode], patterns: [layer('host'), layer('core'), layer('webview')] },
      ],
    },
  },
  {
    files: ['src/webview/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [vscode], patterns: [layer('host'), layer('core'), nodeBuiltins] }],
    },
  },
  {
    files: ['src/host/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [layer('webview')] }] },
  },
);
