import { CatalogFile } from './catalogOrigin';
import { DEFAULT_GROUPS, DEFAULT_KEYS, DEFAULT_MODELS, DEMO_KEY } from './defaults';
import { FaultBook } from './faults';
import { gatewayBodyLimit, gatewayDispatch } from './gateway';
import { mediaState } from './mediaState';
import { OriginServer, type Dispatch } from './originServer';
import { gatewayRoutes } from './routes';
import { quotaRoutes } from './routes/quota';
import { toolState } from './toolState';
import type {
  CatalogSpec,
  Fault,
  GatewayOptions,
  KeySpec,
  RequestLogEntry,
  StoredFileInfo,
  VideoQueryShape,
} from './types';
import type { VideoStatus, VideoTaskInfo } from './videoTasks';
import { QUOTA_PER_USD, usdToQuota, World } from './world';

export * from './types';
export * from './defaults';
export { REQUEST_ID_HEADER, newRequestId } from './requestId';
export { CHAT_SCENARIOS, parseScenarios, type ChatScenario } from './chatScenarios';
export { PNG_SIGNATURE, promptPng } from './png';
export { GLM_ROOT, OCR_IMAGE_LIMIT_BYTES, OCR_MAX_PAGES, OCR_PDF_LIMIT_BYTES } from './routes/glm';
export { KIMI_MAX_FILES, KIMI_ROOT } from './routes/kimi';
export { boundaryOf, MultipartError, MultipartParser, parseMultipart, type FormPart } from './multipart';
export { decodePng, pdfPageImages, recognise, type OcrPage } from './ocr';
export { MEDIA_SCENARIOS, parseMediaMarkers, type MediaMarkers, type MediaScenario } from './mediaScenarios';
export { drawImage, imageSize, sniffImage, type ImageFormat } from './imageCodecs';
export {
  buildMp4,
  findMp4Box,
  materialize,
  mp4Boxes,
  mp4Summary,
  readRange,
  VIDEO_FPS,
  type Mp4Box,
  type Mp4Summary,
  type VirtualFile,
} from './mp4';
export {
  DEFAULT_VIDEO_TIMING,
  RESULT_LINK_VALIDITY_MS,
  VIDEO_PROGRESS,
  VIDEO_STATUSES,
  type VideoStatus,
  type VideoTaskInfo,
} from './videoTasks';
export { VIDEO_SIZE_TIERS } from './routes/video';

export const DEFAULT_CATALOG_PATH = '/static/models.json';

/**
 * A local imitation of a new-api-style model gateway (the gateway origin) plus a second origin
 * serving the downloadable model catalog and a third, the CDN, serving result links of images and
 * videos (DashScope/OSS-style signed URLs). All are real HTTP servers on 127.0.0.1.
 */
export class GatewayDouble {
  readonly log: RequestLogEntry[] = [];
  readonly demoKey: string;
  private readonly world: World;
  private readonly faults = new FaultBook();
  private readonly catalog: CatalogFile;
  private readonly gateway: OriginServer;
  private readonly catalogOrigin: OriginServer;
  private readonly cdnOrigin: OriginServer;

