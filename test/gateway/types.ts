/** The public vocabulary of the gateway double: world description, request log and faults. */

/** `cdn` serves result links (videos, image URLs) like DashScope's OSS bucket. */
export type OriginName = 'gateway' | 'catalog' | 'cdn';

export type Language = 'en' | 'zh-CN';

export type KeyStatus = 'enabled' | 'disabled' | 'expired' | 'exhausted';

export interface RateLimitSpec {
  requests: number;
  windowMs: number;
  /** new-api answers a Redis-backed limit with a Chinese message and a memory-backed one with an empty body. */
  backend: 'redis' | 'memory';
}

export interface KeySpec {
  /** Exactly as a user copies it from the console, `sk-` included. */
  key: string;
  group: string;
  /** The owning user's remaining quota in USD; undefined = unlimited. */
  quotaUsd?: number;
  /** The key's own remaining quota in USD; undefined = unlimited, ≤ 0 = exhausted (401 at auth). */
  tokenQuotaUsd?: number;
  rateLimit?: RateLimitSpec;
  status?: KeyStatus;
  /** When set, the key may use only these models, and /v1/models lists exactly them. */
  modelWhitelist?: string[];
  /**
   * new-api's per-token MaxConcurrency: relayed and submitted requests (not task queries) of the key
   * in flight at once; one more is refused with 429 `token_concurrency_limit_reached`, never queued.
   */
  maxConcurrency?: number;
}

export type Modality = 'text' | 'image' | 'audio' | 'video' | 'pdf';

export type ModelKind = 'chat' | 'image' | 'video' | 'tool';

export interface ModelSpec {
  id: string;
  owned_by: string;
  supported_endpoint_types: string[];
  /** Fixed price per call in USD (tools, video); takes precedence over `ratio`. */
  priceUsd?: number;
  /** new-api model ratio: 1 = $2 per million tokens. Undefined = the platform default of 1. */
  ratio?: number;
  /** The fields below feed the downloadable catalog only. */
  name?: string;
  /** Derived from the endpoint types when omitted ([] → tool). */
  kind?: ModelKind;
  reasoning?: boolean;
  toolCall?: boolean;
  modalities?: { input: Modality[]; output: Modality[] };
  limit?: { context: number; output: number };
  video?: { sizes: string[]; durations: number[] };
}

export type CatalogFormat = 'openai-list' | 'opencode' | 'models.dev' | 'models-list' | 'unknown';

export interface CatalogSpec {
  format: CatalogFormat;
  /** Served verbatim instead of the generated file. */
  body?: string;
}

/**
 * The read-only quota endpoints a key may call. `newApi` (stock new-api): the OpenAI-style
 * `/dashboard/billing/subscription` and `/usage` (under `/v1` too) and new-api's `/api/usage/token`;
 * `dashboard`: only the OpenAI-style pair; `tokenUsage`: only `/api/usage/token`; `none`: neither
 * (404, as for any unknown path); `errorBody`: all of them answer HTTP 200 with an error body, as
 * new-api does when it cannot read the key's record.
 */
export type QuotaEndpoints = 'newApi' | 'dashboard' | 'tokenUsage' | 'none' | 'errorBody';

