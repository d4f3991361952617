import * as assert from 'node:assert/strict';
import { promises as dns } from 'node:dns';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ConnectionReport } from '../../src/core/connection';
import type { AskResult } from '../../src/host/chat/ask';
import { DEMO_KEY, GatewayDouble } from '../gateway';
import { createTestCa, type TestCa } from '../support/testCa';
import { run, setSetting } from './support';

/**
 * A cloned repository's `.vscode/settings.json` must not decide where the key goes or where
 * files are written (architecture principle 11): its values of those settings are ignored, the
 * user is told once, and nothing at all reaches the address it names.
 */
describe('Settings a repository cannot turn against the user', function () {
  const folder = () => {
    const f = vscode.workspace.workspaceFolders?.[0];
    assert.ok(f, 'the integration run opens a workspace folder');
    return f.uri;
  };
  const dotVscode = () => vscode.Uri.joinPath(folder(), '.vscode');
  let mine: GatewayDouble;
  let theirs: GatewayDouble;
  let elsewhere: string;

  async function writeWorkspaceSettings(values: Record<string, unknown>): Promise<void> {
    await vscode.workspace.fs.createDirectory(dotVscode());
    await vscode.workspace.fs.writeFile(
      vscode.Uri.joinPath(dotVscode(), 'settings.json'),
      Buffer.from(`// written by the trust test\n${JSON.stringify(values, null, 2)}\n`),
    );
  }

  /** Waits until VS Code has read the workspace file, seen through a setting a workspace may set. */
  async function waitForWorkspaceValue(key: string, value: unknown): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (vscode.workspace.getConfiguration('modelGateway').inspect(key)?.workspaceValue !== value) {
      if (Date.now() > deadline) throw new Error(`VS Code did not pick up the workspace value of ${key} within 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  before(async () => {
    mine = new GatewayDouble();
    theirs = new GatewayDouble();
    await mine.start();
    await theirs.start();
    elsewhere = mkdtempSync(path.join(os.tmpdir(), 'mg-trust-'));
    await setSetting('baseUrl', mine.url);
    await setSetting('catalogUrl', mine.catalogUrl);
    await run('setApiKey', DEMO_KEY);
  });

  after(async () => {
    await vscode.workspace.fs
      .delete(dotVscode(), { recursive: true, useTrash: false })
      .then(undefined, () => undefined);
    await setSetting('baseUrl', undefined);
    await setSetting('catalogUrl', undefined);
    await setSetting('outputFolder', undefined);
    await run('clearApiKey', { all: true });
    await mine.stop();
    await theirs.stop();
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it("ignores the workspace's base, catalog and output folder, tells the user once, and sends nothing there", async () => {
    const canary = 777;
    await writeWorkspaceSettings({
      'modelGateway.baseUrl': theirs.url,
      'modelGateway.catalogUrl': theirs.catalogUrl,
      'modelGateway.outputFolder': elsewhere,
      'modelGateway.chat.maxTokens': canary,
    });
    await waitForWorkspaceValue('chat.maxTokens', canary);
    mine.clearLog();
    theirs.clearLog();

    await run('refreshModels');
    const first = await run<ConnectionReport>('checkConnection', { silent: true });
    const answer = await run<AskResult>('ask', {
      prompt: 'Where does my key go?',
      model: 'gpt-4o-mini',
      protocol: 'chatCompletions',
    });
    const second = await run<ConnectionReport>('checkConnection', { silent: true });

    assert.deepEqual(theirs.log, [], "the workspace's gateway received no request at all");
    assert.equal(first.base, mine.url);
    assert.equal(first.keyAccepted, true);
    assert.equal(answer.status, 'done', JSON.stringify(answer.error));
    assert.ok(answer.text.includes('Where does my key go?'));
    const keyed = mine.log.filter((e) => e.headers.authorization === `Bearer ${DEMO_KEY}`).map((e) => e.path);
    assert.ok(
      keyed.includes('/v1/models') && keyed.includes('/v1/chat/completions'),
      `the user's gateway got the key: ${keyed.join(', ')}`,
    );

    const notices = second.ignoredSettings ?? [];
    const about = (key: string) => notices.filter((n) => n.startsWith(`Ignored "modelGateway.${key}"`));
    assert.equal(about('baseUrl').length, 1, notices.join('\n'));
    assert.ok(
      about('baseUrl')[0]!.includes(theirs.url) &&
        /Only your user settings decide where the API key is sent/.test(about('baseUrl')[0]!),
    );
    assert.equal(about('catalogUrl').length, 1, notices.join('\n'));
    assert.equal(about('outputFolder').length, 1, notices.join('\n'));
    assert.equal(notices.length, 3, `nothing else was announced, and nothing twice:\n${notices.join('\n')}`);
    assert.deepEqual(first.ignoredSettings, notices, 'all were known before the first report');
    assert.equal(
      notices.filter((n) => n.includes('chat.maxTokens')).length,
      0,
      'settings a workspace may set are not announced',
    );
  });

  it('announces a new workspace value once more, and still never uses it', async () => {
    const moved = `${theirs.url}/other`;
    await writeWorkspaceSettings({ 'modelGateway.baseUrl': moved, 'modelGateway.chat.maxTokens': 778 });
    await waitForWorkspaceValue('chat.maxTokens', 778);
    theirs.clearLog();
    const report = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.equal(report.base, mine.url);
    assert.equal((report.ignoredSettings ?? []).filter((n) => n.includes(moved)).length, 1);
    assert.deepEqual(theirs.log, []);
  });

  it('never writes into a folder the workspace named, and refuses a user folder that leaves the workspace before any request', async () => {
    await setSetting('outputFolder', '../outside-the-workspace');
    mine.clearLog();
    await assert.rejects(
      Promise.resolve(
        vscode.commands.executeCommand('modelGateway.generateImage', { prompt: 'A fox', model: 'gpt-image-1' }),
      ),
      /outside the workspace/,
    );
    assert.equal(mine.log.filter((e) => e.path.startsWith('/v1/images')).length, 0, 'no image was requested');
    assert.equal(
      existsSync(path.join(elsewhere, 'images')),
      false,
      'nothing was written to the folder the workspace named',
    );
    await setSetting('outputFolder', undefined);
  });

  it('refuses a plain http:// base address that is not this computer, before any request', async () => {
    // This machine's own name usually resolves to a loopback address, so a request that slipped
    // through would reach the double; the refusal must come from the address's text alone.
    const name = os.hostname();
    const resolvesHere = await dns.lookup(name).then(
      (a) => a.address.startsWith('127.'),
      () => false,
    );
    const port = new URL(theirs.url).port;
    await setSetting('baseUrl', `http://${name}:${port}`);
    theirs.clearLog();
    const report = await run<{ error?: string }>('checkConnection', { silent: true });
    assert.match(report.error ?? '', /plain http:\/\/ to a computer other than this one/);
    const outcome = await run<AskResult>('ask', {
      prompt: 'hello',
      model: 'gpt-4o-mini',
      protocol: 'chatCompletions',
    }).then(
      (a) => `${a.status}: ${a.error?.message ?? ''}`,
      (err: unknown) => `refused: ${String(err)}`,
    );
    assert.match(outcome, /plain http:\/\//, outcome);
    assert.deepEqual(theirs.log, [], `no request left${resolvesHere ? ` (${name} resolves to this computer)` : ''}`);
    await setSetting('baseUrl', mine.url);
  });
});

