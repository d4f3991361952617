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
  const lines = [`# Search: ${query}`, '', `_${results.length} results from ${provider}, ${new Date().toISOString().slice(0, 10)}_`, ''];
  results.forEach((r, i) => {
    lines.push(`## ${i + 1}. [${r.title.replace(/[[\]]/g, '')}](${r.url})`, '');
    const meta = [r.site, r.date].filter(Boolean).join(' · ');
    if (meta) lines.push(`_${meta}_`, '');
    if (r.snippet) lines.push(r.snippet, '');
  });
  return lines.join('\n');
}
