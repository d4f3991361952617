/**
 * The confirmation VS Code shows before an agent tool runs (`prepareInvocation`), outside VS Code
 * (fakeVscode.ts): a modal cannot be answered in the headless host, so the tool objects (which the
 * extension's entry registers behind forwarders) are asked directly, as VS Code asks them before each call.
 */
// First: answers `vscode` for every host module imported after it.
import { CancellationTokenSource, ui } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import type * as vscode from 'vscode';
import { DEFAULT_CALL_PRICE_USD } from '../../../src/core/tools/billing';
import { agentTools, TOOL_NAMES } from '../../../src/host/lm/agentTools';

type Prepared = vscode.PreparedToolInvocation | null | undefined;

let tools = new Map<string, vscode.LanguageModelTool<unknown>>();

function prepare(name: string, input: object): Prepared {
  const tool = tools.get(name) as vscode.LanguageModelTool<object> | undefined;
  assert.ok(tool?.prepareInvocation, `${name} is registered with a prepareInvocation`);
  return tool.prepareInvocation({ input }, new CancellationTokenSource().token as never) as Prepared;
}

const PRICE = `US$${DEFAULT_CALL_PRICE_USD.toFixed(2)}`;

/** The confirmation's Markdown, checked for the Chat view's narrow panel. */
function markdownOf(message: string | vscode.MarkdownString): string {
  assert.ok(typeof message !== 'string', 'the message is Markdown (a MarkdownString), not a plain string');
  assert.deepEqual(
    message.isTrusted,
    { enabledCommands: ['workbench.action.openSettings'] },
    'no command link but the one to the setting',
  );
  return message.value;
}

/**
 * Short paragraphs, and last a link of a few words that opens the setting (its id cannot wrap, so it
 * is the link's target and title, not its text).
 */
function assertNarrow(markdown: string): void {
  const lines = markdown.split('\n').filter((l) => l.trim());
  for (const line of lines.slice(0, -1))
    assert.ok(line.length <= 48, `a short line: "${line}" (${line.length} characters)`);
  const link =
    /^\[([^\]]+)\]\(command:workbench\.action\.openSettings\?([^ )]+) "modelGateway\.tools\.confirmBilledCalls"\)$/.exec(
      lines.at(-1) ?? '',
    );
  assert.ok(link, `the last line links to the setting: ${lines.at(-1)}`);
  assert.ok((link[1] ?? '').length <= 40, 'the link text is short');
  assert.deepEqual(JSON.parse(decodeURIComponent(link[2] ?? '')), ['modelGateway.tools.confirmBilledCalls']);
}

describe("VS Code's own chat: agent tools' confirmation before a call", () => {
  beforeEach(() => {
    ui.settings = {};
    tools = agentTools({} as never, () => {
      throw new Error('no media studio is needed to prepare a call');
    });
  });

  const billed: Array<[string, object]> = [
    [TOOL_NAMES.searchWeb, { query: 'tides' }],
    [TOOL_NAMES.readWebPage, { url: 'https://example.com/' }],
    [TOOL_NAMES.parsePdf, { path: 'a.pdf' }],
    [TOOL_NAMES.ocr, { path: 'scan.png' }],
  ];

  for (const [name, input] of billed) {
    it(`${name}: billed per call, so VS Code asks first and the question states the price`, () => {
      const prepared = prepare(name, input);
      assert.ok(prepared?.invocationMessage, 'says what it is doing');
      const question = prepared.confirmationMessages;
      assert.ok(question, 'a confirmation is asked');
      assert.match(question.title, /billed/);
      const markdown = markdownOf(question.message);
      assert.ok(markdown.includes(PRICE), `the price ${PRICE} is in: ${markdown}`);
      assertNarrow(markdown);
    });

    it(`${name}: no confirmation when "modelGateway.tools.confirmBilledCalls" is off`, () => {
      ui.settings['modelGateway.tools.confirmBilledCalls'] = false;
      const prepared = prepare(name, input);
      assert.ok(prepared?.invocationMessage);
      assert.equal(prepared.confirmationMessages, undefined);
    });
  }

  it("image generation is not a per-call tool: it asks, naming the image model's price, not the per-call one", () => {
    const prepared = prepare(TOOL_NAMES.generateImage, { prompt: 'a lighthouse', model: 'gpt-image-1' });
    const question = prepared?.confirmationMessages;
    assert.ok(question, 'a confirmation is asked');
    const message = markdownOf(question.message);
    assert.ok(!message.includes(PRICE), `no per-call price in: ${message}`);
    assert.match(message, /Billed at the image model's price/);
    assert.match(message, /gpt\\-image\\-1/, 'the model id, as text (escaped)');
    assertNarrow(message);
    assertNarrow(
      markdownOf(
        prepare(TOOL_NAMES.generateImage, { prompt: 'a lighthouse', model: '*bold* [x](command:evil)' })
          ?.confirmationMessages?.message ?? '',
      ),
    );
    assert.doesNotMatch(
      markdownOf(
        prepare(TOOL_NAMES.generateImage, { prompt: 'a lighthouse', model: '[x](command:evil)' })?.confirmationMessages
          ?.message ?? '',
      ),
      /(?<!\\)\]\(command:evil/,
      'a crafted model id is no link',
    );
    ui.settings['modelGateway.tools.confirmBilledCalls'] = false;
    assert.equal(prepare(TOOL_NAMES.generateImage, { prompt: 'a lighthouse' })?.confirmationMessages, undefined);
  });

  it('an input the schema refuses fails clearly before anything is asked', () => {
    assert.throws(() => prepare(TOOL_NAMES.searchWeb, { count: 3 }), /modelGateway_searchWeb/);
  });
});
