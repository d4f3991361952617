/**
 * The webview suite: the chat webview and the Media Studio in a real Chromium page with the host's
 * CSP (see harness.ts), one file per feature (`*.webtest.ts`), put together here.
 *
 * The suite is built with Mocha's programmatic API rather than `describe` globals, so that
 * `runWebviewSuite()` can be imported and run from `npm test` (test/runAll.ts) or from
 * `npx tsx test/webview/run.ts`.
 */
import Mocha from 'mocha';
import { reportNotRun, tallyRun } from '../support/mochaResults';
import { defineSplitterTests } from './blockSplitter.webtest';
import { defineActionTests } from './chatActions.webtest';
import { defineImageTests } from './chatImages.webtest';
import { defineInputTests } from './chatInput.webtest';
import { defineLookTests } from './chatLooks.webtest';
import { defineRemoteImageTests } from './chatRemoteImages.webtest';
import { defineSecurityTests } from './chatSecurity.webtest';
import { defineSnapshotTests } from './chatSnapshot.webtest';
import { defineStreamingTests } from './chatStreaming.webtest';
import { WebviewHarness } from './harness';
import { defineMediaTests } from './mediaView.webtest';
import { defineNewcomerTests } from './newcomer.webtest';
import { defineNoticeTests } from './notices.webtest';
import { defineTranslationTests } from './translation.webtest';
import { definePolishTests } from './polish.webtest';

export interface SuiteResult {
  passed: number;
  failed: number;
  skipped: number;
}

type TestBody = () => Promise<void> | void;

/** Builds Mocha suites without globals. */
export class SuiteBuilder {
  constructor(readonly suite: Mocha.Suite) {}
  describe(title: string, body: (s: SuiteBuilder) => void): void {
    body(new SuiteBuilder(Mocha.Suite.create(this.suite, title)));
  }
  it(title: string, fn: TestBody): void {
    this.suite.addTest(new Mocha.Test(title, async () => fn()));
  }
  before(fn: TestBody): void {
    this.suite.beforeAll(async () => fn());
  }
  after(fn: TestBody): void {
    this.suite.afterAll(async () => fn());
  }
  afterEach(fn: TestBody): void {
    this.suite.afterEach(async () => fn());
  }
}

/** Adds the suite's tests to `root`. */
export function defineWebviewSuite(root: Mocha.Suite): void {
  const top = new SuiteBuilder(Mocha.Suite.create(root, 'chat webview'));
  top.describe('block splitter', (s) => defineSplitterTests(s));
  top.describe('in Chromium', (s) => {
    let harness: WebviewHarness | undefined;
    s.suite.timeout(120_000);
    s.before(async () => {
      harness = await WebviewHarness.start();
    });
    s.after(async () => {
      await harness?.close();
    });
    const started = (): WebviewHarness => {
      if (!harness) throw new Error('the webview harness did not start');
      return harness;
    };
    s.describe('snapshot and header', (d) => defineSnapshotTests(d, started));
    s.describe('streaming', (d) => defineStreamingTests(d, started));
    s.describe('input', (d) => defineInputTests(d, started));
    s.describe('message actions', (d) => defineActionTests(d, started));
    s.describe('security', (d) => defineSecurityTests(d, started));
    s.describe('remote images', (d) => defineRemoteImageTests(d, started));
    s.describe('images and web sources', (d) => defineImageTests(d, started));
    s.describe('accessibility and looks', (d) => defineLookTests(d, started));
    s.describe('notices', (n) => defineNoticeTests(n, started));
    s.describe('for a newcomer, at 300 px', (n) => defineNewcomerTests(n, started));
    s.describe('narrow and visual polish', (n) => definePolishTests(n, started));
    s.describe('in Chinese (both apps)', (c) => defineTranslationTests(c, started));
    s.describe('Media Studio', (m) => defineMediaTests(m, started));
  });
}

/** Runs the chat webview suite (only the tests whose title contains `grep`, if given); `npm test` adds the counts to its total. */
export function runWebviewSuite(grep?: string): Promise<SuiteResult> {
  const mocha = new Mocha({ timeout: 60_000, reporter: 'spec', ...(grep ? { grep } : {}) });
  defineWebviewSuite(mocha.suite);
  return new Promise((resolve) => {
    const runner = mocha.run(() => {
      // Tests a failed hook (e.g. the browser not starting) kept from running count as failed.
      const tally = tallyRun(runner, mocha.suite);
      reportNotRun(tally);
      resolve({ passed: tally.passed, failed: tally.failed, skipped: tally.skipped });
    });
  });
}
