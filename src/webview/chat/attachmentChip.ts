import * as l10n from '@vscode/l10n';
import type { ImageRef } from '../../shared/protocol';
import { formatNumber } from '../../shared/format';
import { h } from '../shared/dom';
import { formatChars, imageDetail } from './labels';

/**
 * An attachment as a chip, in the composer (waiting to be sent) and on a sent message alike: its
 * name, cut with an ellipsis when the view is narrow (the tooltip has it whole), and its size.
 * `extra` goes at the end (the composer's remove button).
 */
export function textChip(a: { label: string; chars: number; truncated: boolean }, ...extra: Node[]): HTMLElement {
  return h(
    'span',
    {
      className: 'chip',
      attrs: {
        title: a.truncated
          ? l10n.t('{0}: {1} characters (cut)', a.label, formatNumber(a.chars))
          : l10n.t('{0}: {1} characters', a.label, formatNumber(a.chars)),
      },
    },
    h('span', { className: 'chip-label', text: a.label }),
    h('span', {
      className: 'chip-detail',
      text: a.truncated ? l10n.t('{0}, cut', formatChars(a.chars)) : formatChars(a.chars),
    }),
    ...extra,
  );
}

/** An image waiting to be sent: its thumbnail, name and size. */
export function imageChip(label: string, image: ImageRef, ...extra: Node[]): HTMLElement {
  const detail = imageDetail(image);
  const thumb = image.src ? h('img', { className: 'thumb thumb-small', attrs: { src: image.src, alt: '' } }) : null;
  return h(
    'span',
    { className: 'chip chip-image', attrs: { title: `${label}: ${detail}` } },
    thumb,
    h('span', { className: 'chip-label', text: label }),
    h('span', { className: 'chip-detail', text: detail }),
    ...extra,
  );
}
