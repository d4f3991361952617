import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { GatewayDouble, type RequestLogEntry } from '../gateway';
import { until } from '../support/until';
import { closeEditorsDiscarding, run, setSetting, useDouble } from './support';

interface Item {
  insertText: string;
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
}

/**
 * Inline code completion in a real VS Code, against the gateway double: through the scripted
 * `modelGateway.completeAt` (the provider's own items) and through the editor as the user types.
 */
describe('Code completion through the gateway', function () {
  let gw: GatewayDouble;
  const folder = () => {
    const f = vscode.workspace.workspaceFolders?.[0];
    assert.ok(f, 'the integration run opens a workspace folder');
    return f.uri;
  };
  const written: vscode.Uri[] = [];
  async function write(relative: string, text: string): Promise<vscode.Uri> {
    const uri = vscode.Uri.joinPath(folder(), 'completion-test', relative);
    await vscode.workspace.fs.writeFile(uri, Buffer.from(text));
    written.push(uri);
    return uri;
  }
  /** The items at the end of the file's text. */
  async function completeAtEnd(uri: vscode.Uri): Promise<Item[]> {
    const doc = await vscode.workspace.openTextDocument(uri);
    const end = doc.positionAt(doc.getText().length);
    return run<Item[]>('completeAt', { uri: uri.toString(), position: { line: end.line, character: end.character } });
  }
  const sent = (): RequestLogEntry[] =>
    gw.log.filter((e) => e.path === '/v1/completions' || e.path === '/v1/chat/completions');

  before(async () => {
    gw = new GatewayDouble();
    await gw.start();
    await useDouble(gw);
  });

  after(async () => {
    await setSetting('completions.enabled', undefined);
    await setSetting('completions.model', undefined);
    await setSetting('completions.exclude', undefined);
    // The suites after this one start with no key, as a new user does.
    await run('clearApiKey', { all: true });
    await closeEditorsDiscarding();
    await vscode.workspace.fs
      .delete(vscode.Uri.joinPath(folder(), 'completion-test'), { recursive: true, useTrash: false })
      .then(undefined, () => undefined);
    await gw.stop();
  });

  beforeEach(() => {
    gw.clearLog();
    gw.clearFaults();
  });

  it('sends nothing while it is off', async () => {
    await setSetting('completions.model', 'deepseek-chat');
    await setSetting('completions.enabled', false);
    const uri = await write('off.ts', '// [[fim:a + b;]]\nconst s = ');
    assert.deepEqual(await completeAtEnd(uri), []);
    assert.deepEqual(sent(), []);
  });

  it('completes with a fill-in-the-middle model, sending prefix and suffix', async () => {
    assert.deepEqual(await run('chooseCompletionModel', 'deepseek-chat'), { model: 'deepseek-chat' });
    const uri = await write('fim.ts', '// [[fim:a + b;]]\nconst s = ');
    const items = await completeAtEnd(uri);
    assert.equal(items[0]?.insertText, 'a + b;');
    const record = gw.log.find((e) => e.path === '/v1/completions')?.completion;
    assert.equal(record?.form, 'suffix');
    assert.ok(record?.prefix.endsWith('// [[fim:a + b;]]\nconst s = '), record?.prefix);
    assert.ok(record?.prefix.includes('Path: completion-test/fim.ts'), 'the file path goes with it');
  });

  it('completes with a chat model, cleaning its answer', async () => {
    await run('chooseCompletionModel', 'kimi-k2-0905-preview');
    const uri = await write('chat.ts', '// [[fim:42;]]\nconst answer = ');
    const items = await completeAtEnd(uri);
    assert.equal(items[0]?.insertText, '42;');
    assert.deepEqual(
      sent().map((e) => e.path),
      ['/v1/chat/completions'],
      'a chat model gets no FIM request',
    );
  });

  it('never sends a .env file or an excluded file, nor puts them in another file’s context', async () => {
    await run('chooseCompletionModel', 'deepseek-chat');
    await setSetting('completions.exclude', ['completion-test/private/**']);
    const env = await write('.env', 'API_TOKEN=never-sent-1\n');
    const excluded = await write('private/notes.ts', '// never-sent-2\nconst x = ');
    assert.deepEqual(await completeAtEnd(env), []);
    assert.deepEqual(await completeAtEnd(excluded), []);
    assert.deepEqual(sent(), []);
    // Both edited: recent files, yet never snippets of a completion elsewhere.
    for (const uri of [env, excluded]) {
      const editor = await vscode.window.showTextDocument(uri);
      await editor.edit((e) => e.insert(new vscode.Position(0, 0), ' '));
    }
    const items = await completeAtEnd(await write('open.ts', '// [[fim:1;]]\nconst y = '));
    assert.equal(items[0]?.insertText, '1;');
    const body = sent()
      .map((e) => e.bodyText ?? '')
      .join('\n');
    assert.ok(!body.includes('never-sent'), 'no secret or excluded text was sent');
  });

  // Typing that departs from the answer ('x') and typing that could still fit it ('o' of 'one …').
  // Either way the VS Code of this run cancels its request's token as the document changes; the provider also
  // aborts on the edit itself (service.ts), so this holds whichever of the two comes first.
  for (const typed of ['x', 'o'])
    it(`aborts the request, its connection closed, when the user types on ("${typed}")`, async () => {
      await run('chooseCompletionModel', 'deepseek-chat');
      // The double streams the first word at once, then waits 10 s before each further frame.
      const uri = await write(`typing-${typed}.ts`, '// [[slow:10000]] [[fim:one two three four five]]\nconst w = ');
      const editor = await vscode.window.showTextDocument(uri);
      const end = editor.document.positionAt(editor.document.getText().length);
      editor.selection = new vscode.Selection(end, end);
      // Not awaited: the trigger command resolves only once the completion it asked for has ended.
      const triggered = vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
      const request = () => gw.log.find((e) => e.path === '/v1/completions');
      await until(() => request()?.completion !== undefined, 'the completion request reached the gateway');
      assert.equal(request()?.completion?.aborted, false, 'still in flight');
      // The user types on at the cursor.
      await vscode.commands.executeCommand('type', { text: typed });
      await until(() => request()?.completion?.aborted === true, 'the gateway saw the connection closed');
      await triggered;
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    });

  it('pauses quietly after a 429, without a further request', async () => {
    await run('chooseCompletionModel', 'deepseek-chat');
    gw.inject({
      match: { path: '/v1/completions' },
      times: 1,
      action: {
        type: 'status',
        status: 429,
        headers: { 'Retry-After': '60' },
        body: JSON.stringify({ error: { message: 'rate limited', type: 'new_api_error', code: 'rate_limit' } }),
      },
    });
    const uri = await write('limited.ts', '// [[fim:2;]]\nconst z = ');
    assert.deepEqual(await completeAtEnd(uri), []);
    assert.equal(sent().length, 1);
    assert.deepEqual(await completeAtEnd(uri), [], 'paused: nothing shown');
    assert.equal(sent().length, 1, 'paused: nothing sent');
  });
});
