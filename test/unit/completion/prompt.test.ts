import * as assert from 'node:assert/strict';
import { buildPrompt, wantsSeveralLines } from '../../../src/core/completion/prompt';
import { cursorWindow, keepEnd, keepStart, linesOf, tokenEstimate, toEol } from '../../../src/core/completion/window';

function numbered(n: number): string {
  return Array.from({ length: n }, (_, i) => `const line${i} = ${i};`).join('\n');
}

describe('Completion prompt: the window around the cursor', () => {
  it('splits the cursor line into the text before and after the cursor', () => {
    const doc = linesOf('function add(a, b) {\n  return a + b;\n}\n');
    const w = cursorWindow(doc, 1, 9, { prefixTokens: 100, suffixTokens: 100 });
    assert.equal(w.prefix, 'function add(a, b) {\n  return ');
    assert.equal(w.suffix, 'a + b;\n}\n');
    assert.equal(w.linePrefix, '  return ');
    assert.equal(w.lineSuffix, 'a + b;');
    assert.equal(w.lineAbove, 'function add(a, b) {');
  });

  it('keeps a long file within the budget, whole lines nearest the cursor first', () => {
    const doc = linesOf(numbered(2000));
    const w = cursorWindow(doc, 1000, 6, { prefixTokens: 200, suffixTokens: 50 });
    assert.ok(tokenEstimate(w.prefix) <= 200, `prefix ${tokenEstimate(w.prefix)} tokens`);
    assert.ok(tokenEstimate(w.suffix) <= 50, `suffix ${tokenEstimate(w.suffix)} tokens`);
    assert.ok(w.prefix.endsWith('\nconst '));
    assert.ok(w.prefix.startsWith('const line'), 'starts at a whole line');
    assert.ok(w.suffix.startsWith('line1000 = 1000;\nconst line1001'));
    assert.ok(w.prefix.split('\n').length > 5 && w.prefix.split('\n').length < 60);
  });

  it('reads only the lines near the cursor in a long file', () => {
    const read = new Set<number>();
    const text = linesOf(numbered(2000));
    const doc = { lineCount: 2000, lineAt: (i: number) => (read.add(i), text.lineAt(i)) };
    cursorWindow(doc, 1000, 0, { prefixTokens: 300, suffixTokens: 100 });
    assert.ok(read.size < 80, `${read.size} lines read`);
  });

  it('never puts a CR of a CRLF file into the prompt, and turns the completion back into CRLF', () => {
    const doc = linesOf('a = 1\r\nb = 2\r\nc = \r\nd = 4\r\n');
    const p = buildPrompt({ doc, line: 2, character: 4, path: 'x.py', language: 'python', snippets: [], budget: 500 });
    assert.ok(!p.prefix.includes('\r') && !p.suffix.includes('\r'));
    assert.equal(p.prefix, 'a = 1\nb = 2\nc = ');
    assert.equal(toEol('3\nx = 5', '\r\n'), '3\r\nx = 5');
    assert.equal(toEol('3\nx = 5', '\n'), '3\nx = 5');
  });

  it('cuts a line longer than the budget at a character, never inside a surrogate pair', () => {
    const emoji = '😀'.repeat(50); // 100 UTF-16 units
    const cut = keepEnd(`x${emoji}`, 7);
    assert.ok(!/^[\udc00-\udfff]/.test(cut), 'does not start with a lone low surrogate');
    assert.equal(cut, '😀'.repeat(7));
    const head = keepStart(`${emoji}x`, 3);
    assert.equal(head, '😀'.repeat(3));
    const cjk = '中文字符'.repeat(100);
    const doc = linesOf(`${cjk}|tail`);
    const w = cursorWindow(doc, 0, cjk.length, { prefixTokens: 10, suffixTokens: 10 });
    assert.equal(w.prefix, cjk.slice(-10));
  });

  it('keeps header, snippets, prefix and suffix together within the budget', () => {
    const doc = linesOf(numbered(3000));
    const snippets = [
      { path: 'src/util.ts', text: numbered(200) },
      { path: 'src/other.ts', text: 'export const x = 1;' },
    ];
    for (const budget of [64, 300, 1536]) {
      const p = buildPrompt({
        doc,
        line: 1500,
        character: 3,
        path: 'src/main.ts',
        language: 'typescript',
        snippets,
        budget,
      });
      const total = tokenEstimate(p.header + p.prefix + p.suffix);
      assert.ok(total <= budget, `budget ${budget}: ${total} tokens`);
    }
  });

  it('names the file and language in the header and carries snippets of other files as comments', () => {
    const p = buildPrompt({
      doc: linesOf('x = '),
      line: 0,
      character: 4,
      path: 'app/main.py',
      language: 'python',
      snippets: [
        { path: 'app/main.py', text: 'own file: never a snippet' },
        { path: 'app/db.py', text: 'def connect():\n    pass' },
      ],
      budget: 800,
    });
    assert.match(p.header, /^# From app\/db\.py:\n# def connect\(\):\n#     pass\n/);
    assert.ok(p.header.endsWith('# Path: app/main.py\n# Language: python\n'));
    assert.ok(!p.header.includes('own file'));
  });

  it('asks for several lines at an empty line or a block start, one line mid-line', () => {
    assert.equal(wantsSeveralLines('', ''), true);
    assert.equal(wantsSeveralLines('    ', ''), true);
    assert.equal(wantsSeveralLines('function f() {', ''), true);
    assert.equal(wantsSeveralLines('def f():', ''), true);
    assert.equal(wantsSeveralLines('const x = ', ''), false);
    assert.equal(wantsSeveralLines('foo(', 'bar)'), false);
    assert.equal(wantsSeveralLines('if (x) {', '}'), true);
  });
});
