import * as assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { DEMO_KEY } from '../gateway';
import { ui } from './context';
import { REPO_ROOT } from './environment';
import {
  buttonIn,
  clearNotifications,
  masked,
  modalDialog,
  openNewChat,
  sendChatMessage as send,
  setApiKey,
  waitForStatus,
} from './workbench';

const SHOTS = path.join(REPO_ROOT, 'test-results', 'e2e-remote-images');

/**
 * An answer's remote image in the real workbench: the user allows its host in VS Code's own
 * dialog, then the extension (not the page) fetches it; a name that leads nowhere is told in the
 * image's place, and the page's content security policy names no remote host.
 * Screenshot: test-results/e2e-remote-images/.
 */
describe('Chat remote images', () => {
  before(async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    await clearNotifications(page);
  });

  it('an allowed host is fetched by the extension; an image it could not fetch says why in its place', async () => {
    const { page } = ui();
    const frame = await openNewChat(page);
    // The double echoes the prompt: the answer holds the image. `.test` names resolve nowhere (RFC 6761).
    const answer = await send(frame, 'Look: ![a cat](https://images.remote-images.test/cat.png)');
    await answer.getByRole('button', { name: 'Load images from images.remote-images.test' }).click();
    const dialog = modalDialog(page, /Load images from images\.remote-images\.test in chat answers\?/);
    await buttonIn(dialog, 'Load Images').click();
    const refused = answer.locator('.remote-image-refused');
    await refused.waitFor();
    assert.equal(
      await refused.innerText(),
      'Image “a cat” from images.remote-images.test not shown: the name images.remote-images.test could not be resolved.',
    );
    assert.equal(await answer.locator('img').count(), 0, 'no broken image');
    const csp = (await frame.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content')) ?? '';
    assert.match(csp, /img-src [^;]+ data:;/);
    assert.doesNotMatch(csp, /remote-images/, 'the page names no remote image host');
    await fsp.mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'refused.png') });
  });
});
