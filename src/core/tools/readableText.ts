/**
 * Extracted text as a person reads it. Document parsers mark page ends with a form feed (U+000C),
 * which an editor shows as a red control-character box: it becomes a Markdown rule between pages.
 * Other control characters (except tab and line breaks) carry nothing readable and are dropped.
 */
export function readableText(text: string): string {
  return text
    .replace(/[ \t]*\f[ \t]*/g, '\n\n---\n\n')
    .replace(/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/g, '')
    .replace(/\n{3,}---\n{3,}/g, '\n\n---\n\n');
}
