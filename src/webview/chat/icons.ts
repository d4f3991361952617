/**
 * Small line icons for the chat's icon buttons, drawn in the 16×16 grid and stroke weight of VS
 * Code's codicons so they sit well next to the workbench's own. Built as SVG elements in code (the
 * CSP allows no inline markup or styles); they take the text colour (`currentColor`) of the theme.
 * Icons are decoration: every button that shows one carries its own accessible name and tooltip.
 */

const SVG = 'http://www.w3.org/2000/svg';

/** Each icon: path data, stroked (no fill) unless the entry says `fill`. */
const PATHS = {
  send: ['M2 13.5 14 8 2 2.5l1.8 5.5L2 13.5Z', 'M3.8 8H9'],
  stop: [{ fill: 'M4 4h8v8H4z' }],
  file: ['M4 1.5h5.5L12.5 4.5v10h-8.5z', 'M9.5 1.5v3h3'],
  selection: ['M2.5 4h7', 'M2.5 7h11', 'M2.5 10h9', 'M2.5 13h5', 'M13 2v4'],
  image: [
    'M2 3h12v10H2z',
    'M2 11l3.5-3.5 3 3 2-2L14 12',
    { fill: 'M11.8 5.8a1.1 1.1 0 1 1-2.2 0 1.1 1.1 0 0 1 2.2 0z' },
  ],
  globe: [
    'M8 1.8a6.2 6.2 0 1 0 0 12.4A6.2 6.2 0 0 0 8 1.8z',
    'M1.8 8h12.4',
    'M8 1.8c-3 3.3-3 9.1 0 12.4',
    'M8 1.8c3 3.3 3 9.1 0 12.4',
  ],
  lightbulb: ['M5.5 12h5', 'M6.3 14.3h3.4', 'M5.5 12c0-1.8-2.5-3-2.5-5.6a5 5 0 0 1 10 0C13 9 10.5 10.2 10.5 12'],
  copy: ['M5.5 5.5h8v8.5h-8z', 'M10.5 5.5V2h-8.5v8.5h3.5'],
  insert: ['M8 1.5v8', 'M5 6.5l3 3 3-3', 'M2 13.5h12'],
  edit: ['M10.8 2.2l3 3-8 8H2.8v-3z', 'M9.2 3.8l3 3'],
  regenerate: ['M13.5 8a5.5 5.5 0 1 1-1.6-3.9', 'M12.2 1.2v3.3H8.9'],
  continue: ['M3 3l5 5-5 5', 'M8.5 3l5 5-5 5'],
  close: ['M4 4l8 8', 'M12 4l-8 8'],
} satisfies Record<string, Array<string | { fill: string }>>;

export type IconName = keyof typeof PATHS;

export function icon(name: IconName): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', `icon icon-${name}`);
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  for (const part of PATHS[name]) {
    const path = document.createElementNS(SVG, 'path');
    if (typeof part === 'string') {
      path.setAttribute('d', part);
      path.setAttribute('fill', 'none');
      path.setAttribute('stroke', 'currentColor');
      path.setAttribute('stroke-width', '1.2');
      path.setAttribute('stroke-linecap', 'round');
      path.setAttribute('stroke-linejoin', 'round');
    } else {
      path.setAttribute('d', part.fill);
      path.setAttribute('fill', 'currentColor');
    }
    svg.append(path);
  }
  return svg;
}

export interface IconButtonOptions {
  /** The accessible name, also the tooltip unless `title` is given. */
  label: string;
  title?: string;
  className?: string;
  act?: string;
  dataset?: Record<string, string>;
  /** A toggle: `aria-pressed` says whether it is on. */
  pressed?: boolean;
}

/** A real <button type="button"> that shows only an icon; its name and tooltip say what it does. */
export function iconButton(name: IconName, options: IconButtonOptions): HTMLButtonElement {
  const el = document.createElement('button');
  el.type = 'button';
  el.className = `icon-btn ${options.className ?? ''}`.trim();
  el.setAttribute('aria-label', options.label);
  el.title = options.title ?? options.label;
  if (options.act) el.dataset.act = options.act;
  if (options.dataset) Object.assign(el.dataset, options.dataset);
  if (options.pressed !== undefined) el.setAttribute('aria-pressed', String(options.pressed));
  el.append(icon(name));
  return el;
}
