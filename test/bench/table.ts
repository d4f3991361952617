/** The printed table and its Markdown twin (for the README). */
import type { Row } from './lib';

const HEADERS = ['#', 'What', 'Ours', 'Reference', 'Ratio', 'Goal', 'Result'];

function cells(r: Row): string[] {
  return [r.id, r.what, r.ours, r.reference, r.ratio, r.goal, r.pass === undefined ? 'info' : r.pass ? 'pass' : 'MISS'];
}

export function formatTable(rows: Row[]): string {
  const data = rows.map(cells);
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...data.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const out = [line(HEADERS), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const [i, r] of rows.entries()) {
    out.push(line(data[i] as string[]));
    if (r.note) out.push(`${' '.repeat((widths[0] ?? 1) + 2)}↳ ${r.note}`);
  }
  return out.join('\n');
}

export function markdownTable(rows: Row[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${HEADERS.join(' | ')} |`,
    `|${HEADERS.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${cells(r).map(esc).join(' | ')} |`),
  ].join('\n');
}
