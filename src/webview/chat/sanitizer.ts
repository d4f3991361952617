/**
 * DOMPurify, configured for rendered markdown: only the tags markdown-it produces, no `on*` or
 * `style` attributes (the CSP forbids inline styles anyway), links only to http(s)/mailto, images
 * only from http(s) or a data: image. markdown-it already runs with `html: false`, so this is the
 * second line of defence, not the only one.
 */
import DOMPurify from 'dompurify';

const ALLOWED_TAGS = [
  'a',
  'blockquote',
  'br',
  'code',
  'del',
  'em',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'img',
  'li',
  'ol',
  'p',
  'pre',
  's',
  'span',
  'strong',
  'sub',
  'sup',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'tr',
  'ul',
];
const ALLOWED_ATTR = ['href', 'title', 'src', 'alt', 'class', 'start'];

export const SAFE_LINK = /^(?:https?:|mailto:)/i;
const SAFE_IMAGE = /^(?:https?:|data:image\/(?:png|gif|jpeg|webp);)/i;

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.nodeName === 'A') {
    const href = node.getAttribute('href');
    if (href !== null && !SAFE_LINK.test(href.trim())) node.removeAttribute('href');
  } else if (node.nodeName === 'IMG') {
    const src = node.getAttribute('src');
    // An image without a usable source is replaced by its alt text when the block is decorated.
    if (src !== null && !SAFE_IMAGE.test(src.trim())) node.removeAttribute('src');
  }
});

// Set once: passing the configuration to every call would have DOMPurify parse it again each time
// (a rendered answer is sanitised in many calls).
DOMPurify.setConfig({
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
});

/**
 * Sanitised nodes of `html`, not yet in the page: nothing in it loads or runs until it is
 * inserted, so images can be vetted first.
 */
export function sanitizeToFragment(html: string): DocumentFragment {
  // With RETURN_DOM_FRAGMENT (set above) the result is a fragment; DOMPurify's types cannot tell.
  return DOMPurify.sanitize(html) as unknown as DocumentFragment;
}