export interface GatewayOptions {
  port?: number;
  /**
   * How long the gateway origin keeps an idle kept-alive connection; Node's 5 s when not given.
   * The bench raises it: on a loaded machine a client (the SDKs' fetch) may send on a connection
   * just as the server closes it, and a billed POST is not retried.
   */
  keepAliveTimeoutMs?: number;
  catalogPort?: number;
  /** Path of the catalog file on the second origin; default `/static/models.json`. */
  catalogPath?: string;
  keys?: KeySpec[];
  /** Group name → ids of the models the group may use. */
  groups?: Record<string, string[]>;
  models?: ModelSpec[];
  catalog?: CatalogSpec;
  /** The user's saved UI language; when unset, Accept-Language decides, then English. */
  language?: Language;
  /** Port of the CDN origin serving result links; 0 (default) picks a free one. */
  cdnPort?: number;
  /** How fast video tasks move; see VideoTiming. Tests usually pass `{ manual: true }`. */
  videoTiming?: Partial<VideoTiming>;
  /**
   * Serve the gateway origin over HTTPS with this key and certificate (PEM), as a gateway behind
   * a corporate certificate authority does; the catalog and CDN origins stay plain HTTP.
   */
  tls?: { key: string; cert: string };
  /**
   * Model id → endpoint types (`openai`, `openai-response`, `anthropic`) that /v1/models advertises
   * for it but its upstream refuses: HTTP 400 `bad_response_status_code`, "Model … does not support
   * apiType:… parameter". GatewayDouble.refuseEndpoint adds one at run time.
   */
  refusedEndpoints?: Record<string, string[]>;
  /** The shape video task queries answer in; default `task`. */
  videoQuery?: VideoQueryShape;
  /**
   * The server address new-api writes into links to its own video content route (an operator who
   * left it at its default gives clients `http://localhost:3000/...`); default the gateway's origin.
   */
  videoServerAddress?: string;
  /** The quota endpoints this gateway answers; default `newApi`. */
  quotaEndpoints?: QuotaEndpoints;
}

/**
 * What a video task query answers (GatewayDouble.setVideoQuery switches it at run time):
 * - `task`: `GET /v1/video/generations/{id}` answers `{code:"success",data:TaskDto}` (upper-case
 *   statuses, `"30%"`, `result_url`, `fail_reason`, the upstream body at `data.data`);
 * - `short`: the same route answers `{code:"success",data:{task_id,status:queued|processing|succeeded|failed,url,format,metadata,error}}`
 *   with `url` on the gateway's own content route, as new-api does for channels it queries in real time;
 * - `openai`: the generic query route is not served (404, a gateway offering OpenAI's video API
 *   only); `GET /v1/videos/{id}` answers OpenAI's video object without a link, the bytes being at
 *   `GET /v1/videos/{id}/content`.
 * `GET /v1/videos/{id}` (with `metadata.url` outside `openai`) and `/content` are served in every shape.
 */
export type VideoQueryShape = 'task' | 'short' | 'openai';

/**
 * Video task timing. The upstream (DashScope) task moves one stage (accepted → PENDING → RUNNING →
 * done) every `stepMs`; the gateway's row changes only when its polling loop runs, every `pollMs`
 * (new-api: 15 s), so statuses lag and may skip. Defaults: 4 s steps, 5 s polls, timeout 1440 min.
 */
export interface VideoTiming {
  stepMs: number;
  pollMs: number;
  /** No timers at all: tasks move only through GatewayDouble.tickVideo() / advanceVideo(). */
  manual: boolean;
  /** new-api's TASK_TIMEOUT_MINUTES: an unfinished task this old fails (refunded) at the next poll; ≤ 0 = never. */
  timeoutMinutes: number;
}

/** The double's account of an image or video route call. */
export interface MediaRecord {
  kind: 'image' | 'videoSubmit' | 'videoQuery';
  model: string;
  /** Scenario markers found in the prompt, as typed. */
  markers: string[];
  /** Quota units charged by this request (0 when refused or for a query). */
  chargedQuota: number;
  /** Images answered. */
  images?: number;
  taskId?: string;
  /** `POST /v1/videos`: the form's text fields as they came (the log keeps no multipart body). */
  form?: Record<string, string>;
  /** `POST /v1/videos`: the `input_reference` file part that came with the form. */
  inputReference?: { filename?: string; contentType?: string; bytes: number };
}

export interface RequestLogEntry {
  origin: OriginName;
  method: string;
  /** Path with query string. */
  path: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Bytes read; a body refused for its size counts what was read before (0 if refused on Content-Length). */
  bodyBytes: number;
  /** Present for JSON and text bodies under 1 MB. */
  bodyText?: string;
  /** 0 while no response head has been sent (stalled or reset requests stay at 0). */
  status: number;
  /** The X-Oneapi-Request-Id sent back (gateway origin only). */
  requestId?: string;
  time: number;
  /** What a chat route answered (Chat Completions, Responses, Messages), for tests to compare with. */
  answer?: ChatAnswerRecord;
  /** What a provider tool route (GLM / Kimi under /providers) did; absent when the middleware refused the request. */
  tool?: ToolCallRecord;
  /** What the completions route (fill-in-the-middle) did; absent when it refused the request. */
  completion?: CompletionRecord;
  /** What an image or video route did; absent when the middleware refused the request. */
  media?: MediaRecord;
}

