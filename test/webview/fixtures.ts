/** Snapshots, messages and long markdown answers for the chat webview tests. */
import type { ChatMessageView, HostMessage, Snapshot } from '../../src/shared/protocol';

export function userMessage(id: string, text: string, extra: Partial<ChatMessageView> = {}): ChatMessageView {
  return { id, role: 'user', text, status: 'done', createdAt: 1_700_000_000_000, ...extra };
}

export function assistantMessage(id: string, text: string, extra: Partial<ChatMessageView> = {}): ChatMessageView {
  return {
    id,
    role: 'assistant',
    text,
    status: 'done',
    model: 'gpt-4.1',
    protocol: 'responses',
    createdAt: 1_700_000_001_000,
    ...extra,
  };
}

export function snapshot(extra: Partial<Snapshot> = {}): Snapshot {
  return {
    // The view names the conversation by its key: the id of a stored one (`extra` may set another).
    key: extra.conversationId ?? ('conversationId' in extra ? 'draft:new' : 'c1'),
    conversations: [
      { id: 'c1', title: 'Sorting in TypeScript', updatedAt: 1_700_000_000_000, messageCount: 2 },
      { id: 'c2', title: 'Rust lifetimes', updatedAt: 1_699_000_000_000, messageCount: 6 },
    ],
    conversationId: 'c1',
    messages: [],
    hasOlder: false,
    models: [
      { id: 'gpt-4.1', provider: 'openai', protocols: ['responses', 'chatCompletions'], searchable: false },
      { id: 'gpt-4.1-mini', provider: 'openai', protocols: ['chatCompletions'], searchable: false },
      { id: 'claude-sonnet-4', provider: 'anthropic', protocols: ['messages', 'chatCompletions'], searchable: false },
      { id: 'glm-4.6', provider: 'zhipu', protocols: ['chatCompletions'], searchable: true },
    ],
    model: 'gpt-4.1',
    enableSearch: false,
    attachments: [],
    busy: false,
    remoteImageHosts: [],
    ...extra,
  };
}

export function snapshotMessage(state: Snapshot): HostMessage {
  return { type: 'snapshot', state };
}

/** An answer that uses every block kind the renderer must split correctly. */
export const RICH_ANSWER = `# Sorting objects

Use \`Array.prototype.sort\` with a **comparator**; see [MDN](https://developer.mozilla.org/) or https://example.org/sort.

\`\`\`ts
interface User { name: string; age: number }

const byAge = (a: User, b: User): number => a.age - b.age;
users.sort(byAge);
\`\`\`

1. Copy the array first
2. Then sort

- tight item
- another item

> Sorting is stable since ES2019.
>
> It keeps equal items in order.

| Method | Stable | Cost |
| :----- | :----: | ---: |
| sort   | yes    | n log n |

\`\`\`python
def by_age(user):
    return user["age"]
\`\`\`

\`\`\`brainfuck
++>+++[<+>-]
\`\`\`

That is all &copy; 2025.
`;

const SECTION_TEMPLATES: ((i: number) => string)[] = [
  (i) =>
    `## Section ${i}: notes\n\nParagraph ${i} has *emphasis*, **strong text**, \`inline code\`, an entity &amp; a link to [docs ${i}](https://example.com/docs/${i}) and a bare one: https://example.org/p/${i}.\nIt continues on a second line with ~~strikethrough~~ and &nbsp;non-breaking space.\n\n`,
  (i) => `- item ${i}.1\n- item ${i}.2 with \`code\`\n  - nested ${i}.2.1\n  - nested ${i}.2.2\n- item ${i}.3\n\n`,
  (i) =>
    `1. first step ${i}\n\n2. second step ${i}, a loose list\n\n   with a continuation paragraph\n\n3. third step\n\n`,
  (i) =>
    `\`\`\`ts\n// example ${i}\nexport function f${i}(x: number): number {\n  const y = x * ${i};\n\n  return y + 1; // blank line above stays in the fence\n}\n\`\`\`\n\n`,
  (i) =>
    `\`\`\`python\ndef g${i}(items):\n    """Docstring ${i}."""\n\n    return [x * 2 for x in items if x > ${i}]\n\`\`\`\n\n`,
  (i) => `> Quote ${i}, first paragraph.\n>\n> Second paragraph of quote ${i}.\n\n`,
  (i) => `| Name | Value ${i} | Note |\n| :--- | ---: | :---: |\n| a | ${i} | left |\n| b | ${i * 2} | right |\n\n`,
  (i) => `~~~json\n{ "id": ${i}, "tags": ["a", "b"], "ok": true }\n~~~\n\n`,
  (i) =>
    `Setext heading ${i}\n-----------------\n\nText after it &lt;not a tag&gt; and <b>raw html</b> shown as text.\n\n`,
  (i) => `\`\`\`\nplain fence ${i}\n\nwith a blank line\n\`\`\`\n\n***\n\n`,
];

/** A deterministic, varied markdown answer of about `targetChars` characters. */
export function longAnswer(targetChars: number): string {
  let text = '# A long answer\n\n';
  for (let i = 0; text.length < targetChars; i++) {
    text += (SECTION_TEMPLATES[i % SECTION_TEMPLATES.length] as (i: number) => string)(i);
  }
  return text;
}

/** One code fence of about `targetChars` characters (the single-huge-block case). */
export function longCodeFence(targetChars: number): string {
  let body = '';
  for (let i = 0; body.length < targetChars; i++)
    body += `const value${i} = compute(${i}, "text ${i}"); // line ${i}\n`;
  return `Here is the file:\n\n\`\`\`ts\n${body}\`\`\`\n\nDone.\n`;
}
