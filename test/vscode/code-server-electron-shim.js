#!/usr/bin/env node
'use strict';
// test-electron spawns this as "the VS Code executable"; tsx's hook lets it load the TypeScript harness unbuilt.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS script by necessity
require('tsx/cjs/api').register();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const { runShim } = require('./electronShim.ts');

runShim(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
