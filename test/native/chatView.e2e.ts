import * as assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { DEMO_KEY, ZERO_QUOTA_KEY, type RequestLogEntry } from '../gateway';
import { ui } from '../e2e/context';
import { until } from '../support/until';
import { clearNotifications, masked, notification, parkMouse, setApiKey, waitForStatus } from '../e2e/workbench';
import {
  allowTool,
  chatInput,
  closeLanguageModelsEditor,
  contextUsage,
  languageModelRow,
  lastResponse,
  newChat,
  pickMode,
  pickModel,
  screenshot,
  sendPrompt,
  setTheme,
  showChatView,
  stopRequest,
  toolConfirmation,
  waitForAnswer,
} from './chatView';

/**
 * VS Code's own Chat view with the gateway's models, as a user without a GitHub sign-in meets it in
 * VS Code 1.139: set the key, accept the offer to manage language models (which sets the chat up),
 * pick a gateway model, chat in Ask mode, run agent-mode tool loops (VS Code's built-in read_file and
 * the extension's #gatewaySearch with its price confirmation), stop an answer, read the context
 * indicator and a quota error. The double's request log shows what reached the gateway.
 * Screenshots land in test-results/native-chat/.
 */
describe("VS Code's own Chat view and agent mode (VS Code 1.139)", function () {
  let settingsFile = '';
  /** Where the running scenario's requests begin in the double's log. */
  let since = 0;
  const requests = (): RequestLogEntry[] => ui().double.log.slice(since);
  const chatRequests = (): RequestLogEntry[] => requests().filter((e) => e.answer !== undefined);
  const body = (e: RequestLogEntry | undefined): Record<string, unknown> =>
    JSON.parse(e?.bodyText ?? '{}') as Record<string, unknown>;

  before(async () => {
    const { codeServer } = ui();
    settingsFile = path.join(codeServer.scratchDir, 'ud', 'User', 'settings.json');
  });

  beforeEach(() => {
    since = ui().double.log.length;
  });

  it('offers Chat: Manage Language Models once the key is set (which lists the gateway models), then a utility model: the cheapest is written to the user settings and the BYOK box goes', async () => {
    const { page } = ui();
    await setApiKey(page, DEMO_KEY);
    await waitForStatus(page, masked(DEMO_KEY), 'check');
    const offer = await notification(page, /Manage Language Models/);
    await parkMouse(page);
    await screenshot(page, 'manage-models-offer');
    await offer.locator
      .locator('a.monaco-button', { hasText: /Manage Language Models/ })
      .first()
      .click();
    await languageModelRow(page, 'GPT-4o mini').waitFor();
    await languageModelRow(page, 'Kimi K2 Thinking').waitFor();
    await parkMouse(page);
    await screenshot(page, 'manage-language-models');
    await closeLanguageModelsEditor(page);
    await showChatView(page);

    const box = page.locator('.part.auxiliarybar .chat-input-notification-widget', {
      hasText: 'Set BYOK utility models',
    });
    await box.waitFor();
    const utility = await notification(page, /needs a utility model/);
    await parkMouse(page);
    await screenshot(page, 'utility-model-offer');
    await utility.locator.locator('a.monaco-button', { hasText: 'Choose Utility Model' }).click();
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'modelGateway/' }).first();
    await row.waitFor();
    assert.match(
      await row.innerText(),
      /US\$[\d.]+ in, US\$[\d.]+ out per million tokens/,
      'the price is shown with the choice',
    );
    await screenshot(page, 'utility-model-pick');
    const chosen = /modelGateway\/[\w.-]+/.exec(await row.innerText())?.[0];
    await row.click();
    // VS Code rewrites the file in place: a read may catch it empty or half written, which is not yet the answer.
    const written = async (): Promise<unknown> =>
      (parseJsonc(await fsp.readFile(settingsFile, 'utf8')) as Record<string, unknown> | undefined)?.[
        'chat.utilityModel'
      ];
    await until(async () => (await written()) === chosen, `chat.utilityModel = ${chosen} in the user settings`);
    await box.waitFor({ state: 'hidden' });
    await clearNotifications(page);
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`Ask mode streams a gateway model's answer (${theme} theme)`, async () => {
      const { page } = ui();
      await setTheme(page, settingsFile, theme);
      await newChat(page);
      await pickMode(page, 'Ask');
      await pickModel(page, 'GPT-4o mini');
      const row = await sendPrompt(page, `[[slow:60]] Hello from the ${theme} Chat view`);
      // Text shows while the answer is still being written: it streams, it is not put in at the end.
      await row
        .locator('.interactive-response.chat-response-loading')
        .filter({ hasText: 'Echo from gpt-4o-mini' })
        .waitFor();
      await waitForAnswer(page, `Hello from the ${theme} Chat view`);
      await parkMouse(page);
      await screenshot(page, `ask-${theme}`);
      // VS Code also asks the utility model (gpt-4o-mini here) for a title; the answer is the streamed request that carries the prompt.
      const sent = chatRequests().filter(
        (e) => e.answer?.model === 'gpt-4o-mini' && (e.bodyText ?? '').includes(`Hello from the ${theme} Chat view`),
      );
      assert.ok(sent.length > 0, 'the prompt reached the gateway');
      assert.deepEqual([...new Set(sent.map((e) => e.path))], ['/v1/chat/completions']);
      assert.ok(
        sent.some((e) => body(e).stream === true),
        'the answer was asked for as a stream',
      );
    });
  }

  it('Agent mode: a built-in tool reads a workspace file, #gatewaySearch runs after its price confirmation, then the model answers', async () => {
    const { page, workspace } = ui();
    await newChat(page);
    await pickMode(page, 'Agent');
    await pickModel(page, 'GPT-4o mini');
    const readme = path.join(workspace, 'README.md');
    await sendPrompt(
      page,
      `[[tools:read_file,modelGateway_searchWeb]] Read the README, then #gatewaySearch for it. filePath=${readme} query=pelican`,
    );
    const confirmation = toolConfirmation(page, /billed/i);
    await confirmation.waitFor({ timeout: 120_000 });
    for (const theme of ['dark', 'light'] as const) {
      await setTheme(page, settingsFile, theme);
      await parkMouse(page);
      await screenshot(page, `agent-confirmation-${theme}`);
    }
    // Written for the narrow panel: nothing of our message runs past its right edge, and the setting is a link that opens it.
    const message = confirmation.locator('.chat-confirmation-widget-message .rendered-markdown').first();
    const overflow = await message.evaluate((el) => {
      const box = el.getBoundingClientRect();
      return Array.from(el.querySelectorAll('p, a, code'))
        .filter((child) => child.getBoundingClientRect().right > box.right + 1)
        .map((child) => child.textContent?.slice(0, 60));
    });
    assert.deepEqual(overflow, [], 'parts of the confirmation are cut off at the right edge');
    await message.locator('a', { hasText: 'Turn this question off in Settings' }).waitFor();
    await allowTool(page, confirmation);
    await waitForAnswer(page, 'After 2 tool rounds', 120_000);
    await parkMouse(page);
    await screenshot(page, 'agent-answer');

    // The agent's own requests offer tools; VS Code's title and progress requests to the utility model do not.
    const chats = chatRequests().filter((e) => Array.isArray(body(e).tools) && (body(e).tools as unknown[]).length > 0);
    assert.deepEqual(
      chats.map((e) => e.path),
      ['/v1/chat/completions', '/v1/chat/completions', '/v1/chat/completions'],
    );
    assert.deepEqual(
      chats.map((e) => e.answer?.toolCalls.map((c) => c.name)),
      [['read_file'], ['modelGateway_searchWeb'], []],
    );
    // Each round goes back in the Chat Completions form: the assistant's tool_calls, then a role "tool" message with the result.
    const last = body(chats[2]).messages as Array<Record<string, unknown>>;
    const toolMessages = last.filter((m) => m.role === 'tool');
    assert.equal(toolMessages.length, 2);
    assert.match(JSON.stringify(toolMessages[0]?.content), /Scratch project/, 'the README text reached the model');
    assert.match(JSON.stringify(toolMessages[1]?.content), /pelican/, 'the search results reached the model');
    assert.equal(last.filter((m) => m.role === 'assistant' && Array.isArray(m.tool_calls)).length, 2);
    const search = requests().filter((e) => e.tool !== undefined);
    assert.equal(search.length, 1, 'one billed search');
    assert.match(search[0]?.bodyText ?? '', /pelican/);
  });

  it('a Kimi-type thinking model keeps its reasoning with every tool-call turn through a three-round agent loop', async () => {
    const { page, workspace } = ui();
    await newChat(page);
    await pickMode(page, 'Agent');
    await pickModel(page, 'Kimi K2 Thinking');
    await sendPrompt(
      page,
      `[[tools:read_file,read_file,read_file]] Read the README three times. filePath=${path.join(workspace, 'README.md')}`,
    );
    await waitForAnswer(page, 'After 3 tool rounds', 180_000);
    await parkMouse(page);
    await screenshot(page, 'agent-kimi-thinking');
    const kimi = chatRequests().filter((e) => e.answer?.model === 'kimi-k2-thinking' && Array.isArray(body(e).tools));
    assert.equal(kimi.length, 4, 'three tool rounds and the answer');
    // The double refuses a tool-call turn sent back without its reasoning (as Moonshot does); every request was accepted.
    assert.deepEqual(
      kimi.map((e) => e.status),
      [200, 200, 200, 200],
    );
    const turns = (body(kimi[3]).messages as Array<Record<string, unknown>>).filter(
      (m) => m.role === 'assistant' && Array.isArray(m.tool_calls),
    );
    assert.equal(turns.length, 3);
    for (const turn of turns)
      assert.ok(
        typeof turn.reasoning_content === 'string' && turn.reasoning_content.length > 0,
        'a tool-call turn went back without its reasoning',
      );
  });

  it('Stop in the Chat view cuts the gateway stream', async () => {
    const { page, double } = ui();
    await newChat(page);
    await pickMode(page, 'Ask');
    await pickModel(page, 'GPT-4o mini');
    // 400 ms between frames and 8 KB of text: minutes of streaming unless the request is cut.
    const row = await sendPrompt(page, '[[slow:400]] [[long:8]] A long answer to stop');
    await row
      .locator('.interactive-response.chat-response-loading')
      .filter({ hasText: 'Echo from gpt-4o-mini' })
      .waitFor();
    await stopRequest(page);
    await row.locator('.interactive-response:not(.chat-response-loading)').waitFor();
    // The double settles an answer's cost when its stream ends; a closed connection ends it early.
    await until(
      () => chatRequests().at(-1)?.answer?.chargedQuota !== undefined,
      'the gateway stream to end after Stop',
      60_000,
    );
    const entry = chatRequests().at(-1);
    const shown = (await row.innerText()).length;
    const planned = entry?.answer?.text.length ?? 0;
    assert.ok(shown < planned / 4, `only the start of the answer arrived (${shown} of ${planned} characters shown)`);
    assert.equal(
      double.log.filter((e) => e.answer?.text === entry?.answer?.text).length,
      1,
      'the stopped answer was not asked for again',
    );
    await parkMouse(page);
    await screenshot(page, 'ask-stopped');
  });

  it("the context indicator shows the gateway's usage for the last answer", async () => {
    const { page } = ui();
    await newChat(page);
    await pickMode(page, 'Ask');
    await pickModel(page, 'GPT-4o mini');
    await sendPrompt(page, 'How full is the context?');
    await waitForAnswer(page, 'How full is the context?');
    const usage = chatRequests().at(-1)?.answer?.usage;
    assert.ok(usage);
    const shown = await contextUsage(page);
    // The figure is shown rounded to a tenth of a thousand ("5.7K").
    const total = usage.promptTokens + usage.completionTokens;
    assert.ok(
      Math.abs(shown.used - total) <= Math.max(60, total * 0.02),
      `the indicator shows ${shown.used} tokens, the gateway counted ${total} (${shown.text})`,
    );
  });

  it("a quota error shows the gateway's own words once in the Chat view, with no stack trace and no file path", async () => {
    const { page } = ui();
    await setApiKey(page, ZERO_QUOTA_KEY);
    await waitForStatus(page, masked(ZERO_QUOTA_KEY));
    try {
      await clearNotifications(page);
      await newChat(page);
      await pickMode(page, 'Ask');
      await pickModel(page, 'GPT-4o mini');
      await sendPrompt(page, 'Anything left on this key?');
      const row = lastResponse(page);
      await row.filter({ hasText: '用户额度不足' }).waitFor({ timeout: 120_000 });
      await parkMouse(page);
      await screenshot(page, 'ask-quota-error');
      const shown = await row.innerText();
      assert.ok(!shown.includes(ZERO_QUOTA_KEY), 'the key is shown in the error');
      assert.equal(shown.split('用户额度不足').length - 1, 1, `the gateway's words are shown once: ${shown}`);
      // A stack frame reads "at name (file:line:column)"; a path of the extension or of VS Code ends in ".js:line".
      assert.doesNotMatch(shown, /\bat .*:\d+:\d+|\.js:\d+/, `no stack trace or file path: ${shown.slice(0, 600)}`);
    } finally {
      await setApiKey(page, DEMO_KEY);
      await waitForStatus(page, masked(DEMO_KEY), 'check');
      await chatInput(page).waitFor();
    }
  });
});