/** The double's account of one fill-in-the-middle request on /v1/completions. */
export interface CompletionRecord {
  model: string;
  /** `suffix`: prompt + suffix (DeepSeek-type); `tokens`: FIM tokens inside prompt (Qwen coder). */
  form: 'suffix' | 'tokens';
  /** The text before and after the cursor, as the request carried them. */
  prefix: string;
  suffix: string;
  stream: boolean;
  /** The middle the model answers (all of it; an aborted stream sent a start of it). */
  text: string;
  /** The client closed the connection before the answer was out (typing on aborts a completion). */
  aborted: boolean;
  /** Quota units charged once the answer ended. */
  chargedQuota?: number;
}

/** The double's account of one provider tool call (file parse, OCR, search, reader, Kimi files). */
export interface ToolCallRecord {
  provider: 'glm' | 'kimi';
  /** The tool path below the provider root, e.g. `files/parser/sync`, `layout_parsing`, `files/:id/content`. */
  tool: string;
  /** Quota units charged: the per-call price for a billed call that succeeded, else 0. */
  chargedQuota: number;
  /** The Kimi file the call created, read or deleted. */
  fileId?: string;
}

/** A file stored by the Kimi upload route, as GatewayDouble.kimiFiles reports it. */
export interface StoredFileInfo {
  id: string;
  filename: string;
  bytes: number;
  /** Unix seconds. */
  createdAt: number;
  purpose: string;
  /** `ok` once text was extracted (possibly none, for a scan); `error` when extraction failed. */
  status: 'ok' | 'error';
  /** The text GET /files/{id}/content returns. */
  content: string;
  fileType: string;
}

/** The double's own account of one chat answer: the whole planned answer and what it cost. */
export interface ChatAnswerRecord {
  protocol: 'chatCompletions' | 'responses' | 'messages';
  stream: boolean;
  model: string;
  /** Scenario markers found in the last user message, as typed. */
  markers: string[];
  /** The full answer text as planned; a stream that was cut, stalled or failed sent a prefix of it. */
  text: string;
  reasoning: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  /** Base64 PNG of an image_generation_call (Responses), and how many partial images preceded it. */
  image?: { base64: string; partialImages: number };
  /** The usage the answer reports on the wire when it completes. */
  usage: { promptTokens: number; completionTokens: number; reasoningTokens: number; totalTokens: number };
  /** The wire finish reason (`stop`, `tool_calls`, `end_turn`, `completed`, `incomplete`, …). */
  finish: string;
  /** `complete`, or the scenario that ended it early. */
  ending: string;
  /** The `anthropic-version` header of a Messages request (optional toward new-api), if sent. */
  anthropicVersion?: string;
  /** Quota units charged, set once the answer has ended or stalled (undefined until then). */
  chargedQuota?: number;
}

export type FaultAction =
  /** Wait, then handle the request normally. */
  | { type: 'delay'; ms: number }
  /** Accept the request and never answer (until stop()). */
  | { type: 'stall' }
  /** Send the head (and optionally a first chunk), then nothing more. */
  | { type: 'stallAfterHeaders'; status?: number; contentType?: string; firstChunk?: string }
  /** Destroy the socket without a response. */
  | { type: 'reset' }
  | {
      type: 'status';
      status: number;
      /** A function receives the request id the gateway would send, for bodies that quote it. */
      body?: string | ((requestId: string) => string);
      headers?: Record<string, string>;
      /** Answer as a proxy in front of the gateway would: without X-Oneapi-Request-Id. */
      fromProxy?: boolean;
    };

export interface Fault {
  match: {
    origin?: OriginName;
    method?: string;
    /** A string must equal the path without query; a RegExp is tested against the path with query. */
    path?: string | RegExp;
  };
  /** How many matching requests the fault applies to; default: all of them. */
  times?: number;
  action: FaultAction;
}
