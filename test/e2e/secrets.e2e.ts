import * as assert from 'node:assert/strict';
import { DEFAULT_KEYS, DEMO_KEY, type RequestLogEntry } from '../gateway';
import { findLeaks } from '../support/leakScan';
import { ui } from './context';
import { checkConnection, clearNotifications, masked, setApiKey, waitForStatus } from './workbench';

function describeEntry(e: RequestLogEntry): string {
  return `${e.origin} ${e.method} ${e.path}`;
}

describe('Where the key goes', () => {
  it('carries "Authorization: Bearer <key>" to the gateway origin only, never to the catalog', async () => {
    const { page, double } = ui();
    // Traffic of its own, so the check means something when it runs alone (--grep).
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
    await checkConnection(page, 'Key accepted');

    // The whole run's log: every scenario before this one counts too.
    const log = [...double.log];
    const gateway = log.filter((e) => e.origin === 'gateway');
    const catalog = log.filter((e) => e.origin === 'catalog');
    assert.ok(catalog.length > 0, 'the catalog was never fetched, so nothing was proven about it');
    assert.ok(
      gateway.some((e) => e.headers.authorization === `Bearer ${DEMO_KEY}`),
      'no gateway request carried the demo key',
    );

    const keys = DEFAULT_KEYS.map((k) => k.key);
    for (const entry of catalog) {
      assert.equal(entry.headers.authorization, undefined, `${describeEntry(entry)} had an Authorization header`);
      for (const [name, value] of Object.entries(entry.headers)) {
        assert.ok(!keys.some((k) => value.includes(k)), `${describeEntry(entry)} carried a key in "${name}"`);
      }
    }
    for (const entry of gateway) {
      const authorization = entry.headers.authorization;
      // Exactly one "Bearer " and a whole key: no doubled prefix, no stray whitespace, no second key.
      if (authorization !== undefined)
        assert.ok(
          keys.some((k) => authorization === `Bearer ${k}`),
          `${describeEntry(entry)}: unexpected Authorization header`,
        );
      const elsewhere = [
        entry.path,
        entry.bodyText ?? '',
        ...Object.entries(entry.headers)
          .filter(([n]) => n !== 'authorization')
          .map(([, v]) => v),
      ];
      assert.ok(
        !elsewhere.some((s) => keys.some((k) => s.includes(k))),
        `${describeEntry(entry)} carried a key outside Authorization`,
      );
    }
  });

  it('is written to no file: settings, logs, global storage, the workspace', async () => {
    const { page, codeServer, workspace } = ui();
    // A stored key and a request made with it, so the extension had every chance to write it somewhere.
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');

    const keys = DEFAULT_KEYS.map((k) => k.key);
    // code-server's whole scratch folder: user settings, logs (the extension's output channel
    // included), global storage with the catalog cache, HOME and XDG folders.
    assert.deepEqual(await findLeaks(codeServer.scratchDir, keys), []);
    assert.deepEqual(await findLeaks(workspace, keys), []);
  });
});
