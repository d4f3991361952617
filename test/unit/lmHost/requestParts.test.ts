/**
 * What the provider makes of the parts of VS Code's request messages: textual data parts of tool
 * results are passed on as text, parts this version does not carry are reported (the provider logs
 * each kind once), and images are counted as each protocol's upstream bills them.
 */
// First: answers `vscode` for every host module imported after it.
import { fake } from '../chatHost/fakeVscode';
import assert from 'node:assert/strict';
import { estimateMessageTokens, toChatMessages } from '../../../src/host/lm/requestMessages';
import { encodePng } from '../../gateway/png';

const MAX_IMAGE = 5 * 1024 * 1024;
const dataPart = (mimeType: string, data: string | Uint8Array) => ({
  mimeType,
  data: typeof data === 'string' ? new TextEncoder().encode(data) : data,
});
const user = (content: unknown[]) => ({ role: fake.LanguageModelChatMessageRole.User, content, name: undefined });
const assistant = (content: unknown[]) => ({
  role: fake.LanguageModelChatMessageRole.Assistant,
  content,
  name: undefined,
});

/** A part kind newer than this code (the shape of VS Code's proposed thinking part). */
class LanguageModelThinkingPart {
  constructor(
    readonly value: string,
    readonly id?: string,
  ) {}
}

describe("VS Code chat request parts: tool results' data parts, unknown parts, image tokens", () => {
  it('passes tool results of text/plain, text/* and JSON data parts on as text', () => {
    const call = new fake.LanguageModelToolCallPart('c1', 'lookup', {});
    const result = new fake.LanguageModelToolResultPart('c1', [
      dataPart('text/plain', 'plain; '),
      dataPart('application/json', '{"a":1}'),
      dataPart('text/markdown', ' # md'),
      new fake.LanguageModelTextPart(' and text'),
    ]);
    const seen: string[] = [];
    const out = toChatMessages(
      [user([new fake.LanguageModelTextPart('q')]), assistant([call]), user([result])] as never,
      MAX_IMAGE,
      undefined,
      (kind) => seen.push(kind),
    );
    assert.deepEqual(out.messages.at(-1)?.toolResults, [{ callId: 'c1', content: 'plain; {"a":1} # md and text' }]);
    assert.deepEqual(seen, []);
  });

  it('reports every part it leaves out, by kind: a newer part class, a data part of another type, in a message or a tool result', () => {
    const call = new fake.LanguageModelToolCallPart('c1', 'screenshot', {});
    const png = encodePng(4, 4, new Uint8Array(48));
    const messages = [
      user([new fake.LanguageModelTextPart('q'), dataPart('cache_control', 'ephemeral')]),
      assistant([new LanguageModelThinkingPart('I think', 't1'), call]),
      user([
        new fake.LanguageModelToolResultPart('c1', [
          new fake.LanguageModelTextPart('shot:'),
          dataPart('image/png', png),
        ]),
      ]),
    ];
    const seen: string[] = [];
    const out = toChatMessages(messages as never, MAX_IMAGE, undefined, (kind) => seen.push(kind));
    assert.deepEqual(seen, [
      'message: data part of type cache_control',
      'message: LanguageModelThinkingPart {id, value}',
      'tool result: data part of type image/png',
    ]);
    assert.equal(out.messages[0]?.content, 'q', 'what is carried still goes');
    assert.equal(out.messages.at(-1)?.toolResults?.[0]?.content, 'shot:');
  });

  it('counts an image as the protocol bills it, from the size in its header', () => {
    const image = user([dataPart('image/png', encodePng(1024, 1024, new Uint8Array(1024 * 1024 * 3)))]);
    assert.equal(estimateMessageTokens(image as never, 'chatCompletions'), 85 + 170 * 4);
    assert.equal(estimateMessageTokens(image as never, 'responses'), 85 + 170 * 4);
    assert.equal(estimateMessageTokens(image as never, 'messages'), Math.ceil((1024 * 1024) / 750));
  });
});
