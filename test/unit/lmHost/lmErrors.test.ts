// First: answers `vscode` for every host module imported after it.
import { fake } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import { errorFromResponse } from '../../../src/core/errorBody';
import { toLanguageModelError } from '../../../src/host/lm/chatProvider';

/** new-api's error body for a code, as VS Code's chat gets it through the provider. */
const refusal = (status: number, code: string, message: string) =>
  errorFromResponse({
    status,
    body: JSON.stringify({ error: { message: `${message} (request id: r-1)`, type: 'new_api_error', code } }),
  });

describe("VS Code's chat: the gateway's limits as language-model errors", () => {
  const cases = [
    {
      status: 400,
      code: 'sensitive_words_detected',
      words: '包含敏感词',
      kind: 'Blocked',
      says: /The gateway refused this content/,
    },
    {
      status: 400,
      code: 'prompt_blocked',
      words: 'prompt blocked',
      kind: 'Blocked',
      says: /The gateway refused this content/,
    },
    {
      status: 429,
      code: 'token_concurrency_limit_reached',
      words: 'token_concurrency_limit_reached',
      kind: 'Blocked',
      says: /concurrency limit/,
    },
    {
      status: 403,
      code: 'insufficient_user_quota',
      words: '用户额度不足',
      kind: 'Blocked',
      says: /quota is not enough/,
    },
    {
      status: 503,
      code: 'model_not_found',
      words: 'No available channel for model m under group default (distributor)',
      kind: 'NotFound',
      says: /not granted/,
    },
  ] as const;
  for (const c of cases) {
    it(`${c.code} → ${c.kind}, with the same words as the sidebar and the request id`, () => {
      const error = refusal(c.status, c.code, c.words);
      const lm = toLanguageModelError(error) as InstanceType<typeof fake.LanguageModelError>;
      assert.ok(lm instanceof fake.LanguageModelError);
      assert.equal(lm.code, c.kind);
      assert.match(lm.message, c.says);
      assert.equal(lm.message, error.describe());
      assert.match(lm.message, /request id: r-1/);
    });
  }
});
