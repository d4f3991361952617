/**
 * The native-chat UI suite: the packaged extension in the newest VS Code that runs here (code-server
 * 4.139, VS Code 1.139), driven through VS Code's own Chat view (Manage Language Models, the model
 * picker, Ask and Agent mode, tool confirmations, Stop) in headless Chromium against the gateway
 * double. Scenarios are the `*.e2e.ts` files of this folder; they share the UI suite's harness.
 *
 *   npx tsx test/native/run.ts [--grep <pattern>]
 */
import { runUiSuite, uiSuiteMain, type UiSuiteOptions, type UiSuiteResult } from '../e2e/run';
import { VSCODE_1_139 } from '../vscode/codeServer';

const OPTIONS: Omit<UiSuiteOptions, 'grep'> = {
  dir: __dirname,
  environment: {
    build: VSCODE_1_139,
    settings: {},
  },
};

export function runNativeSuite(opts: { grep?: string } = {}): Promise<UiSuiteResult> {
  return runUiSuite({ ...OPTIONS, ...opts });
}

if (require.main === module) void uiSuiteMain('native chat', OPTIONS);
