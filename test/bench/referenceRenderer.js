// The reference renderer of row 5 (bundled for the browser by rendering.ts): what popular chat
// extensions do with a streamed answer — on every update from the host, markdown-it over the whole
// text so far, DOMPurify over the result, and the answer's innerHTML replaced. It listens for the
// same `append` messages the chat app gets. Plain JavaScript: the repository's Node tsconfig has no
// DOM types (as test/webview/pageProbe.js).
import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
const root = document.getElementById('app') ?? document.body;
const answer = document.createElement('div');
answer.className = 'msg-body md';
root.append(answer);
let text = '';

window.addEventListener('message', (event) => {
  const m = event.data;
  if (!m || m.type !== 'append' || typeof m.text !== 'string') return;
  text += m.text;
  answer.innerHTML = DOMPurify.sanitize(md.render(text));
});
