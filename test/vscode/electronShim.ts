/**
 * Stands in for the VS Code executable that @vscode/test-electron's runTests() spawns: it reads the
 * Electron-style command line and runs the same tests on code-server instead.
 */
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { findLeaks } from '../support/leakScan';
import { runExtensionTests } from './runInExtensionHost';

export interface ShimInvocation {
  devPath: string;
  testsPath: string;
  workspace: string;
}

/**
 * Flags this harness has no use for (--no-sandbox, --disable-extensions, test-electron's
 * --user-data-dir=/--extensions-dir=, ...) are ignored: each run gets a fresh profile anyway.
 * Flags with values must use the `--flag=value` form, as test-electron writes them.
 */
export function parseShimArgs(argv: string[]): ShimInvocation {
  const single = (what: string, values: string[]): string => {
    const [only] = values;
    if (values.length !== 1 || !only) throw new Error(`exactly one ${what} is supported (got ${values.length})`);
    return path.resolve(only);
  };
  const flagValues = (flag: string): string[] =>
    argv.filter((arg) => arg.startsWith(`--${flag}=`)).map((arg) => arg.slice(`--${flag}=`.length));
  return {
    devPath: single('--extensionDevelopmentPath=', flagValues('extensionDevelopmentPath')),
    testsPath: single('--extensionTestsPath=', flagValues('extensionTestsPath')),
    workspace: single(
      'folder argument (launchArgs: [workspace])',
      argv.filter((arg) => !arg.startsWith('-')),
    ),
  };
}

/** Returns the process exit code: the tests' own, or 2 when the command line makes no sense. */
export async function runShim(argv: string[]): Promise<number> {
  let invocation: ShimInvocation;
  try {
    invocation = parseShimArgs(argv);
  } catch (error) {
    console.error(`code-server shim: ${(error as Error).message}`);
    return 2;
  }
  // Secrets to look for in the scratch profile once the run is over (newline-separated), and
  // where to write what was found: only this harness can see the profile before it is deleted.
  const secrets = (process.env.MODEL_GATEWAY_PROFILE_SECRETS ?? '').split('\n').filter(Boolean);
  const report = process.env.MODEL_GATEWAY_LEAK_REPORT;
  const inspectProfile =
    secrets.length && report
      ? async (dir: string) => writeFile(report, JSON.stringify(await findLeaks(dir, secrets)))
      : undefined;
  const { exitCode } = await runExtensionTests({ ...invocation, ...(inspectProfile && { inspectProfile }) });
  return exitCode;
}
