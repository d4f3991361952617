/** `npx tsx test/webview/run.ts`: the chat webview suite on its own. */
import { runWebviewSuite } from './chatView.webtest';

void runWebviewSuite().then((result) => {
  console.log(`\n${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped`);
  process.exit(result.failed > 0 || result.passed === 0 ? 1 : 0);
});
