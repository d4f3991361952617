/**
 * What the chat view may make the host do: images load only from hosts the user allowed one by one
 * (asked and recorded by the host; the page's CSP lists exactly those), and image files it names
 * are read only from the workspace, the extension's storage or a file the user picked.
 */
// First: answers `vscode` for every host module imported after it.
import { fake, ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ImageReadPolicy } from '../../../src/host/chat/imageAccess';
import { allowedImageHosts, askToAllowImageHost } from '../../../src/host/chat/remoteImages';
import { webviewHtml } from '../../../src/host/views/webviewHtml';
import { snapshotSchema } from '../../../src/shared/protocol';
import { promptPng } from '../../gateway';

describe('Chat view security (host side)', () => {
  const section = () => vscode.workspace.getConfiguration('modelGateway.chat');
  afterEach(() => {
    delete ui.settings['modelGateway.chat.remoteImageHosts'];
  });

  it('remote images: allowed per host by the host, recorded in the user setting; the page CSP names no remote host (the host fetches the images)', async () => {
    assert.deepEqual(allowedImageHosts(), []);
    const asked: string[] = [];
    // The user says no: nothing is recorded.
    assert.equal(
      await askToAllowImageHost('Images.Example.test', async (host: string) => (asked.push(host), false)),
      false,
    );
    assert.deepEqual(section().inspect('remoteImageHosts')?.globalValue, undefined);
    // Not a host (a path, a wildcard, a CSP keyword smuggled in): refused without asking.
    for (const bad of [
      'images.example.test/x',
      '*.example.test',
      "images.example.test 'unsafe-inline'",
      'https://images.example.test',
    ]) {
      assert.equal(await askToAllowImageHost(bad, async () => (asked.push(bad), true)), false, bad);
    }
    assert.deepEqual(asked, ['images.example.test'], 'only a plain host name is asked about, by its canonical name');
    assert.equal(await askToAllowImageHost('images.example.test', async () => true), true);
    assert.equal(await askToAllowImageHost('cdn.example.test:8443', async () => true), true);
    assert.deepEqual(section().inspect('remoteImageHosts')?.globalValue, [
      'images.example.test',
      'cdn.example.test:8443',
    ]);
    const webview = { cspSource: 'vscode-resource:', asWebviewUri: (u: vscode.Uri) => u } as unknown as vscode.Webview;
    const html = webviewHtml(webview, vscode.Uri.file('/ext'), {
      app: 'chat',
      style: 'chat',
      title: 't',
    });
    // The page loads no remote image itself (the host fetches them for it): no remote host in its CSP.
    const imgSrc = /img-src ([^;"]*)/.exec(html)?.[1] ?? '';
    assert.equal(imgSrc, 'vscode-resource: data:');
    // Revoked in the setting: gone from the list (and so from the page's CSP when it is rebuilt).
    await section().update(
      'remoteImageHosts',
      ['cdn.example.test:8443', 'not a host'],
      vscode.ConfigurationTarget.Global,
    );
    assert.deepEqual(allowedImageHosts(), ['cdn.example.test:8443']);
    // The old global switch is gone from the settings the view gets.
    const snapshotKeys = Object.keys(snapshotSchema.shape);
    assert.ok(snapshotKeys.includes('remoteImageHosts') && !snapshotKeys.includes('allowRemoteImages'));
  });

  it("remote images: loopback and private addresses are never allowed (nor listed in the CSP), the gateway's own host aside", async () => {
    const asked: string[] = [];
    const yes = async (host: string) => (asked.push(host), true);
    for (const bad of [
      'localhost',
      'LOCALHOST:8443',
      'printer.localhost',
      '127.0.0.1',
      '127.1',
      '0x7f.1',
      '2130706433',
      '0.0.0.0',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1:8080',
      '169.254.169.254',
    ]) {
      assert.equal(await askToAllowImageHost(bad, yes), false, bad);
    }
    assert.deepEqual(asked, [], 'a private address is refused without asking');
    assert.ok(
      ui.shown.some((s) => /127\.0\.0\.1.*private or loopback address/.test(s.message)),
      'the refusal is told: ' + ui.shown.map((s) => s.message).join(' | '),
    );
    // Public neighbours of the private ranges are still asked about.
    for (const fine of ['172.32.0.1', '11.0.0.1', '192.169.0.1'])
      assert.equal(await askToAllowImageHost(fine, yes), true);
    // A private host already in the setting (written by hand, or before this rule) is dropped from the list.
    await section().update(
      'remoteImageHosts',
      ['10.0.0.5', 'localhost', 'images.example.test', '192.168.0.9:8443'],
      vscode.ConfigurationTarget.Global,
    );
    assert.deepEqual(allowedImageHosts(), ['images.example.test']);
    // The gateway's own host may be private (a gateway on the local network): its images load when allowed.
    ui.settings['modelGateway.baseUrl'] = 'https://192.168.0.9:8443/';
    try {
      assert.deepEqual(allowedImageHosts(), ['images.example.test', '192.168.0.9:8443']);
      assert.equal(await askToAllowImageHost('192.168.0.9:8443', yes), true);
      assert.equal(
        await askToAllowImageHost('192.168.0.9', yes),
        false,
        'the same address on another port is not the gateway',
      );
    } finally {
      delete ui.settings['modelGateway.baseUrl'];
    }
  });

  it('remote images: a public name that resolves to a loopback or private address is refused, and dropped if allowed before', async () => {
    const asked: string[] = [];
    const yes = async (host: string) => (asked.push(host), true);
    const resolvesTo =
      (...addresses: string[]) =>
      async () =>
        addresses.map((address) => ({ address }));
    for (const address of ['127.0.0.1', '10.1.2.3', '::1', '::ffff:127.0.0.1', '93.184.216.34 192.168.0.7']) {
      const host = 'images.rebind.test';
      assert.equal(await askToAllowImageHost(host, yes, resolvesTo(...address.split(' '))), false, address);
      assert.ok(
        ui.shown.some((s) => s.message.includes(host) && s.message.includes(address.split(' ').at(-1) ?? '')),
        'the refusal names the address',
      );
    }
    assert.deepEqual(asked, [], 'refused without asking');
    // Allowed while it resolved publicly; asked again after it started resolving to loopback: dropped.
    assert.equal(await askToAllowImageHost('cdn.rebind.test', yes, resolvesTo('93.184.216.34')), true);
    assert.deepEqual(allowedImageHosts(), ['cdn.rebind.test']);
    assert.equal(await askToAllowImageHost('cdn.rebind.test', yes, resolvesTo('127.0.0.1')), false);
    assert.deepEqual(allowedImageHosts(), []);
    // The gateway's own host is not looked up: a gateway on the local network may serve its images.
    ui.settings['modelGateway.baseUrl'] = 'https://gateway.lan.test/';
    try {
      assert.equal(await askToAllowImageHost('gateway.lan.test', yes, resolvesTo('192.168.0.9')), true);
    } finally {
      delete ui.settings['modelGateway.baseUrl'];
    }
  });

  it('image files the view asks for are read only inside the workspace, the storage, or when picked in a dialog', async () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'mg-workspace-'));
    fake.workspace.workspaceFolders = [{ uri: fake.Uri.file(folder) }];
    const storage = mkdtempSync(path.join(os.tmpdir(), 'mg-storage-'));
    const outside = mkdtempSync(path.join(os.tmpdir(), 'mg-outside-'));
    try {
      const png = promptPng('a heron');
      const inWorkspace = path.join(folder, 'heron.png');
      const inStorage = path.join(storage, 'heron.png');
      const elsewhere = path.join(outside, 'secret.png');
      for (const f of [inWorkspace, inStorage, elsewhere]) writeFileSync(f, png);
      const link = path.join(folder, 'link-out.png');
      rmSync(link, { force: true });
      symlinkSync(elsewhere, link);
      const policy = new ImageReadPolicy(() => [vscode.Uri.file(storage)]);
      assert.equal(await policy.refusal(vscode.Uri.file(inWorkspace)), undefined);
      assert.equal(await policy.refusal(vscode.Uri.file(inStorage)), undefined);
      assert.match(
        (await policy.refusal(vscode.Uri.file(elsewhere))) ?? '',
        /secret\.png was not attached: only images in the open workspace folders, or picked with "Image…"/,
      );
      assert.ok(
        await policy.refusal(vscode.Uri.file(link)),
        'a link inside the workspace that leads out of it is refused',
      );
      assert.ok(
        await policy.refusal(vscode.Uri.file(path.join(folder, '..', path.basename(outside), 'secret.png'))),
        'climbing out with .. is refused',
      );
      assert.ok(await policy.refusal(vscode.Uri.parse('https://example.test/a.png')), 'not a file');
      await policy.rememberPicked([vscode.Uri.file(elsewhere)]);
      assert.equal(await policy.refusal(vscode.Uri.file(elsewhere)), undefined, 'a file the user picked may be read');
      rmSync(inWorkspace, { force: true });
      rmSync(link, { force: true });
    } finally {
      fake.workspace.workspaceFolders = undefined;
      rmSync(folder, { recursive: true, force: true });
      rmSync(storage, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
