/** `npx tsx test/webview/run.ts ["<grep>"]`: the chat webview suite on its own (or its tests whose title contains grep). */
import { runWebviewSuite } from './chatView.webtest';

void runWebviewSuite(process.argv[2]).then((result) => {
  console.log(`\n${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped`);
  process.exit(result.failed > 0 || result.passed === 0 ? 1 : 0);
});
