/**
 * The counts of a finished mocha run, honest about hooks. Mocha reports a failed `before all` (or
 * `beforeEach`) hook as ONE failure and says nothing about the tests below it, which then neither
 * passed nor failed: a run that skipped seven tests that way would read "1 failed". Here every
 * test that should have run (it matches the run's grep and is not marked pending) but never
 * reached an outcome counts as failed, and is named.
 */
import type Mocha from 'mocha';

export interface SuiteResult {
  passed: number;
  failed: number;
  skipped: number;
}

export interface RunTally extends SuiteResult {
  /** Full titles of the tests that never ran because a hook before them failed. */
  notRun: string[];
}

/** Call from mocha.run's callback: every test has its final state by then. */
export function tallyRun(runner: Mocha.Runner, root: Mocha.Suite): RunTally {
  // Mocha keeps the run's grep on the runner and applies it while running; reading it is the only
  // way to tell a test the grep left out from one a failed hook kept from running. The fields are
  // not in @types/mocha, hence the narrow cast.
  const filter = runner as unknown as { _grep?: RegExp; _invert?: boolean };
  const selected = (test: Mocha.Test): boolean => {
    if (!filter._grep) return true;
    filter._grep.lastIndex = 0;
    return filter._grep.test(test.fullTitle()) !== Boolean(filter._invert);
  };
  const notRun: string[] = [];
  const visit = (suite: Mocha.Suite): void => {
    for (const test of suite.tests) {
      if (test.state === undefined && !test.isPending() && selected(test)) notRun.push(test.fullTitle());
    }
    for (const child of suite.suites) visit(child);
  };
  visit(root);
  const stats = runner.stats;
  return {
    passed: stats?.passes ?? 0,
    // stats.failures already holds each failed hook once; the tests it kept from running come on top.
    failed: (stats?.failures ?? 0) + notRun.length,
    skipped: stats?.pending ?? 0,
    notRun,
  };
}

/** Prints what tallyRun found, so the summary's extra failures have names. */
export function reportNotRun(tally: RunTally, log: (line: string) => void = console.error): void {
  if (tally.notRun.length === 0) return;
  log(`\n${tally.notRun.length} test(s) did not run because a hook before them failed (counted as failed):`);
  for (const title of tally.notRun) log(`  - ${title}`);
}
