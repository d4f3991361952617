import { imageSize } from 'image-size';
import { createHash } from 'node:crypto';
import type { ModelSpec } from './types';
import { isRecord } from './values';

/**
 * Images in chat requests, as the upstreams behind the gateway check them (wire-formats §1.2,
 * §2.2, §3.2), and the facts the double "sees" in them. The double cannot look at a picture, so it
 * answers with what it derived from the bytes it received: format and size from the header, byte
 * count and the start of the SHA-256. A test that finds the facts of its own file in the answer has
 * proved that the image arrived intact, in the form that protocol expects.
 *
 * Written independently of the extension's own image code on purpose: the double must not agree
 * with the client just because they share a bug.
 */

export interface ImageFact {
  format: 'PNG' | 'JPEG' | 'GIF' | 'WebP';
  mediaType: string;
  width?: number;
  height?: number;
  bytes: number;
  sha256: string;
}

/** A malformed part, described the way the protocol's upstream answers it. */
export interface PartError {
  message: string;
  /** OpenAI-style `code` and `param` (Chat Completions, Responses). */
  code?: string;
  param?: string;
}

export type PartCheck = { ok: true; facts: ImageFact[] } | { ok: false; error: PartError };

/** "image 1: PNG 48x48, 2107 bytes, sha256 0123456789ab" */
export function describeFact(fact: ImageFact, n: number): string {
  const size = fact.width !== undefined && fact.height !== undefined ? ` ${fact.width}x${fact.height}` : '';
  return `image ${n}: ${fact.format}${size}, ${fact.bytes} bytes, sha256 ${fact.sha256.slice(0, 12)}`;
}

export function factLines(facts: ImageFact[]): string[] {
  return facts.map((f, i) => describeFact(f, i + 1));
}

/** What PNG, JPEG, GIF and WebP bytes are (magic numbers) and their size; undefined for anything else. */
export function imageFact(bytes: Buffer): ImageFact | undefined {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const base = { bytes: bytes.length, sha256 };
  if (
    bytes.length >= 24 &&
    bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
  ) {
    return { format: 'PNG', mediaType: 'image/png', ...dimensions(bytes), ...base };
  }
  const six = bytes.subarray(0, 6).toString('latin1');
  if (bytes.length >= 10 && (six === 'GIF87a' || six === 'GIF89a')) {
    return { format: 'GIF', mediaType: 'image/gif', ...dimensions(bytes), ...base };
  }
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return { format: 'JPEG', mediaType: 'image/jpeg', ...dimensions(bytes), ...base };
  }
  if (
    bytes.length >= 16 &&
    bytes.subarray(0, 4).toString('latin1') === 'RIFF' &&
    bytes.subarray(8, 12).toString('latin1') === 'WEBP'
  ) {
    return { format: 'WebP', mediaType: 'image/webp', ...dimensions(bytes), ...base };
  }
  return undefined;
}

/**
 * Width and height by the image-size library: an implementation independent of the client's own
 * header reader (src/core/imageBytes.ts), so a bug in that reader cannot hide behind the same bug here.
 */
