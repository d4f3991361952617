import { sniffImage } from '../../core/imageBytes';
import type { ChatProtocol } from '../../core/models/types';

/**
 * Token estimates for VS Code's chat: text as core/chat/tokenEstimate.ts counts it, images as each
 * protocol's upstream bills them (`imageTokens`).
 */

/**
 * An image's tokens as the protocol's upstream counts them, from the size in its header.
 *
 * Chat Completions and Responses (sent with `detail: auto`, which is billed as high detail for
 * anything larger than a thumbnail): OpenAI's vision guide, "Calculating costs": the image is
 * scaled to fit in 2048×2048, then so that its shorter side is at most 768 px; it costs 85 tokens
 * plus 170 per 512 px tile.
 *
 * Messages: Anthropic's vision guide, "Calculate image costs": width × height / 750, after an
 * image whose long edge exceeds 1568 px (or that has more than about 1.15 megapixels) is scaled
 * down to fit.
 *
 * An image whose size its header does not give counts as the largest such image would.
 */
export function imageTokens(protocol: ChatProtocol, bytes: Uint8Array): number {
  const info = sniffImage(bytes);
  const width = info?.width;
  const height = info?.height;
  if (protocol === 'messages')
    return width && height ? anthropicImageTokens(width, height) : ANTHROPIC_MAX_IMAGE_TOKENS;
  return width && height ? openAiImageTokens(width, height) : OPENAI_MAX_IMAGE_TOKENS;
}

export function openAiImageTokens(width: number, height: number): number {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shorter = Math.min(1, 768 / Math.min(w, h));
  w *= shorter;
  h *= shorter;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** Anthropic's limits: the long edge at most 1568 px, the area at most 1568² / 2.14 ≈ 1.15 megapixels. */
const ANTHROPIC_MAX_EDGE = 1568;
const ANTHROPIC_MAX_PIXELS = 1_150_000;

export function anthropicImageTokens(width: number, height: number): number {
  const scale = Math.min(
    1,
    ANTHROPIC_MAX_EDGE / Math.max(width, height),
    Math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)),
  );
  return Math.ceil((width * scale * (height * scale)) / 750);
}

/** The most an image can cost: a 768×2048 image (8 tiles) on OpenAI, the largest area on Anthropic. */
const OPENAI_MAX_IMAGE_TOKENS = openAiImageTokens(768, 2048);
const ANTHROPIC_MAX_IMAGE_TOKENS = Math.ceil(ANTHROPIC_MAX_PIXELS / 750);
