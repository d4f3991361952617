import * as l10n from '@vscode/l10n';
import { GatewayError } from '../errors';
import type { HttpClient } from '../http';
import type { LargeResponse } from '../httpTypes';
import { downloadableLink, ERROR_STATUSES, redactUrl } from './images';
import { streamToFileUnique } from '../outputFiles';
import { checkMp4File, describeBytes } from './mediaFiles';
import { formatNumber } from '../../shared/format';
import { words } from '../../shared/words';

// A finished task's video: where to fetch it (and with the key or not), and its way to a file.

/**
 * The address to download a task's video from. new-api writes the link to its own content route
 * with the server address its operator configured (often left at a local default), so a link to
 * `/v1/videos/<this task>/content` on another origin is fetched from the configured gateway
 * instead: the same route for the same task, and the key never leaves for that other origin.
 */
export function videoDownloadUrl(http: HttpClient, taskId: string | undefined, link: string): string {
  if (!taskId) return link;
  try {
    const u = new URL(link);
    const own = `/v1/videos/${encodeURIComponent(taskId)}/content`;
    if (u.origin !== http.endpoints.origin && (u.pathname === own || u.pathname.endsWith(own)))
      return http.endpoints.videoContent(taskId);
  } catch {
    // Not an address: downloadVideo explains that.
  }
  return link;
}

export interface DownloadOptions {
  /** Folder the file goes in (created if missing). */
  dir: string;
  /** File name without extension. */
  baseName: string;
  signal?: AbortSignal;
  onBytes?: (received: number, total?: number) => void;
  /** What the download belongs to (the task's local id): names its temporary file, so leftovers can be found. */
  owner?: string;
  /** The folder the file must stay in (see confinedWrite.ts); `dir` itself when absent. */
  within?: string;
}

/**
 * Downloads a result link at once (it expires), streaming to disk, and keeps the file only when it
 * is a playable MP4. Links on storage hosts get no key. The gateway's own content route
 * (`<base>/v1/videos/<id>/content`, used when a provider gives no link) needs the key and gets it.
 */
export async function downloadVideo(
  http: HttpClient,
  key: string | undefined,
  url: string,
  opts: DownloadOptions,
): Promise<string> {
  const parsed = downloadableLink(url, {
    invalid: (shown) => l10n.t('The video link is not a valid address: "{0}".', shown),
    scheme: (protocol) => l10n.t('The video link uses "{0}", which is not downloaded.', protocol),
  });
  const gatewayRoute =
    parsed.origin === http.endpoints.origin &&
    (parsed.pathname.startsWith('/v1/') || url.startsWith(`${http.endpoints.base}/v1/`));
  const response = await http.getLarge({
    url,
    anonymous: !gatewayRoute,
    key,
    signal: opts.signal,
    acceptStatus: ERROR_STATUSES,
    headers: { accept: 'video/mp4,video/*;q=0.9,*/*;q=0.5' },
  });
  if (response.status >= 400) {
    const head = await readHead(response.chunks, 4096);
    response.abort();
    throw refusal(parsed.host, response.status, head);
  }
  // The body is closed however this ends: a folder that cannot be written fails before it is read.
  try {
    return await saveVideo(response, url, opts);
  } finally {
    response.abort();
  }
}

/** The error for a link that answered `status`; 403, 404 and 410 (or "expire" in the body) mean it has expired. */
function refusal(host: string, status: number, head: Buffer): GatewayError {
  const expired = status === 403 || status === 404 || status === 410 || /expire/i.test(head.toString('utf8'));
  return new GatewayError(
    status >= 500 ? 'server' : 'badRequest',
    expired
      ? words(
          'The video could not be downloaded: {0} answered HTTP {1} with {2}. The result link has most likely expired (it is valid only for a limited time). The task itself finished; it was not resubmitted.',
          host,
          status,
          describeBytes(head),
        )
      : words(
          'The video could not be downloaded: {0} answered HTTP {1} with {2}. The task itself finished; it was not resubmitted.',
          host,
          status,
          describeBytes(head),
        ),
    { status },
  );
}

/** Streams the answer to a new file and keeps it only when it is a whole, playable MP4. */
async function saveVideo(response: LargeResponse, url: string, opts: DownloadOptions): Promise<string> {
  const total = Number(response.headers['content-length']) || undefined;
  return streamToFileUnique(opts.dir, opts.baseName, 'mp4', response.chunks, {
    verify: async (written) => {
      const check = await checkMp4File(written);
      if (!check.ok)
        throw new GatewayError(
          'protocol',
          words(
            'The downloaded video from {0} is not playable: {1}. It was not kept.',
            redactUrl(url),
            check.reason ?? '',
          ),
        );
      if (total !== undefined && check.size !== total) {
        throw new GatewayError(
          'protocol',
          words(
            'The downloaded video is incomplete: {0} of {1} bytes arrived. It was not kept.',
            formatNumber(check.size),
            formatNumber(total),
          ),
        );
      }
    },
    onBytes: (received) => opts.onBytes?.(received, total),
    ...(opts.owner ? { owner: opts.owner } : {}),
    ...(opts.within ? { within: opts.within } : {}),
  });
}

async function readHead(chunks: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of chunks) {
      parts.push(Buffer.from(chunk));
      size += chunk.length;
      if (size >= limit) break;
    }
  } catch {
    // What arrived before the error is enough to describe the answer.
  }
  return Buffer.concat(parts).subarray(0, limit);
}