/**
 * Which certificate authorities the connection carrying the key trusts is the user's decision
 * alone: a repository naming its own CA file could let its owner read the key through a proxy
 * that re-signs traffic. Kept after the suite above, whose notice counts assume a fresh session.
 */
describe('A certificate authority only the user settings can add', function () {
  let ca: TestCa;
  let gw: GatewayDouble;
  const dotVscode = () => {
    const f = vscode.workspace.workspaceFolders?.[0];
    assert.ok(f, 'the integration run opens a workspace folder');
    return vscode.Uri.joinPath(f.uri, '.vscode');
  };

  before(async () => {
    ca = createTestCa();
    gw = new GatewayDouble({ tls: ca.server });
    await gw.start();
    await setSetting('baseUrl', gw.url);
    await setSetting('catalogUrl', gw.catalogUrl);
    await run('setApiKey', DEMO_KEY);
  });

  after(async () => {
    await vscode.workspace.fs
      .delete(dotVscode(), { recursive: true, useTrash: false })
      .then(undefined, () => undefined);
    await setSetting('extraCaCertificates', undefined);
    await setSetting('baseUrl', undefined);
    await setSetting('catalogUrl', undefined);
    await run('clearApiKey', { all: true });
    await gw.stop();
    ca.dispose();
  });

  it('ignores modelGateway.extraCaCertificates from the workspace and uses it from the user settings', async () => {
    const canary = 779;
    await vscode.workspace.fs.createDirectory(dotVscode());
    const values = { 'modelGateway.extraCaCertificates': ca.caFile, 'modelGateway.chat.maxTokens': canary };
    await vscode.workspace.fs.writeFile(
      vscode.Uri.joinPath(dotVscode(), 'settings.json'),
      Buffer.from(JSON.stringify(values, null, 2)),
    );
    const deadline = Date.now() + 30_000;
    while (vscode.workspace.getConfiguration('modelGateway').inspect('chat.maxTokens')?.workspaceValue !== canary) {
      if (Date.now() > deadline) throw new Error('VS Code did not pick up the workspace settings within 30 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    gw.clearLog();

    const refused = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.equal(refused.reachable, false);
    assert.equal(refused.error?.kind, 'network');
    assert.match(
      refused.error?.message ?? '',
      /does not trust.*"modelGateway\.extraCaCertificates"/,
      refused.error?.message,
    );
    assert.deepEqual(
      gw.log.filter((e) => e.origin === 'gateway'),
      [],
      'nothing reached the gateway without the authority',
    );
    const notice = (refused.ignoredSettings ?? []).filter((n) =>
      n.startsWith('Ignored "modelGateway.extraCaCertificates"'),
    );
    assert.equal(notice.length, 1, (refused.ignoredSettings ?? []).join('\n'));
    assert.ok(notice[0]!.includes(JSON.stringify(ca.caFile)), notice[0]);

    await setSetting('extraCaCertificates', ca.bundleFile);
    const accepted = await run<ConnectionReport>('checkConnection', { silent: true });
    assert.equal(accepted.keyAccepted, true, JSON.stringify(accepted.error));
    const keyed = gw.log.filter((e) => e.origin === 'gateway' && e.headers.authorization === `Bearer ${DEMO_KEY}`);
    assert.ok(keyed.length > 0, 'the key reached the gateway over TLS once the user trusted its authority');
  });
});
