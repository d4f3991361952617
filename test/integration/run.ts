/**
 * Runs the integration suites inside a real VS Code extension host (code-server here, see
 * test/vscode) and returns their counts for the summary line.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildForTests } from '../vscode/builds';
import { runWithTestElectron } from '../vscode/testElectronEntry';
import { DEMO_KEY, DISABLED_KEY } from '../gateway';

export interface SuiteCounts {
  passed: number;
  failed: number;
  skipped: number;
}

const root = path.resolve(__dirname, '../..');

export async function runIntegrationSuite(opts: { grep?: string } = {}): Promise<SuiteCounts> {
  buildForTests();
  const work = mkdtempSync(path.join(os.tmpdir(), 'mg-integration-'));
  const resultsFile = path.join(work, 'results.json');
  const workspace = path.join(work, 'workspace');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(path.join(workspace, 'README.md'), '# Integration workspace\n');
  const leakReport = path.join(work, 'leaks.json');
  try {
    // The standard test-electron entry: desktop VS Code where it can be downloaded, code-server here.
    const exitCode = await runWithTestElectron({
      devPath: root,
      testsPath: path.join(root, 'out/test/integration/index.js'),
      workspace,
      extensionTestsEnv: {
        MODEL_GATEWAY_TEST_RESULTS: resultsFile,
        ...(opts.grep ? { MODEL_GATEWAY_TEST_GREP: opts.grep } : {}),
        // The key must live only in SecretStorage: never in settings, state, logs or other files.
        MODEL_GATEWAY_PROFILE_SECRETS: [DEMO_KEY, DISABLED_KEY].join('\n'),
        MODEL_GATEWAY_LEAK_REPORT: leakReport,
      },
    });
    const counts = readCounts(resultsFile, exitCode);
    // Only the code-server harness can scan the profile; desktop VS Code runs report no scan.
    if (existsSync(leakReport)) {
      const leaks: string[] = JSON.parse(readFileSync(leakReport, 'utf8'));
      if (leaks.length) {
        console.error(`An API key was found in the profile, outside secret storage:\n  ${leaks.join('\n  ')}`);
        counts.failed += 1;
      } else {
        console.log('  ✔ no API key anywhere in the profile (settings, state, logs) outside secret storage');
        counts.passed += 1;
      }
    }
    return counts;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The counts the extension host wrote (test/integration/index.ts). A run that ended early (window
 * gone, time limit) left its counts so far: the interruption is one failure and every test that
 * never ran counts as failed too, so nothing disappears from the summary.
 */
export function readCounts(resultsFile: string, exitCode: number): SuiteCounts {
  if (!existsSync(resultsFile)) {
    console.error(`The extension host ended with exit code ${exitCode} before any test finished.`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
  const written = JSON.parse(readFileSync(resultsFile, 'utf8')) as SuiteCounts & { total?: number; done?: boolean };
  const counts: SuiteCounts = { passed: written.passed, failed: written.failed, skipped: written.skipped };
  if (written.done === false) {
    const notRun = Math.max(0, (written.total ?? 0) - counts.passed - counts.failed - counts.skipped);
    console.error(
      `The run in the extension host ended early (exit code ${exitCode}); ${notRun} test(s) never ran and count as failed, plus one for the interruption.`,
    );
    counts.failed += notRun + 1;
  }
  return counts;
}

if (require.main === module) {
  runIntegrationSuite({ grep: process.argv[2] }).then((c) => {
    console.log(`${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
    process.exit(c.failed ? 1 : 0);
  });
}
