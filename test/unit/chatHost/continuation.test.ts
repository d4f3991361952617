/** The request that continues an answer cut at the max tokens limit, per protocol. */
// First: answers `vscode` for the host module imported after it.
import './fakeVscode';
import assert from 'node:assert/strict';
import type { ChatMessage } from '../../../src/core/chat/events';
import type { ThinkingRequest } from '../../../src/core/chat/thinking';
import { CONTINUE_INSTRUCTION, continuationMessages } from '../../../src/core/chat/turns';

describe('Continue: the request per protocol', () => {
  const history: ChatMessage[] = [
    { role: 'user', content: 'Write a long story' },
    { role: 'assistant', content: 'Once upon a time \n' },
  ];
  const noThinking = (): ThinkingRequest | undefined => undefined;

  it('Messages: the partial answer is the last turn (a prefill), without its trailing whitespace', () => {
    assert.deepEqual(continuationMessages(history, 'messages', noThinking), [
      history[0],
      { role: 'assistant', content: 'Once upon a time' },
    ]);
  });

  it('Messages with thinking on: a prefill is refused there, so the instruction turn is added', () => {
    const on = (): ThinkingRequest => ({ wire: 'anthropicBudget', level: 'on' });
    assert.deepEqual(continuationMessages(history, 'messages', on), [
      ...history,
      { role: 'user', content: CONTINUE_INSTRUCTION },
    ]);
  });

  for (const protocol of ['chatCompletions', 'responses'] as const) {
    it(`${protocol}: the partial answer stays whole and a user turn asks to go on`, () => {
      assert.deepEqual(continuationMessages(history, protocol, noThinking), [
        ...history,
        { role: 'user', content: CONTINUE_INSTRUCTION },
      ]);
    });
  }
});
