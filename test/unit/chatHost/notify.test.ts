import * as assert from 'node:assert/strict';
// First: answers `vscode` for every host module imported after it.
import { ui } from './fakeVscode';
import { GatewayError } from '../../../src/core/errors';
import { showError } from '../../../src/host/notify';

/** An error notification offers what helps: the action for its kind, the request id to copy, the log. */
describe('error notifications', () => {
  const lines: string[] = [];
  const log = { error: (line: string) => lines.push(line), show: () => undefined } as unknown as Parameters<
    typeof showError
  >[1];

  beforeEach(() => {
    ui.shown = [];
    ui.choices = [];
    ui.clipboard = [];
  });

  it("offers to copy the gateway's request id, apart from the message, and copies exactly it", async () => {
    ui.choices.push('Copy Request ID');
    const message = showError(
      new GatewayError('server', 'The gateway had an internal error (HTTP 500).', {
        status: 500,
        requestId: '20261124012345678abc',
      }),
      log,
    );
    assert.equal(message, 'The gateway had an internal error (HTTP 500). (request id: 20261124012345678abc)');
    assert.deepEqual(ui.shown[0]?.actions, ['Copy Request ID', 'Show Log']);
    const deadline = Date.now() + 10_000;
    while (ui.clipboard.length === 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(ui.clipboard, ['20261124012345678abc']);
  });

  it('offers the action of the kind and no copy button when there is no request id', () => {
    showError(new GatewayError('auth', 'The API key was not accepted (HTTP 401).', { status: 401 }), log);
    assert.deepEqual(ui.shown[0]?.actions, ['Set API Key', 'Show Log']);
  });
});
