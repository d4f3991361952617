// First: answers `vscode` for every host module imported after it.
import { fake } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import { errorFromResponse } from '../../../src/core/errorBody';
import { GatewayError } from '../../../src/core/errors';
import { toLanguageModelError } from '../../../src/host/lm/lmErrors';

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
      const lm = toLanguageModelError(error) as Error & { code?: string };
      assert.equal(lm.code, c.kind);
      assert.match(lm.message, c.says);
      assert.equal(lm.message, error.describe());
      assert.match(lm.message, /request id: r-1/);
    });
  }

  // VS Code rebuilds an error named LanguageModelError with a stack of its own at each process it
  // crosses, and the Chat view shows "message: stack" for an error with a stack.
  it('carries no stack and no name VS Code rebuilds, so the Chat view shows the message alone', () => {
    for (const err of [
      refusal(403, 'insufficient_user_quota', '用户额度不足'),
      new GatewayError('server', 'The gateway failed.', { cause: new Error('inner') }),
      new Error('plain'),
      new fake.LanguageModelError('from elsewhere', 'Blocked'),
    ]) {
      const lm = toLanguageModelError(err) as Error & { code?: string };
      assert.notEqual(lm.name, 'LanguageModelError');
      assert.equal(lm.stack, '');
      assert.equal(lm.cause, undefined);
    }
    assert.equal(
      (toLanguageModelError(new fake.LanguageModelError('x', 'Blocked')) as { code?: string }).code,
      'Blocked',
    );
    assert.equal((toLanguageModelError(new GatewayError('server', 'x')) as { code?: string }).code, undefined);
  });

  it('a cancellation stays a cancellation', () => {
    assert.ok(toLanguageModelError(new GatewayError('cancelled', 'stopped')) instanceof fake.CancellationError);
  });
});
