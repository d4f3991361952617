/**
 * `npm test`: runs every suite and ends with the one line CI reads: `N passed, N failed, N skipped`,
 * summed over all suites. Each suite runs in a process of its own and its output is printed whole
 * when it ends; suites that need no VS Code run side by side (`--jobs N`, 2 by default) beside one
 * lane per VS Code version, and the line before the summary is a table of each suite's time.
 * `npm test -- --only unit` runs a subset while developing.
 */
import Mocha from 'mocha';
import { runChecksSuite } from './checks/run';
import { runUiSuite } from './e2e/run';
import { reportNotRun, tallyRun, type SuiteResult } from './support/mochaResults';
import { runIntegrationSuite } from './integration/run';
import { runLmSuite } from './lm/run';
import { runNativeSuite } from './native/run';
import { ensureCodeServer, VSCODE_1_100, VSCODE_1_139, type CodeServerBuild } from './vscode/codeServer';
import { runWebviewSuite } from './webview/chatView.webtest';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { readdirSync } from 'node:fs';
import { buildOnceForSuites } from './vscode/builds';
import {
  childArgs,
  pool,
  reportToParent,
  runSuiteProcess,
  type ChildArgs,
  type SuiteRun,
} from './support/suiteProcess';

export type { SuiteResult };

interface Suite {
  name: string;
  run(): Promise<SuiteResult>;
  /** The real VS Code the suite starts, if any. */
  vscode?: CodeServerBuild;
  /** The builds it runs (see test/vscode/builds.ts): made once by the runner when suites run side by side. */
  needs?: { vsix?: boolean; tests?: boolean };
}

const root = path.resolve(__dirname, '..');

