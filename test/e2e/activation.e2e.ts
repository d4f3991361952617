import * as assert from 'node:assert/strict';
import { ui } from './context';
import { activityEntry, readStatus, statusItem } from './workbench';

describe('Workbench with the installed extension', () => {
  it('loads the workspace and shows the Model Gateway activity-bar entry', async () => {
    const { page, double } = ui();
    await page.locator('.part.sidebar .monaco-list-row', { hasText: 'README.md' }).waitFor();
    const entry = activityEntry(page);
    await entry.waitFor();
    assert.equal(await entry.getAttribute('aria-label'), 'Model Gateway');

    // Both states are acceptable: the extension activates on its commands and its view only, so
    // before either is used it has not run and its status bar item does not exist yet.
    if ((await statusItem(page).count()) === 0) {
      console.log('      observed: no Model Gateway status bar item before activation');
      // Not activated means nothing can have called the gateway or the catalog either.
      assert.deepEqual(
        double.log.map((e) => `${e.origin} ${e.method} ${e.path}`),
        [],
      );
    } else {
      const status = await readStatus(page);
      console.log(`      observed: status bar item already present: "${status.text}"`);
      assert.match(status.text, /Gateway/);
    }
  });
});
