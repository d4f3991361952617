/**
 * Runs the VS Code chat provider suite inside a real VS Code 1.139 extension host (code-server
 * 4.139.1 on a Node 24 from the npm registry; see test/vscode/codeServer.ts) and returns its counts.
 * The provider API is stable from 1.104, so it cannot run on the 1.100 the other suites use; 1.139
 * is the newest VS Code that runs here, the one whose Chat view the native suite drives.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEMO_KEY, DISABLED_KEY, ZERO_QUOTA_KEY } from '../gateway';
import { readCounts } from '../integration/run';
import { findLeaks } from '../support/leakScan';
import { buildForTests } from '../vscode/builds';
import { VSCODE_1_139 } from '../vscode/codeServer';
import { runExtensionTests } from '../vscode/runInExtensionHost';

export interface SuiteCounts {
  passed: number;
  failed: number;
  skipped: number;
}

const root = path.resolve(__dirname, '../..');

export async function runLmSuite(opts: { grep?: string } = {}): Promise<SuiteCounts> {
  buildForTests();
  const work = mkdtempSync(path.join(os.tmpdir(), 'mg-lm-'));
  const resultsFile = path.join(work, 'results.json');
  const workspace = path.join(work, 'workspace');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(path.join(workspace, 'README.md'), '# VS Code chat workspace\n');
  let leaks: string[] | undefined;
  try {
    const { exitCode } = await runExtensionTests({
      devPath: root,
      testsPath: path.join(root, 'out/test/lm/index.js'),
      workspace,
      build: VSCODE_1_139,
      timeoutMs: 300_000,
      env: { MODEL_GATEWAY_TEST_RESULTS: resultsFile, ...(opts.grep ? { MODEL_GATEWAY_TEST_GREP: opts.grep } : {}) },
      // The key must live only in SecretStorage: never in settings, state, logs or other files.
      inspectProfile: async (dir) => {
        leaks = await findLeaks(dir, [DEMO_KEY, DISABLED_KEY, ZERO_QUOTA_KEY]);
      },
    });
    const counts: SuiteCounts = readCounts(resultsFile, exitCode);
    if (leaks === undefined) {
      console.error('The profile could not be scanned for the API key.');
      counts.failed += 1;
    } else if (leaks.length) {
      console.error(`An API key was found in the profile, outside secret storage:\n  ${leaks.join('\n  ')}`);
      counts.failed += 1;
    } else {
      console.log('  ✔ no API key anywhere in the 1.139 profile (settings, state, logs) outside secret storage');
      counts.passed += 1;
    }
    return counts;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  runLmSuite({ grep: process.argv[2] }).then((c) => {
    console.log(`${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
    process.exit(c.failed ? 1 : 0);
  });
}
