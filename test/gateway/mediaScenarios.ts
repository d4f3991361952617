/**
 * Scenario markers for the media routes (images, video). As with the chat markers, they are typed
 * into the prompt, several combine (`[[slow:200]] [[expire:0]] a red fox`), they are removed from
 * the prompt before it is drawn or echoed, and unknown `[[...]]` text is left alone.
 */

export interface MediaScenario {
  marker: string;
  /** Which routes honour it. */
  routes: 'images' | 'video' | 'images, video';
  effect: string;
}

export const MEDIA_SCENARIOS: readonly MediaScenario[] = [
  {
    marker: '(none)',
    routes: 'images, video',
    effect: 'Real images / a real MP4 drawn from the prompt (and, for images, the index in `n`).',
  },
  {
    marker: '[[slow:MS]]',
    routes: 'images',
    effect: 'The answer waits MS ms (≤ 600000): image generation can take minutes.',
  },
  {
    marker: '[[moderation]]',
    routes: 'images, video',
    effect:
      'Images, OpenAI model: 400 `moderation_blocked` (type image_generation_user_error) as observed through a new-api gateway. ' +
      'Images, Ali model, and video submit: DashScope `DataInspectionFailed` relayed (images `ali_error`, video task error `ali_api_error`), 400. Nothing is charged.',
  },
  {
    marker: '[[fail]]',
    routes: 'video',
    effect: 'The task ends FAILURE with DashScope’s FAILED reason; the quota charged at submit is refunded.',
  },
  {
    marker: '[[stuck]]',
    routes: 'video',
    effect:
      'The task never leaves IN_PROGRESS (until the task timeout sweep, `videoTiming.timeoutMinutes`, fails and refunds it).',
  },
  {
    marker: '[[expire:MS]]',
    routes: 'images, video',
    effect:
      'The result link expires MS ms after it is made (default 24 h); then the CDN answers 403 with OSS’s XML `AccessDenied` / `Request has expired.`',
  },
  {
    marker: '[[html]]',
    routes: 'video',
    effect: 'The result link answers 200 `text/html` with an HTML error page instead of the video.',
  },
  {
    marker: '[[xml]]',
    routes: 'video',
    effect:
      'The result link answers 200 `application/xml` with an S3-style `<Error><Code>AccessDenied</Code>…` body instead of the video.',
  },
  {
    marker: '[[truncated]]',
    routes: 'video',
    effect: 'The result link serves `video/mp4` bytes of an MP4 without its moov box (ftyp + mdat only: not playable).',
  },
  {
    marker: '[[big:MB]]',
    routes: 'video',
    effect:
      'The MP4 is padded (H.264 filler NAL units) to MB megabytes (1–2048), streamed from the CDN with backpressure.',
  },
];

export interface MediaMarkers {
  /** As typed, in order. */
  markers: string[];
  slowMs: number;
  moderation: boolean;
  fail: boolean;
  stuck: boolean;
  /** undefined = the default validity (24 h). */
  expireMs?: number;
  html: boolean;
  xml: boolean;
  truncated: boolean;
  /** 0 = natural size. */
  bigMb: number;
  /** The prompt without the markers, trimmed, inner runs of spaces kept. */
  prompt: string;
}

const MARKER = /\[\[([a-z]+)(?::(\d+))?\]\]/gi;
const KNOWN = new Set(['slow', 'moderation', 'fail', 'stuck', 'expire', 'html', 'xml', 'truncated', 'big']);

export function parseMediaMarkers(text: string): MediaMarkers {
  const found: MediaMarkers = {
    markers: [],
    slowMs: 0,
    moderation: false,
    fail: false,
    stuck: false,
    html: false,
    xml: false,
    truncated: false,
    bigMb: 0,
    prompt: '',
  };
  const prompt = text.replace(MARKER, (whole, rawName: string, rawArg: string | undefined) => {
    const name = rawName.toLowerCase();
    if (!KNOWN.has(name)) return whole;
    const arg = rawArg === undefined ? undefined : Number(rawArg);
    found.markers.push(whole);
    switch (name) {
      case 'slow':
        found.slowMs = Math.min(arg ?? 1000, 600_000);
        break;
      case 'expire':
        found.expireMs = arg ?? 0;
        break;
      case 'big':
        found.bigMb = Math.max(1, Math.min(arg ?? 100, 2048));
        break;
      case 'moderation':
      case 'fail':
      case 'stuck':
      case 'html':
      case 'xml':
      case 'truncated':
        found[name] = true;
        break;
    }
    return '';
  });
  found.prompt = prompt.replace(/\s{2,}/g, ' ').trim();
  return found;
}
