/**
 * Picture sizes in one notation for people, and in each endpoint's own form on the wire. The Media
 * Studio shows and accepts `1024 × 1024` for images and video alike; what is sent is converted at
 * the last moment: the Images API (and the Responses image tool) take `<width>x<height>`, the video
 * task endpoint `<width>*<height>` (asterisk separator). Shared by core, host and the webview (no
 * imports), so the three never disagree on what a size is.
 */

export interface PixelSize {
  width: number;
  height: number;
}

/** Two whole numbers joined by `x`, `X`, `×` or `*`, spaces allowed around the separator. */
const ANY_SIZE = /^\s*(\d{1,5})\s*[xX×*]\s*(\d{1,5})\s*$/;

/** Reads a size written in any of the notations (`1024 × 1024`, `1024x1024`, `832*480`); undefined when it is not one. */
export function parseSize(text: string): PixelSize | undefined {
  const m = ANY_SIZE.exec(text);
  if (!m) return undefined;
  return { width: Number(m[1]), height: Number(m[2]) };
}

/** The notation people see: `1024 × 1024` (a multiplication sign between thin spaces would not survive every font; plain spaces do). */
export function displaySize(size: PixelSize): string {
  return `${size.width} × ${size.height}`;
}

/** A size as shown, from any notation; text that is not a size is returned as it is. */
export function displaySizeText(text: string): string {
  const size = parseSize(text);
  return size ? displaySize(size) : text;
}

/** The Images API's form (also the Responses image tool's): `1024x1024`. */
export function imageWireSize(size: PixelSize): string {
  return `${size.width}x${size.height}`;
}

/** The video task endpoint's form: `832*480`. */
export function videoWireSize(size: PixelSize): string {
  return `${size.width}*${size.height}`;
}

/** The resolution tier a video size is billed under (the gateway bills video by resolution tier: 480P, 720P, 1080P), e.g. 832 × 480 → 480P. */
export function resolutionTier(size: PixelSize): string | undefined {
  const short = Math.min(size.width, size.height);
  const long = Math.max(size.width, size.height);
  if (short <= 624 && long <= 832) return '480P';
  if (short <= 960 && long <= 1280) return '720P';
  if (short <= 1440 && long <= 1920) return '1080P';
  return undefined;
}
