import * as assert from 'node:assert/strict';
import { cleanChatAnswer, chatCompletionMessages, HOLE } from '../../../src/core/completion/chatFallback';
import { fimBody, QWEN_FIM, stopSequences } from '../../../src/core/completion/fim';
import { guessedPath } from '../../../src/core/completion/paths';
import { bracketsFit, finalCompletion, trimOverlap } from '../../../src/core/completion/filters';
import { buildPrompt, type CompletionPrompt } from '../../../src/core/completion/prompt';
import { linesOf } from '../../../src/core/completion/window';

function promptAt(text: string, language = 'typescript'): CompletionPrompt {
  const at = text.indexOf('|');
  const before = text.slice(0, at).split('\n');
  const doc = linesOf(text.slice(0, at) + text.slice(at + 1));
  const line = before.length - 1;
  return buildPrompt({
    doc,
    line,
    character: (before[line] ?? '').length,
    path: 'a.ts',
    language,
    snippets: [],
    budget: 1000,
  });
}

describe('Completion request forms', () => {
  it('guesses the path from the model id', () => {
    assert.equal(guessedPath('deepseek-chat'), 'fimSuffix');
    assert.equal(guessedPath('deepseek-v3.2'), 'fimSuffix');
    assert.equal(guessedPath('deepseek-reasoner'), 'chat');
    assert.equal(guessedPath('qwen2.5-coder-32b-instruct'), 'fimTokens');
    assert.equal(guessedPath('qwen-coder-turbo'), 'fimTokens');
    assert.equal(guessedPath('qwen-max'), 'chat');
    assert.equal(guessedPath('kimi-k2'), 'chat');
    assert.equal(guessedPath('glm-4.6'), 'chat');
  });

  it('sends prompt + suffix for a DeepSeek-type model', () => {
    const p = promptAt('const a = |;\nconsole.log(a);');
    const body = fimBody('fimSuffix', p, { model: 'deepseek-chat', stream: true }) as Record<string, unknown>;
    assert.equal(body.prompt, `${p.header}const a = `);
    assert.equal(body.suffix, ';\nconsole.log(a);');
    assert.equal(body.stream, true);
    assert.deepEqual(body.stop, ['\n']);
    assert.equal(body.max_tokens, 48);
    assert.deepEqual(body.stream_options, { include_usage: true });
  });

  it("puts the Qwen family's FIM tokens in prompt and sends no suffix for a Qwen coder model", () => {
    const p = promptAt('function f() {|\n}');
    const body = fimBody('fimTokens', p, { model: 'qwen2.5-coder-7b-instruct', stream: false }) as Record<
      string,
      unknown
    >;
    assert.equal(body.prompt, `${QWEN_FIM.prefix}${p.header}function f() {${QWEN_FIM.suffix}\n}${QWEN_FIM.middle}`);
    assert.equal('suffix' in body, false);
    assert.equal('stream_options' in body, false);
    assert.equal(body.max_tokens, 160);
    assert.deepEqual(stopSequences(p, 'fimTokens'), ['\n\n', '```', '<|endoftext|>', '<|file_sep|>']);
  });
});

describe('Completion through a chat model', () => {
  it('asks for the hole only, with the file around it', () => {
    const p = promptAt('x = |\ny = 2', 'python');
    const { system, messages } = chatCompletionMessages(p);
    assert.match(system, /only the text that goes in the hole/);
    assert.match(system, /one line/);
    assert.ok(messages[0]?.content.includes(`x = ${HOLE}\ny = 2`));
  });

  it('takes fences, echoed prefix and the hole marker off the answer', () => {
    const p = promptAt('function add(a, b) {\n  return |\n}');
    assert.equal(cleanChatAnswer('```js\n  return a + b;\n```', p), 'a + b;');
    assert.equal(cleanChatAnswer('```\na + b;\n```\n', p), 'a + b;');
    assert.equal(cleanChatAnswer('function add(a, b) {\n  return a + b;', p), 'a + b;');
    assert.equal(cleanChatAnswer('return a + b;', p), 'a + b;');
    assert.equal(cleanChatAnswer(`<COMPLETION>a + b;</COMPLETION>`, p), 'a + b;');
    assert.equal(cleanChatAnswer('a + b;\r\n', p), 'a + b;\n');
  });

  it('trims an echoed suffix (the overlap with the text after the cursor)', () => {
    const p = promptAt('print(|)');
    const cleaned = cleanChatAnswer('"hi")', p);
    assert.deepEqual(finalCompletion(cleaned, p), { text: '"hi"' });
  });
});

describe('Completion filters', () => {
  it('trims the part that the text after the cursor already has', () => {
    assert.equal(trimOverlap('a, b)', ')'), 'a, b');
    assert.equal(trimOverlap('x]);', ']);\n'), 'x');
    assert.equal(trimOverlap('abc', 'xyz'), 'abc');
  });

  it('drops whitespace-only completions', () => {
    assert.deepEqual(finalCompletion('   \n  ', promptAt('x = |')), { dropped: 'empty' });
  });

  it('drops a completion that repeats the line above or the next line', () => {
    const p = promptAt('  total += price;\n  |\n  return total;');
    assert.deepEqual(finalCompletion('total += price;', p), { dropped: 'repeatsLineAbove' });
    assert.deepEqual(finalCompletion('return total;', p), { dropped: 'repeatsSuffix' });
    assert.deepEqual(finalCompletion('count++;', p), { text: 'count++;' });
  });

  it('drops a completion that closes brackets never opened, or leaves one open mid-line', () => {
    assert.equal(bracketsFit('', 'a)', ''), false);
    assert.equal(bracketsFit('f(', 'a)', ''), true);
    assert.equal(bracketsFit('f(', 'a]', ''), false);
    assert.equal(bracketsFit('', 'g("(")', ''), true, 'brackets inside strings do not count');
    assert.equal(bracketsFit('x = ', 'f(a', ';'), false);
    assert.equal(bracketsFit('x = ', 'f(a', ');'), true);
    const p = promptAt('const v = |;');
    assert.deepEqual(finalCompletion('g(1));', p), { dropped: 'unbalanced' });
  });

  it('keeps the first line of a one-line request and the lines of a block', () => {
    assert.deepEqual(finalCompletion('1;\nconst b = 2;', promptAt('const a = |')), { text: '1;' });
    const block = promptAt('function f() {\n  |\n}');
    assert.deepEqual(finalCompletion('const x = 1;\n  return x;\n', block), { text: 'const x = 1;\n  return x;' });
  });
});
