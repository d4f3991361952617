import * as vscode from 'vscode';
import * as z from 'zod/mini';
import type { PollPolicy } from '../../core/media/videoTaskStates';
import type { ImageRoute } from '../../shared/mediaProtocol';

export interface MediaSettings {
  imageRoute: ImageRoute;
  imageSize: string;
  imageCount: number;
  /** Stream Responses image calls, showing partial previews as they arrive. */
  stream: boolean;
  /** How many partial previews to ask for while streaming (0–3). */
  partialImages: number;
  poll: PollPolicy;
}

const FIELDS = {
  'media.imageRoute': z.enum(['images', 'responses']),
  'media.imageSize': z.string().check(z.regex(/^\d{1,5}x\d{1,5}$/)),
  'media.imageCount': z.number().check(z.int(), z.gte(1), z.lte(10)),
  'media.stream': z.boolean(),
  'media.partialImages': z.number().check(z.int(), z.gte(0), z.lte(3)),
  'video.pollSeconds': z.number().check(z.gte(1), z.lte(3600)),
  'video.maxPollMinutes': z.number().check(z.gte(0), z.lte(24 * 60 * 7)),
} as const;

/**
 * Media settings, read when they are used, so a change applies to the next request or poll.
 * A value that does not fit falls back to its default alone (and is logged once per read).
 */
export function mediaSettings(warn?: (line: string) => void): MediaSettings {
  const c = vscode.workspace.getConfiguration('modelGateway');
  const value = <K extends keyof typeof FIELDS>(
    key: K,
    fallback: z.infer<(typeof FIELDS)[K]>,
  ): z.infer<(typeof FIELDS)[K]> => {
    const raw = c.get(key);
    if (raw === undefined || raw === null) return fallback;
    const parsed = z.safeParse(FIELDS[key], raw);
    if (parsed.success) return parsed.data as z.infer<(typeof FIELDS)[K]>;
    warn?.(`"modelGateway.${key}" has an invalid value (${JSON.stringify(raw)}); using ${JSON.stringify(fallback)}.`);
    return fallback;
  };
  return {
    imageRoute: value('media.imageRoute', 'images'),
    imageSize: value('media.imageSize', '1024x1024'),
    imageCount: value('media.imageCount', 1),
    stream: value('media.stream', true),
    partialImages: value('media.partialImages', 2),
    poll: {
      baseMs: value('video.pollSeconds', 15) * 1000,
      maxPollMs: value('video.maxPollMinutes', 60) * 60_000,
      maxErrors: 8,
    },
  };
}
