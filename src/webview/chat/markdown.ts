/**
 * Markdown → safe DOM: markdown-it (no raw HTML, linkify) → DOMPurify → decoration (code block
 * toolbars, remote-image placeholders). Everything clickable is a real element with `data-act`;
 * clicks are handled by one delegated listener on the message list.
 */
import MarkdownIt from 'markdown-it';
import { fenceLanguage, highlightCode, highlightLater, highlightsLater } from './highlight';
import { sanitizeToFragment } from './sanitizer';
import * as l10n from '@vscode/l10n';
import { aroundSlot, button, h, SLOT } from '../shared/dom';
import { iconButton } from './icons';
import { remoteImagePlaceholder } from './remoteImages';

export interface RenderOptions {
  /** Hosts the user allowed https images from (the host decides, and fetches them for the page). */
  remoteImageHosts: readonly string[];
}

const md = new MarkdownIt({
  html: false,
  linkify: true,
  typographer: false,
  // '' tells markdown-it to escape the code itself (unknown language: plain text).
  highlight: (code, lang) => highlightCode(code, fenceLanguage(lang)) ?? '',
});

// Only explicit addresses become links: fuzzy linking would turn file names such as `notes.md`
// or `README.md` into web links (.md is a country's top-level domain).
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

// Table alignment arrives as style="text-align:…"; the CSP allows no inline styles, so use classes.
md.core.ruler.push('align_classes', (state) => {
  for (const token of state.tokens) {
    if (token.type !== 'th_open' && token.type !== 'td_open') continue;
    const style = token.attrGet('style');
    if (style === null) continue;
    token.attrs = token.attrs?.filter(([name]) => name !== 'style') ?? null;
    const align = /text-align:\s*(left|right|center)/.exec(style)?.[1];
    if (align) token.attrJoin('class', `align-${align}`);
  }
});

/** Renders one markdown block to decorated, sanitised nodes, ready to insert. */
export function renderMarkdown(source: string, options: RenderOptions): DocumentFragment {
  const fragment = sanitizeToFragment(md.render(source));
  decorate(fragment, options);
  return fragment;
}

/**
 * Renders a small answer of every common kind once and throws it away, while the page waits for the
 * host's first snapshot: markdown-it, DOMPurify and the decoration compile their code and regular
 * expressions on first use (tens of milliseconds on a slow machine), which would otherwise lengthen
 * the task that shows the conversation's first message.
 */
export function warmMarkdown(): void {
  renderMarkdownBlocks(
    [
      '# Title\n\nSome *words* with `code` and a link: https://example.com',
      '- one\n- two\n\n1. first\n\n> quote',
      '```\nplain code\n```',
      '| a | b |\n|:-|-:|\n| 1 | 2 |',
    ],
    { remoteImageHosts: [] },
  );
}

/**
 * What separates blocks rendered together: markdown-it (no raw HTML) never writes a class on a
 * rule, so only this marker has it.
 */
const BLOCK_SEPARATOR = '<hr class="md-block-separator">';

/**
 * Renders several markdown blocks at once (a finished answer shown for the first time): the same
 * nodes as renderMarkdown for each, in one pass of the sanitiser (each pass parses a whole document
 * first, which for short blocks costs more than the sanitising itself).
 */
export function renderMarkdownBlocks(sources: readonly string[], options: RenderOptions): DocumentFragment[] {
  if (sources.length < 2) return sources.map((source) => renderMarkdown(source, options));
  const fragment = sanitizeToFragment(sources.map((source) => md.render(source)).join(BLOCK_SEPARATOR));
  decorate(fragment, options);
  const parts: DocumentFragment[] = [document.createDocumentFragment()];
  for (const node of Array.from(fragment.childNodes)) {
    if (node instanceof HTMLHRElement && node.classList.contains('md-block-separator'))
      parts.push(document.createDocumentFragment());
    else (parts[parts.length - 1] as DocumentFragment).append(node);
  }
  // Never expected (the marker is only between blocks), but then each block is rendered on its own.
  return parts.length === sources.length ? parts : sources.map((source) => renderMarkdown(source, options));
}

/** The frame of a code block: language label, Copy and Insert icons (shown on hover or focus), then the <pre>. */
export function codeBlock(language: string, pre: HTMLPreElement): HTMLDivElement {
  const label = language || l10n.t('text');
  return h(
    'div',
    { className: 'code-block' },
    h(
      'div',
      { className: 'code-toolbar' },
      h('span', { className: 'code-lang', text: label }),
      h(
        'span',
        { className: 'code-actions' },
        iconButton('copy', { act: 'copy-code', label: l10n.t('Copy {0} code', label) }),
        iconButton('insert', { act: 'insert-code', label: l10n.t('Insert {0} code at the cursor', label) }),
      ),
    ),
    pre,
  );
}

function decorate(fragment: DocumentFragment, options: RenderOptions): void {
  for (const pre of Array.from(fragment.querySelectorAll('pre'))) {
    const code = pre.querySelector('code');
    const language = /(?:^|\s)language-(\S+)/.exec(code?.className ?? '')?.[1] ?? '';
    code?.classList.add('hljs');
    // Shown plain now (a long block, or a language not used yet) and highlighted in tasks of its own.
    if (code && code.childElementCount === 0) {
      const text = code.textContent ?? '';
      if (highlightsLater(text, fenceLanguage(language)))
        highlightLater(code, text, fenceLanguage(language), sanitizeToFragment);
    }
    const placeholder = document.createComment('');
    pre.replaceWith(placeholder);
    placeholder.replaceWith(codeBlock(language, pre));
  }
  for (const img of Array.from(fragment.querySelectorAll('img'))) vetImage(img, options);
}

/** Keeps data: images and allowed https images; everything else becomes text that loads nothing. */
function vetImage(img: HTMLImageElement, options: RenderOptions): void {
  const src = img.getAttribute('src') ?? '';
  const alt = img.getAttribute('alt') ?? '';
  if (/^data:/i.test(src)) return;
  let url: URL | undefined;
  try {
    url = src ? new URL(src) : undefined;
  } catch {
    url = undefined;
  }
  if (!url) {
    img.replaceWith(h('span', { className: 'image-alt', text: alt ? l10n.t('[image: {0}]', alt) : l10n.t('[image]') }));
    return;
  }
  if (url.protocol === 'https:' && options.remoteImageHosts.includes(url.host.toLowerCase())) {
    // The page loads no remote address (its CSP lists none): the host fetches the image and hands
    // it over (remoteImages.ts fills this placeholder in).
    img.replaceWith(remoteImagePlaceholder(url, alt));
    return;
  }
  const host = h('a', { text: url.host, attrs: { href: url.href, title: url.href } });
  const placeholder = h(
    'span',
    { className: 'remote-image' },
    ...aroundSlot(alt ? l10n.t('image “{0}” from {1}', alt, SLOT) : l10n.t('image from {0}', SLOT), host),
  );
  if (url.protocol === 'https:') {
    placeholder.append(
      ' — ',
      button(l10n.t('Load images from {0}', url.host), {
        className: 'btn-link',
        act: 'allow-images',
        ariaLabel: l10n.t('Load images from {0}', url.host),
        dataset: { host: url.host.toLowerCase() },
      }),
    );
  } else {
    placeholder.append(l10n.t(' (not loaded: not a secure address)'));
  }
  img.replaceWith(placeholder);
}
