import * as vscode from 'vscode';
import { fetchAnswerImage, type AnswerImage, type AnswerImageRules } from '../../core/answerImageFetch';
import { lookupAll, type HostLookup } from '../../core/privateAddress';
import type { Route } from '../../core/proxy';
import type { HostMessage } from '../../shared/protocol';
import { chatSettings } from './chatSettings';
import { allowedImageHosts, gatewayHost } from './remoteImages';

/** An image that takes longer than this is given up (it is a picture in an answer, not a download). */
const IMAGE_TIMEOUT_MS = 30_000;
/**
 * Images fetched lately, as the page gets them, so a page rebuilt (a hidden view comes back) or a
 * conversation shown again does not fetch them again; the oldest go first past this many characters.
 */
const CACHE_CHARS = 32 * 1024 * 1024;
/** Fetches at once; an answer with a hundred images of an allowed host fetches them this many at a time. */
const PARALLEL = 4;

type Fetch = (url: string, rules: AnswerImageRules) => Promise<AnswerImage>;

/**
 * Remote images in chat answers, fetched by the host for the view (core/answerImageFetch.ts): the
 * page's content security policy lists no remote host, so the page shows only what it is handed
 * here, as a `data:` URL (the CSP already allows those, and the page keeps nothing on disk). Only
 * hosts the user allowed are fetched; a fetch for a conversation the view no longer shows is
 * cancelled.
 */
export class AnswerImages implements vscode.Disposable {
  private readonly running = new Map<string, { abort: AbortController; conversations: Set<string> }>();
  private readonly cache = new Map<string, string>();
  private cachedChars = 0;
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    private readonly post: (message: HostMessage) => void,
    /** The gateway client's route to an address (HttpClient.routeTo): its proxy and trusted authorities. */
    private readonly route: (url: URL, signal: AbortSignal) => Promise<Route>,
    private readonly lookup: HostLookup = lookupAll,
    private readonly fetch: Fetch = fetchAnswerImage,
  ) {}

  /** The view asks for an image of the conversation it shows (`conversation`: the snapshot's key). */
  load(url: string, conversation: string): void {
    const cached = this.cache.get(url);
    // Kept images of a host the user revoked since are not handed out again.
    if (cached !== undefined && !allowedImageHosts().includes(hostOf(url))) this.forget(url);
    else if (cached !== undefined) {
      this.cache.delete(url);
      this.cache.set(url, cached);
      this.post({ type: 'remoteImage', conversationId: conversation, url, dataUrl: cached });
      return;
    }
    const running = this.running.get(url);
    if (running) {
      running.conversations.add(conversation);
      return;
    }
    const abort = new AbortController();
    this.running.set(url, { abort, conversations: new Set([conversation]) });
    void this.slot()
      .then(() => this.fetch(url, this.rules(abort.signal)))
      .finally(() => this.release())
      .catch((err: unknown): AnswerImage => ({ ok: false, reason: String(err).slice(0, 200) }))
      .then((image) => {
        const asking = [...(this.running.get(url)?.conversations ?? [conversation])].at(-1) ?? conversation;
        this.running.delete(url);
        const reply = { type: 'remoteImage', conversationId: asking, url } as const;
        if (image.ok) {
          const dataUrl = `data:${image.mediaType};base64,${Buffer.from(image.bytes).toString('base64')}`;
          this.remember(url, dataUrl);
          this.post({ ...reply, dataUrl });
        } else if (image.cancelled) this.post(reply);
        else this.post({ ...reply, refused: image.reason });
      });
  }

  /** Resolves when a fetch may start (a cancelled one waiting for its turn ends at once when it gets it). */
  private async slot(): Promise<void> {
    if (this.active < PARALLEL) this.active++;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  /** The slot goes to the next waiting fetch, if any. */
  private release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.active--;
  }

  /** The view shows this conversation now: fetches only for others are cancelled. */
  shown(conversation: string | undefined): void {
    for (const { abort, conversations } of this.running.values())
      if (conversation === undefined || !conversations.has(conversation)) abort.abort();
  }

  /** The page is gone or rebuilt: nothing it asked for is wanted any more. */
  cancelAll(): void {
    this.shown(undefined);
  }

  dispose(): void {
    this.cancelAll();
    this.cache.clear();
  }

  private rules(signal: AbortSignal): AnswerImageRules {
    const gateway = gatewayHost();
    return {
      // Read at each address (a redirect's too): a host revoked meanwhile is not fetched.
      allowed: (host) => allowedImageHosts().includes(host),
      ...(gateway ? { gatewayHost: gateway } : {}),
      maxBytes: chatSettings().imageMaxBytes,
      timeoutMs: IMAGE_TIMEOUT_MS,
      // The same certificate authorities and proxy as the gateway's requests (a corporate network
      // inspects both alike).
      route: (url) => this.route(url, signal),
      lookup: this.lookup,
      signal,
    };
  }

  private forget(url: string): void {
    this.cachedChars -= this.cache.get(url)?.length ?? 0;
    this.cache.delete(url);
  }

  private remember(url: string, dataUrl: string): void {
    if (dataUrl.length > CACHE_CHARS) return;
    this.cache.set(url, dataUrl);
    this.cachedChars += dataUrl.length;
    for (const key of this.cache.keys()) {
      if (this.cachedChars <= CACHE_CHARS) break;
      this.forget(key);
    }
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
