/**
 * Stand-in for the `entities` package inside the webview bundle (esbuild `alias`), saving ~75 KB:
 * markdown-it only needs `decodeHTML` / `decodeHTMLStrict` for named references such as `&nbsp;`
 * (it decodes numeric ones itself), and the browser already knows every HTML entity. A <textarea>
 * parses its content as RCDATA, so assigning `innerHTML` decodes references and never creates
 * elements; markdown-it only ever passes `&name;` strings matched by its own regular expressions.
 */
const cache = new Map<string, string>();
let decoder: HTMLTextAreaElement | undefined;

function decodeWithBrowser(text: string): string {
  let decoded = cache.get(text);
  if (decoded === undefined) {
    decoder ??= document.createElement('textarea');
    decoder.innerHTML = text;
    decoded = decoder.value;
    if (cache.size > 500) cache.clear();
    cache.set(text, decoded);
  }
  return decoded;
}

/** Like `entities.decodeHTML`: legacy references without `;` are decoded too (`&notit;` → `¬it;`). */
export function decodeHTML(text: string): string {
  return decodeWithBrowser(text);
}

/**
 * Like `entities.decodeHTMLStrict` for one `&name;` reference: only a complete reference is decoded.
 * A named reference decodes to at most two UTF-16 units; anything longer is a legacy prefix match
 * (`&notit;` → `¬it;`), which strict mode leaves alone.
 */
export function decodeHTMLStrict(text: string): string {
  const decoded = decodeWithBrowser(text);
  return decoded.length <= 2 ? decoded : text;
}
