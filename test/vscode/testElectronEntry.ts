/**
 * The usual @vscode/test-electron entry point. On a machine with internet and
 * MODEL_GATEWAY_USE_DESKTOP_VSCODE=1 it downloads and runs desktop VS Code; otherwise it hands
 * test-electron the code-server shim as "the VS Code executable", so the same call works offline.
 *
 *   npx tsx test/vscode/testElectronEntry.ts <extensionDevelopmentPath> <extensionTestsPath> <workspace>
 */
import * as path from 'node:path';
import { runTests, TestRunFailedError } from '@vscode/test-electron';

const SHIM = path.join(__dirname, 'code-server-electron-shim.js');

export async function runWithTestElectron(opts: {
  devPath: string;
  testsPath: string;
  workspace: string;
  extensionTestsEnv?: Record<string, string>;
}): Promise<number> {
  const useDesktop = process.env.MODEL_GATEWAY_USE_DESKTOP_VSCODE === '1';
  try {
    return await runTests({
      ...(useDesktop ? {} : { vscodeExecutablePath: SHIM }),
      extensionDevelopmentPath: path.resolve(opts.devPath),
      extensionTestsPath: path.resolve(opts.testsPath),
      launchArgs: [path.resolve(opts.workspace), '--disable-extensions'],
      ...(opts.extensionTestsEnv && { extensionTestsEnv: opts.extensionTestsEnv }),
    });
  } catch (error) {
    // runTests rejects on a non-zero exit; callers want the code, as from any other test command.
    if (error instanceof TestRunFailedError) return error.code ?? 1;
    throw error;
  }
}

if (require.main === module) {
  const [devPath, testsPath, workspace] = process.argv.slice(2);
  if (!devPath || !testsPath || !workspace) {
    console.error(
      'usage: tsx test/vscode/testElectronEntry.ts <extensionDevelopmentPath> <extensionTestsPath> <workspace>',
    );
    process.exit(2);
  }
  runWithTestElectron({ devPath, testsPath, workspace }).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