  constructor(opts: GatewayOptions = {}) {
    const keys = opts.keys ?? DEFAULT_KEYS;
    const models = opts.models ?? DEFAULT_MODELS;
    this.world = new World(models, opts.groups ?? DEFAULT_GROUPS, keys, opts.language);
    this.demoKey = opts.keys ? (opts.keys[0]?.key ?? '') : DEMO_KEY;
    this.catalog = new CatalogFile(
      opts.catalog ?? { format: 'opencode' },
      opts.catalogPath ?? DEFAULT_CATALOG_PATH,
      models,
      () => this.url,
    );
    const shared = { log: this.log, faults: this.faults };
    const routes = [...gatewayRoutes, ...quotaRoutes(opts.quotaEndpoints ?? 'newApi')];
    this.gateway = new OriginServer(
      {
        name: 'gateway',
        port: opts.port ?? 0,
        sendsRequestId: true,
        dispatch: gatewayDispatch(this.world, routes),
        bodyLimit: gatewayBodyLimit(routes),
        ...(opts.tls ? { tls: opts.tls } : {}),
        ...(opts.keepAliveTimeoutMs !== undefined ? { keepAliveTimeoutMs: opts.keepAliveTimeoutMs } : {}),
      },
      shared,
    );
    this.catalogOrigin = new OriginServer(
      { name: 'catalog', port: opts.catalogPort ?? 0, sendsRequestId: false, dispatch: this.staticDispatch() },
      shared,
    );
    const media = mediaState(this.world);
    for (const [model, types] of Object.entries(opts.refusedEndpoints ?? {}))
      for (const t of types) this.refuseEndpoint(model, t);
    media.configure(opts.videoTiming);
    media.videoQuery = opts.videoQuery ?? 'task';
    media.serverAddress = opts.videoServerAddress;
    this.cdnOrigin = new OriginServer(
      { name: 'cdn', port: opts.cdnPort ?? 0, sendsRequestId: false, dispatch: media.cdn.dispatch },
      shared,
    );
    media.cdnOrigin = () => this.cdnOrigin.url;
    toolState(this.world).selfOrigins = () => [this.gateway.url, this.catalogOrigin.url, this.cdnOrigin.url];
  }

  /** The static origin serves the catalog file and whatever hostFile put there. */
  private staticDispatch(): Dispatch {
    return (http) => {
      const hosted = toolState(this.world).hosted.get(http.path);
      if (!hosted || (http.method !== 'GET' && http.method !== 'HEAD')) return this.catalog.dispatch(http);
      http.send(200, hosted.body, { 'Content-Type': hosted.contentType });
    };
  }

  /**
   * Puts a file on the static origin (no auth, like the platform's static path) and returns its URL.
   * GLM's layout_parsing accepts a `file` URL only when it points at the double itself, since the
   * double does not reach the internet; this is how a test gives it one.
   */
  hostFile(path: string, body: Buffer | string, contentType = 'application/octet-stream'): string {
    const at = path.startsWith('/') ? path : `/${path}`;
    toolState(this.world).hosted.set(at, { body: Buffer.isBuffer(body) ? body : Buffer.from(body), contentType });
    return this.catalogOrigin.url + at;
  }

  /** The Kimi files a key has uploaded and not deleted, oldest first (what its GET /files lists). */
  kimiFiles(key: string): StoredFileInfo[] {
    const state = this.world.state(key);
    return toolState(this.world)
      .filesOf(state)
      .map(({ id, filename, bytes, createdAt, purpose, status, content, fileType }) => ({
        id,
        filename,
        bytes,
        createdAt,
        purpose,
        status,
        content,
        fileType,
      }));
  }

  async start(): Promise<void> {
    await this.gateway.listen();
    await this.catalogOrigin.listen();
    await this.cdnOrigin.listen();
    mediaState(this.world).start();
  }

  /** Closes all origins, cutting off stalled and delayed requests, and stops the video polling loop. */
  async stop(): Promise<void> {
    mediaState(this.world).stop();
    await Promise.all([this.gateway.close(), this.catalogOrigin.close(), this.cdnOrigin.close()]);
  }

  /** The gateway origin, e.g. `http://127.0.0.1:43211` (`https://` with `tls`), no trailing slash. */
  get url(): string {
    return this.gateway.url;
  }

  /** Full URL of the catalog file on the second origin. */
  get catalogUrl(): string {
    return this.catalogOrigin.url + this.catalog.path;
  }

  /** The CDN origin serving result links, e.g. `http://127.0.0.1:43213`, no trailing slash. */
  get cdnUrl(): string {
    return this.cdnOrigin.url;
  }

  /** Requests the CDN origin received (tests assert none carried an Authorization header). */
  get cdnLog(): RequestLogEntry[] {
    return this.log.filter((e) => e.origin === 'cdn');
  }

  /**
   * One run of new-api's task polling loop, after every unfinished upstream task moved one stage:
   * with `videoTiming.manual`, each call moves every open task exactly one status
   * (NOT_START → SUBMITTED → QUEUED → IN_PROGRESS → SUCCESS/FAILURE).
   */
  tickVideo(): void {
    mediaState(this.world).board.tick();
  }