/** Files under `dir` whose names end with `suffix`, sorted (Node 20 has no fs.globSync). */
export function findFiles(dir: string, suffix: string): string[] {
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** Runs mocha files in this process (tsx is already loaded, so .ts files load directly). */
export function runMochaFiles(files: string[], options: Mocha.MochaOptions = {}): Promise<SuiteResult> {
  const mocha = new Mocha({ timeout: 20_000, reporter: 'spec', ...options });
  for (const file of files) mocha.addFile(file);
  return new Promise((resolve, reject) => {
    mocha
      .loadFilesAsync()
      .then(() => {
        const runner = mocha.run(() => {
          const tally = tallyRun(runner, mocha.suite);
          reportNotRun(tally);
          resolve({ passed: tally.passed, failed: tally.failed, skipped: tally.skipped });
        });
      })
      .catch(reject);
  });
}

const suites: Suite[] = [
  {
    // Type check, lint and format: a change that fails any of them fails CI like a failing test.
    name: 'checks',
    run: () => runChecksSuite(),
  },
  {
    name: 'unit',
    run: () => runMochaFiles(findFiles(path.join(root, 'test/unit'), '.test.ts')),
  },
  {
    // The gateway double and the fixtures on their own: they test the test doubles, not src/.
    name: 'double',
    run: () => runMochaFiles(findFiles(path.join(root, 'test/double'), '.test.ts')),
  },
  {
    name: 'webview',
    run: () => runWebviewSuite(),
  },
  {
    name: 'ui',
    run: () => runUiSuite(),
    vscode: VSCODE_1_100,
    needs: { vsix: true },
  },
  {
    // VS Code's own Chat view and agent mode in VS Code 1.139, driven in the browser.
    name: 'native',
    run: () => runNativeSuite(),
    vscode: VSCODE_1_139,
    needs: { vsix: true },
  },
  {
    name: 'integration',
    run: () => runIntegrationSuite(),
    vscode: VSCODE_1_100,
    needs: { tests: true },
  },
  {
    // VS Code's own chat (the language model provider, API stable from 1.104) in VS Code 1.139.
    name: 'lm',
    run: () => runLmSuite(),
    vscode: VSCODE_1_139,
    needs: { vsix: true, tests: true },
  },
];

/** How many suites that need no VS Code run at once (`--jobs N`). */
const DEFAULT_JOBS = 2;
/**
 * How many suites that start a VS Code run at once, beside those (`--vscode-jobs N`): each is a
 * code-server, a browser and an extension host, mostly waiting on the workbench; they start in the
 * order of the list, the longest first.
 */
const DEFAULT_VSCODE_JOBS = 2;

async function main(): Promise<void> {
  const child = childArgs(process.argv);
  if (child) return runAsChild(child);
  const onlyIndex = process.argv.indexOf('--only');
  const only = onlyIndex >= 0 ? process.argv[onlyIndex + 1]?.split(',') : undefined;
  const jobsIndex = process.argv.indexOf('--jobs');
  const jobs = jobsIndex >= 0 ? Number(process.argv[jobsIndex + 1]) || DEFAULT_JOBS : DEFAULT_JOBS;
  const vscodeJobsIndex = process.argv.indexOf('--vscode-jobs');
  const vscodeJobs =
    vscodeJobsIndex >= 0 ? Number(process.argv[vscodeJobsIndex + 1]) || DEFAULT_VSCODE_JOBS : DEFAULT_VSCODE_JOBS;
  const unknown = (only ?? []).filter((name) => !suites.some((suite) => suite.name === name));
  if (unknown.length) {
    console.error(`Unknown suite(s): ${unknown.join(', ')} (known: ${suites.map((s) => s.name).join(', ')})`);
    process.exit(2);
  }
  const chosen = suites.filter((suite) => !only || only.includes(suite.name));
  const runs = await runSide(chosen, jobs, vscodeJobs);
  const total: SuiteResult = { passed: 0, failed: 0, skipped: 0 };
  console.log('\n| suite | seconds | passed | failed | skipped |\n|---|---:|---:|---:|---:|');
  for (const suite of chosen) {
    const run = runs.get(suite.name);
    if (!run) continue;
    const { passed, failed, skipped } = run.result;
    console.log(`| ${suite.name} | ${run.seconds.toFixed(0)} | ${passed} | ${failed} | ${skipped} |`);
    total.passed += passed;
    total.failed += failed;
    total.skipped += skipped;
  }
  console.log(
    `load average (1, 5, 15 min): ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(', ')}`,
  );
  console.log(`\n${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
  // Exit explicitly: a server a failed test left open must not keep CI waiting.
  process.exit(total.failed > 0 || total.passed === 0 ? 1 : 0);
}

/**
 * Every chosen suite in a process of its own, each printed whole when it ends. The suites that need
 * no VS Code run `jobs` at a time; beside them, one lane per VS Code version installs its
 * code-server (once per machine) and runs its suites one after the other. The builds those suites
 * share are made once, before the first of them starts.
 */
async function runSide(chosen: Suite[], jobs: number, vscodeJobs: number): Promise<Map<string, SuiteRun>> {
  const script = __filename;
  const runs = new Map<string, SuiteRun>();
  const startedAt = Date.now();
  const runOne = async (suite: Suite, env: Record<string, string> = {}): Promise<void> => {
    console.log(`[${elapsed(startedAt)}] ${suite.name}: started`);
    const run = await runSuiteProcess(script, suite.name, env);
    runs.set(suite.name, run);
    const { passed, failed, skipped } = run.result;
    console.log(`\n=== ${suite.name} tests ===`);
    process.stdout.write(run.output.endsWith('\n') ? run.output : `${run.output}\n`);
    console.log(
      `--- ${suite.name}: ${passed} passed, ${failed} failed, ${skipped} skipped (${run.seconds.toFixed(0)} s, ended at ${elapsed(startedAt)})`,
    );
  };
  const plain = chosen.filter((suite) => !suite.vscode);
  const withVscode = chosen.filter((suite) => suite.vscode);
  const builds = [...new Set(withVscode.map((suite) => suite.vscode as CodeServerBuild))];
  const buildDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'mg-builds-'));
  try {
    const shared = buildOnceForSuites(buildDir, {
      vsix: withVscode.some((suite) => suite.needs?.vsix),
      tests: withVscode.some((suite) => suite.needs?.tests),
    });
    // Installs start at once (once per machine; each waits under its lock), beside the builds.
    const installs = new Map(
      builds.map((build) => [
        build,
        ensureCodeServer(build).catch((error: unknown) =>
          // Its suites try again and report the failure as theirs.
          console.error(`Installing code-server ${build.version} failed: ${String(error)}`),
        ),
      ]),
    );
    const vscodeTask = (suite: Suite) => async (): Promise<void> => {
      await installs.get(suite.vscode as CodeServerBuild);
      let env: Record<string, string>;
      try {
        env = await (suite.needs?.tests ? shared.all : shared.vsix);
      } catch (error) {
        // Without its builds a suite cannot run: it counts as one failure, with the reason.
        const output = `The builds the ${suite.name} suite needs failed: ${String(error)}\n`;
        runs.set(suite.name, { result: { passed: 0, failed: 1, skipped: 0 }, output, seconds: 0 });
        console.error(output);
        return;
      }
      await runOne(suite, env);
    };
    await Promise.all([
      pool(
        plain.map((suite) => () => runOne(suite)),
        jobs,
      ),
      pool(withVscode.map(vscodeTask), vscodeJobs),
    ]);
  } finally {
    await fsp.rm(buildDir, { recursive: true, force: true });
  }
  return runs;
}

function elapsed(since: number): string {
  const seconds = Math.round((Date.now() - since) / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

/** In a suite's own process: runs it and reports its counts to the runner. */
async function runAsChild(args: ChildArgs): Promise<void> {
  const suite = suites.find((s) => s.name === args.suite);
  let result: SuiteResult;
  try {
    if (!suite) throw new Error(`no suite named ${args.suite}`);
    result = await suite.run();
  } catch (err) {
    // A suite that cannot even start counts as one failure, never as silently skipped.
    console.error(`The ${args.suite} suite could not run:`, err);
    result = { passed: 0, failed: 1, skipped: 0 };
  }
  await reportToParent(args, result);
  // Exit explicitly: a server a failed test left open must not keep the run waiting.
  process.exit(0);
}

if (require.main === module) void main();