function dimensions(bytes: Buffer): { width?: number; height?: number } {
  try {
    const { width, height } = imageSize(bytes);
    return { width, height };
  } catch {
    return {};
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict base64 (what the upstreams decode), or undefined. */
function decodeBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

export function takesImages(model: ModelSpec): boolean {
  return model.modalities?.input.includes('image') === true;
}

const DATA_URL_EXAMPLE = "(e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU=')";
const UNSUPPORTED_IMAGE: PartError = {
  message:
    "You uploaded an unsupported image. Please make sure your image is below 20 MB in size and is of one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
  code: 'invalid_image_format',
};

/**
 * An OpenAI image URL (Chat Completions `image_url.url`, Responses `input_image.image_url`):
 * a base64 data URL with an image MIME type. `what` is OpenAI's wording of where it was found.
 */
function openAiImageUrl(url: string, what: string, param: string): ImageFact | PartError {
  if (/^https?:\/\//i.test(url)) return { message: `Timeout while downloading ${url}.`, code: 'invalid_image_url' };
  const expected = `${what}. Expected a base64-encoded data URL with an image MIME type ${DATA_URL_EXAMPLE}, but got`;
  if (!url.startsWith('data:'))
    return { message: `${expected} a value without the 'data:' prefix.`, code: 'invalid_value', param };
  const m = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  const mime = m?.[1] ?? '';
  if (!m || !/;base64$/i.test(m[2] ?? ''))
    return { message: `${expected} a value that is not base64-encoded.`, code: 'invalid_value', param };
  if (!/^image\//i.test(mime))
    return { message: `${expected} an unsupported MIME type '${mime}'.`, code: 'invalid_value', param };
  if (!m[3]) return { message: `${expected} empty base64-encoded bytes.`, code: 'invalid_value', param };
  const bytes = decodeBase64(m[3]);
  const fact = bytes ? imageFact(bytes) : undefined;
  return fact ?? UNSUPPORTED_IMAGE;
}

function isError(v: ImageFact | PartError): v is PartError {
  return 'message' in v;
}

/** Chat Completions message content parts (§1.2): `text` and `image_url: {url, detail?}`. */
export function checkChatParts(messages: unknown[], model: ModelSpec): PartCheck {
  let facts: ImageFact[] = [];
  for (const [i, m] of messages.entries()) {
    if (isRecord(m) && m.role === 'user') facts = [];
    if (!isRecord(m) || !Array.isArray(m.content)) continue;
    const mine: ImageFact[] = [];
    for (const [j, part] of m.content.entries()) {
      const at = `messages[${i}].content[${j}]`;
      const type = isRecord(part) ? part.type : undefined;
      if (!isRecord(part) || typeof type !== 'string')
        return fail({
          message: `Missing required parameter: '${at}.type'.`,
          code: 'missing_required_parameter',
          param: `${at}.type`,
        });
      if (type === 'text') {
        if (typeof part.text !== 'string')
          return fail({
            message: `Missing required parameter: '${at}.text'.`,
            code: 'missing_required_parameter',
            param: `${at}.text`,
          });
      } else if (type === 'image_url') {
        if (!takesImages(model))
          return fail({
            message: 'Invalid content type. image_url is only supported by certain models.',
            param: `messages.[${i}].content.[${j}].type`,
          });
        const image = part.image_url;
        if (!isRecord(image)) {
          return fail({
            message: `Invalid type for '${at}.image_url': expected an object, but got ${typeName(image)} instead.`,
            code: 'invalid_type',
            param: `${at}.image_url`,
          });
        }
        if (typeof image.url !== 'string')
          return fail({
            message: `Missing required parameter: '${at}.image_url.url'.`,
            code: 'missing_required_parameter',
            param: `${at}.image_url.url`,
          });
        if (image.detail !== undefined && !['auto', 'low', 'high'].includes(String(image.detail))) {
          return fail({
            message: `Invalid value: '${String(image.detail)}'. Supported values are: 'auto', 'low', and 'high'.`,
            code: 'invalid_value',
            param: `${at}.image_url.detail`,
          });
        }
        const fact = openAiImageUrl(image.url, `Invalid image URL: '${at}.image_url.url'`, `${at}.image_url.url`);
        if (isError(fact)) return fail(fact);
        mine.push(fact);
      } else {
        return fail({
          message: `Invalid value: '${type}'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.`,
          code: 'invalid_value',
          param: `${at}.type`,
        });
      }
    }
    if (m.role === 'user') facts = mine;
  }
  return { ok: true, facts };
}

/** Responses input content parts (§2.2): `input_text`, `output_text`, `input_image: {image_url, detail}`. */
export function checkResponsesParts(input: unknown, model: ModelSpec): PartCheck {
  if (!Array.isArray(input)) return { ok: true, facts: [] };
  let facts: ImageFact[] = [];
  for (const [i, item] of input.entries()) {
    if (isRecord(item) && item.role === 'user') facts = [];
    if (!isRecord(item) || !Array.isArray(item.content)) continue;
    const mine: ImageFact[] = [];
    for (const [j, part] of item.content.entries()) {
      const at = `input[${i}].content[${j}]`;
      const type = isRecord(part) ? part.type : undefined;
      if (!isRecord(part) || typeof type !== 'string')
        return fail({
          message: `Missing required parameter: '${at}.type'.`,
          code: 'missing_required_parameter',
          param: `${at}.type`,
        });
      if (type === 'input_text' || type === 'output_text') {
        if (typeof part.text !== 'string')
          return fail({
            message: `Missing required parameter: '${at}.text'.`,
            code: 'missing_required_parameter',
            param: `${at}.text`,
          });
      } else if (type === 'input_image') {
        if (!takesImages(model))
          return fail({
            message: 'Invalid content type. input_image is only supported by certain models.',
            param: `${at}.type`,
          });
        if (part.detail !== undefined && !['auto', 'low', 'high', 'original'].includes(String(part.detail))) {
          return fail({
            message: `Invalid value: '${String(part.detail)}'. Supported values are: 'low', 'high', 'auto', and 'original'.`,
            code: 'invalid_value',
            param: `${at}.detail`,
          });
        }
        if (part.image_url === undefined || part.image_url === null) {
          if (typeof part.file_id === 'string')
            return fail({
              message: `No file found with id '${part.file_id}'.`,
              code: 'invalid_value',
              param: `${at}.file_id`,
            });
          return fail({
            message: `Missing required parameter: '${at}.image_url'.`,
            code: 'missing_required_parameter',
            param: `${at}.image_url`,
          });
        }
        if (typeof part.image_url !== 'string') {
          return fail({
            message: `Invalid type for '${at}.image_url': expected a string, but got ${typeName(part.image_url)} instead.`,
            code: 'invalid_type',
            param: `${at}.image_url`,
          });
        }
        const fact = openAiImageUrl(part.image_url, `Invalid '${at}.image_url'`, `${at}.image_url`);
        if (isError(fact)) return fail(fact);
        mine.push(fact);
      } else {
        return fail({
          message: `Invalid value: '${type}'. Supported values are: 'input_text', 'input_image', 'output_text', 'refusal', 'input_file', 'computer_screenshot', and 'summary_text'.`,
          code: 'invalid_value',
          param: `${at}.type`,
        });
      }
    }
    if (item.role === 'user') facts = mine;
  }
  return { ok: true, facts };
}

const ANTHROPIC_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
const ANTHROPIC_IMAGE_MAX = 5 * 1024 * 1024;
const ANTHROPIC_BLOCKS =
  "'text', 'image', 'document', 'search_result', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'server_tool_use', 'web_search_tool_result'";

/** Messages content blocks (§3.2): `text` and `image: {source: {type: base64, media_type, data}}`. */
export function checkMessagesParts(messages: unknown[], model: ModelSpec): PartCheck {
  let facts: ImageFact[] = [];
  for (const [i, m] of messages.entries()) {
    if (isRecord(m) && m.role === 'user') facts = [];
    if (!isRecord(m) || !Array.isArray(m.content)) continue;
    const mine: ImageFact[] = [];
    for (const [j, block] of m.content.entries()) {
      const at = `messages.${i}.content.${j}`;
      const type = isRecord(block) ? block.type : undefined;
      if (!isRecord(block) || typeof type !== 'string')
        return fail({ message: `${at}: Unable to extract tag using discriminator 'type'` });
      if (type === 'text') {
        if (typeof block.text !== 'string') return fail({ message: `${at}.text.text: Field required` });
      } else if (type === 'image') {
        const source = block.source;
        if (!isRecord(source)) return fail({ message: `${at}.image.source: Field required` });
        if (source.type === 'url')
          return fail({
            message: `${at}.image.source.url: Unable to download the file. Please verify the URL and try again.`,
          });
        if (source.type !== 'base64') {
          return fail({
            message: `${at}.image.source: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'`,
          });
        }
        const where = `${at}.image.source.base64`;
        if (typeof source.media_type !== 'string' || !ANTHROPIC_MEDIA_TYPES.includes(source.media_type)) {
          return fail({
            message: `${where}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`,
          });
        }
        if (typeof source.data !== 'string') return fail({ message: `${where}.data: Field required` });
        if (!takesImages(model))
          return fail({ message: `${at}.image: The model ${model.id} does not support image input.` });
        const bytes = decodeBase64(source.data);
        if (!bytes || bytes.length === 0) return fail({ message: `${where}: The image data is not valid base64.` });
        if (bytes.length > ANTHROPIC_IMAGE_MAX)
          return fail({
            message: `${where}: image exceeds 5 MB maximum: ${bytes.length} bytes > ${ANTHROPIC_IMAGE_MAX} bytes`,
          });
        const fact = imageFact(bytes);
        if (!fact) return fail({ message: `${where}: Could not process image` });
        if (fact.mediaType !== source.media_type) {
          return fail({
            message: `${where}: The image was specified using the ${source.media_type} media type, but the image appears to be a ${fact.mediaType} image`,
          });
        }
        mine.push(fact);
      } else if (
        ![
          'document',
          'search_result',
          'tool_use',
          'tool_result',
          'thinking',
          'redacted_thinking',
          'server_tool_use',
          'web_search_tool_result',
        ].includes(type)
      ) {
        return fail({
          message: `${at}: Input tag '${type}' found using 'type' does not match any of the expected tags: ${ANTHROPIC_BLOCKS}`,
        });
      }
    }
    if (m.role === 'user') facts = mine;
  }
  return { ok: true, facts };
}

function fail(error: PartError): PartCheck {
  return { ok: false, error };
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'number') return 'a number';
  if (typeof v === 'object') return 'an object';
  return typeof v;
}
