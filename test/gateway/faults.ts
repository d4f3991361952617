import { REQUEST_ID_HEADER } from './requestId';
import type { RequestContext } from './requestContext';
import type { Fault, FaultAction, OriginName } from './types';

interface Armed {
  fault: Fault;
  remaining: number;
}

/** Injected faults, checked in injection order before any route; the first match wins. */
export class FaultBook {
  private armed: Armed[] = [];

  inject(fault: Fault): void {
    this.armed.push({ fault, remaining: fault.times ?? Infinity });
  }

  clear(): void {
    this.armed = [];
  }

  /** The action for this request, if any, counting it against the fault's `times`. */
  take(origin: OriginName, method: string, path: string, pathWithQuery: string): FaultAction | undefined {
    const hit = this.armed.find(({ fault: { match }, remaining }) => {
      if (remaining <= 0) return false;
      if (match.origin && match.origin !== origin) return false;
      if (match.method && match.method.toUpperCase() !== method) return false;
      if (typeof match.path === 'string') return match.path === path;
      return match.path ? match.path.test(pathWithQuery) : true;
    });
    if (!hit) return undefined;
    hit.remaining -= 1;
    if (hit.remaining <= 0) this.armed = this.armed.filter((a) => a !== hit);
    return hit.fault.action;
  }
}

/** Carries out a fault; resolves true when the request should then be handled normally. */
export async function applyFault(
  action: FaultAction,
  ctx: RequestContext,
  sleep: (ms: number) => Promise<void>,
): Promise<boolean> {
  switch (action.type) {
    case 'delay':
      await sleep(action.ms);
      return true;
    case 'stall':
      return false;
    case 'stallAfterHeaders':
      ctx.writeHead(action.status ?? 200, { 'Content-Type': action.contentType ?? 'text/event-stream' });
      if (action.firstChunk !== undefined) ctx.res.write(action.firstChunk);
      return false;
    case 'reset':
      ctx.req.socket.resetAndDestroy();
      return false;
    case 'status': {
      if (action.fromProxy) {
        ctx.res.removeHeader(REQUEST_ID_HEADER);
        delete ctx.entry.requestId;
      }
      const body = typeof action.body === 'function' ? action.body(ctx.requestId) : (action.body ?? '');
      ctx.send(action.status, body, { 'Content-Type': guessContentType(body), ...action.headers });
      return false;
    }
  }
}

function guessContentType(body: string): string {
  const start = body.trimStart();
  if (start.startsWith('<')) return 'text/html';
  if (start.startsWith('{') || start.startsWith('[')) return 'application/json; charset=utf-8';
  return 'text/plain; charset=utf-8';
}