  /**
   * Moves one task one status further, or on until it reaches `to` (`'FAILURE'` makes any open
   * task fail). Throws when it cannot get there (a [[stuck]] task never succeeds).
   */
  advanceVideo(taskId: string, to?: VideoStatus): VideoStatus {
    return mediaState(this.world).board.advance(taskId, to);
  }

  /** From now on the model's upstream refuses this endpoint type although /v1/models lists it (see GatewayOptions.refusedEndpoints). */
  refuseEndpoint(modelId: string, endpointType: string): void {
    let set = this.world.refusedEndpoints.get(modelId);
    if (!set) this.world.refusedEndpoints.set(modelId, (set = new Set()));
    set.add(endpointType);
  }

  /** From now on the model's upstream refuses this request field as unknown (HTTP 400, OpenAI's wording). */
  refuseField(modelId: string, field: string): void {
    let set = this.world.refusedFields.get(modelId);
    if (!set) this.world.refusedFields.set(modelId, (set = new Set()));
    set.add(field);
  }

  /** Empties every prompt cache (a test starting from a cold cache). */
  clearPromptCache(): void {
    this.world.promptCache.clear();
  }

  /** Switches the shape video task queries answer in from now on (see VideoQueryShape). */
  setVideoQuery(shape: VideoQueryShape, serverAddress?: string): void {
    const media = mediaState(this.world);
    media.videoQuery = shape;
    media.serverAddress = serverAddress;
  }

  /** The double's view of a video task (whoever owns it), or undefined. */
  videoTask(taskId: string): VideoTaskInfo | undefined {
    const board = mediaState(this.world).board;
    const task = board.tasks.get(taskId);
    return task ? board.info(task) : undefined;
  }

  clearLog(): void {
    this.log.length = 0;
  }

  inject(fault: Fault): void {
    this.faults.inject(fault);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  /**
   * Holds every relayed request (chat, images, video submissions, tools) after it took its key's
   * concurrency slot, until `release()`: a burst stays in flight for as long as a test needs.
   */
  holdRelays(): { release(): void } {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.world.relayHold = held;
    return {
      release: () => {
        if (this.world.relayHold === held) delete this.world.relayHold;
        release();
      },
    };
  }

  /** The key's concurrency figures: in flight now, the most at once so far, and refusals. */
  concurrency(key: string): { inFlight: number; peak: number; refused: number } {
    const state = this.world.state(key);
    return { inFlight: state.inFlight, peak: state.peakInFlight, refused: state.concurrencyRefusals };
  }

  /** A changed body gets a new ETag and a later Last-Modified. */
  setCatalog(spec: CatalogSpec): void {
    this.catalog.set(spec);
  }

  addKey(key: KeySpec): void {
    this.world.addKey(key);
  }

  /** Sets the user quota of the key's owner; undefined = unlimited. */
  setQuota(key: string, usd: number | undefined): void {
    this.world.state(key).userQuota = usd === undefined ? undefined : usdToQuota(usd);
  }

  /**
   * What is left, in USD, of the key owner's quota and of the key's own quota (undefined = unlimited),
   * and what the key has spent (`usedUsd`, what the billing endpoints report as used).
   */
  quota(key: string): { userUsd?: number; tokenUsd?: number; usedUsd: number } {
    const { userQuota, tokenQuota, usedQuota } = this.world.state(key);
    return {
      ...(userQuota === undefined ? {} : { userUsd: userQuota / QUOTA_PER_USD }),
      ...(tokenQuota === undefined ? {} : { tokenUsd: tokenQuota / QUOTA_PER_USD }),
      usedUsd: usedQuota / QUOTA_PER_USD,
    };
  }

  /** Sets the key's own quota; undefined = unlimited. */
  setTokenQuota(key: string, usd: number | undefined): void {
    this.world.state(key).tokenQuota = usd === undefined ? undefined : usdToQuota(usd);
  }
}
