/**
 * An answer's images from hosts the user allowed. The page loads no remote address (its CSP lists
 * none): markdown.ts puts a placeholder where such an image is, the host fetches the image
 * (checking where the name leads, see src/core/answerImageFetch.ts) and hands it over as a
 * `data:` URL, and the placeholder becomes the image, or says why it is not shown.
 */
import * as l10n from '@vscode/l10n';
import type { HostMessage } from '../../shared/protocol';
import { h } from '../shared/dom';

type Outcome = { dataUrl: string } | { refused: string };
type Reply = Extract<HostMessage, { type: 'remoteImage' }>;

/** Images kept for the page's life (a re-rendered answer shows them at once); the oldest go first past this. */
const KEPT_CHARS = 48 * 1024 * 1024;

/** What stands where a remote image will be: text saying it loads, marked with the image's address. */
export function remoteImagePlaceholder(url: URL, alt: string): HTMLElement {
  return h('span', {
    className: 'remote-image remote-image-loading',
    text: alt ? l10n.t('Loading image “{0}” from {1}…', alt, url.host) : l10n.t('Loading image from {0}…', url.host),
    dataset: { remoteSrc: url.href, alt },
  });
}

export class RemoteImages {
  private readonly outcomes = new Map<string, Outcome>();
  private readonly asked = new Set<string>();
  private keptChars = 0;

  constructor(
    private readonly root: HTMLElement,
    private readonly ask: (url: string) => void,
  ) {
    // Answers render in many places (streaming, a finished answer, older messages coming back):
    // every placeholder that enters the page is seen here, before the page is painted.
    new MutationObserver((records) => {
      for (const record of records)
        for (const node of Array.from(record.addedNodes)) if (node instanceof HTMLElement) this.fillIn(node);
    }).observe(root, { childList: true, subtree: true });
  }

  receive(reply: Reply): void {
    this.asked.delete(reply.url);
    if (reply.dataUrl !== undefined) this.keep(reply.url, { dataUrl: reply.dataUrl });
    else if (reply.refused !== undefined) this.keep(reply.url, { refused: reply.refused });
    // Cancelled (the conversation was left): asked again below if the page still shows it.
    this.fillIn(this.root, reply.url);
  }

  private fillIn(scope: HTMLElement, only?: string): void {
    const found = scope.matches('[data-remote-src]') ? [scope] : [];
    found.push(...Array.from(scope.querySelectorAll<HTMLElement>('[data-remote-src]')));
    for (const el of found) {
      const url = el.dataset.remoteSrc ?? '';
      if (only !== undefined && url !== only) continue;
      const outcome = this.outcomes.get(url);
      if (outcome) show(el, url, outcome);
      else if (!this.asked.has(url)) {
        this.asked.add(url);
        this.ask(url);
      }
    }
  }

  private keep(url: string, outcome: Outcome): void {
    const before = this.outcomes.get(url);
    if (before) this.keptChars -= chars(before);
    this.outcomes.delete(url);
    this.outcomes.set(url, outcome);
    this.keptChars += chars(outcome);
    for (const [key, value] of this.outcomes) {
      if (this.keptChars <= KEPT_CHARS || key === url) break;
      this.outcomes.delete(key);
      this.keptChars -= chars(value);
    }
  }
}

function chars(outcome: Outcome): number {
  return 'dataUrl' in outcome ? outcome.dataUrl.length : 0;
}

function show(el: HTMLElement, url: string, outcome: Outcome): void {
  const alt = el.dataset.alt ?? '';
  if ('dataUrl' in outcome) {
    el.replaceWith(h('img', { attrs: { src: outcome.dataUrl, alt, title: url } }));
    return;
  }
  const host = new URL(url).host;
  el.replaceWith(
    h('span', {
      className: 'remote-image remote-image-refused',
      text: alt
        ? l10n.t('Image “{0}” from {1} not shown: {2}.', alt, host, outcome.refused)
        : l10n.t('Image from {0} not shown: {1}.', host, outcome.refused),
      attrs: { title: url },
    }),
  );
}
