import * as l10n from '@vscode/l10n';
import { formatDate, formatNumber } from '../../shared/format';

/** One web search result, the same for both providers. */
export interface SearchResult {
  title: string;
  url: string;
  site?: string;
  date?: string;
  snippet: string;
}

/** A Markdown citation for inserting at the cursor. */
export function citation(r: SearchResult): string {
  const meta = [r.site, r.date].filter(Boolean).join(', ');
  return `[${r.title.replace(/[[\]]/g, '')}](${r.url})${meta ? ` (${meta})` : ''}`;
}

/** All results as one Markdown document. */
export function resultsMarkdown(query: string, provider: string, results: SearchResult[]): string {
  const lines = [
    `# ${l10n.t('Search: {0}', query)}`,
    '',
    `_${l10n.t('{0} results from {1}, {2}', formatNumber(results.length), provider, formatDate(Date.now()))}_`,
    '',
  ];
  results.forEach((r, i) => {
    lines.push(`## ${i + 1}. [${r.title.replace(/[[\]]/g, '')}](${r.url})`, '');
    const meta = [r.site, r.date].filter(Boolean).join(' · ');
    if (meta) lines.push(`_${meta}_`, '');
    if (r.snippet) lines.push(r.snippet, '');
  });
  return lines.join('\n');
}
