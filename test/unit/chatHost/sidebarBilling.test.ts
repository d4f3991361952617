/**
 * The sidebar chat's answers count in the status bar's session figures, as VS Code chat's answers
 * and the billed tools do.
 */
// First: answers `vscode` for every host module imported after it.
import { ui } from './fakeVscode';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConversationStore } from '../../../src/core/chat/conversationStore';
import { BillingMeter } from '../../../src/core/tools/billing';
import { ChatController } from '../../../src/host/chat/chatController';
import { sessionFigures } from '../../../src/host/statusBar';
import { chatServices } from '../../support/chatServices';
import { useDoubleClient } from '../../support/client';

describe("The sidebar chat in the session's figures", function () {
  this.timeout(60_000);
  const double = useDoubleClient();

  it('counts each answer with the tokens the gateway reported', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mg-sidebar-billing-'));
    const store = new ConversationStore(path.join(dir, 'conversations'), { watch: 'poll' });
    const billing = new BillingMeter();
    const chat = new ChatController(
      chatServices({ storageDir: dir, baseUrl: double.gw.url, http: double.http, billing }),
      store,
    );
    chat.attach({ post: () => undefined, isLive: () => true, reload: () => undefined });
    try {
      await chat.sendSnapshot();
      const answer = await chat.send('Hello there');
      assert.equal(answer?.status, 'done');
      const side = billing.sidebarChatTokens;
      assert.equal(side.answers, 1);
      assert.ok(side.inputTokens > 0 && side.outputTokens > 0, JSON.stringify(side));
      assert.equal(billing.chatTokens.answers, 0, "VS Code chat's own count is apart");
      assert.ok(
        sessionFigures(billing).some((f) =>
          /^1 answer in the sidebar chat, [\d,]+ input and [\d,]+ output tokens$/.test(f),
        ),
        sessionFigures(billing).join(' | '),
      );
    } finally {
      chat.dispose();
      store.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('asks for prompt caching (prompt_cache_key for an OpenAI model), and says what came from the cache; the setting turns it off', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mg-sidebar-cache-'));
    const store = new ConversationStore(path.join(dir, 'conversations'), { watch: 'poll' });
    const billing = new BillingMeter();
    const chat = new ChatController(
      chatServices({ storageDir: dir, baseUrl: double.gw.url, http: double.http, billing }),
      store,
    );
    chat.attach({ post: () => undefined, isLive: () => true, reload: () => undefined });
    ui.settings['modelGateway.chat.systemPrompt'] = 'Answer as a careful reviewer of the code you are shown. '.repeat(
      120,
    );
    double.gw.clearPromptCache();
    try {
      await chat.sendSnapshot();
      await chat.send('First question');
      const second = await chat.send('Second question');
      const bodies = double.gw.log
        .filter((e) => e.path === '/v1/chat/completions')
        .map((e) => JSON.parse(e.bodyText ?? '{}') as Record<string, unknown>);
      assert.ok(
        bodies.length >= 2 && bodies.every((b) => typeof b.prompt_cache_key === 'string'),
        'each request carries the conversation’s key',
      );
      assert.equal(bodies.at(-1)?.prompt_cache_key, bodies.at(-2)?.prompt_cache_key);
      assert.ok((second?.usage?.cachedInputTokens ?? 0) > 0, JSON.stringify(second?.usage));
      assert.ok(billing.sidebarChatTokens.cachedInputTokens > 0);
      assert.ok(
        sessionFigures(billing).some((f) =>
          /^[\d,]+ of the sidebar chat's input tokens came from the prompt cache$/.test(f),
        ),
        sessionFigures(billing).join(' | '),
      );
      ui.settings['modelGateway.chat.promptCaching'] = false;
      double.gw.clearLog();
      await chat.send('Third question');
      const third = double.gw.log.find((e) => e.path === '/v1/chat/completions');
      assert.ok(
        third && !('prompt_cache_key' in (JSON.parse(third.bodyText ?? '{}') as object)),
        'the setting off asks nothing',
      );
    } finally {
      delete ui.settings['modelGateway.chat.systemPrompt'];
      delete ui.settings['modelGateway.chat.promptCaching'];
      chat.dispose();
      store.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
