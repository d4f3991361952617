import type { StoredFileInfo } from './types';
import type { KeyState, World } from './world';

/** A Kimi file as the double keeps it: the upload's owner is the key that sent it. */
export interface StoredFile extends StoredFileInfo {
  owner: KeyState;
  statusDetails: string;
}

/** A file the double hosts on its static (catalog) origin, for tool routes that take a URL. */
export interface HostedFile {
  body: Buffer;
  contentType: string;
}

/**
 * What the provider tool routes remember between requests, one per World (so one per double):
 * Kimi's uploaded files, and the double's own origins, which are the only hosts a URL given to
 * GLM's layout_parsing may point at (the double does not reach the internet).
 */
export class ToolState {
  readonly files = new Map<string, StoredFile>();
  readonly hosted = new Map<string, HostedFile>();
  /** Set by GatewayDouble: the origins (`http://127.0.0.1:port`) of the gateway and the static host. */
  selfOrigins: () => string[] = () => [];

  filesOf(owner: KeyState): StoredFile[] {
    return [...this.files.values()].filter((f) => f.owner === owner);
  }
}

const states = new WeakMap<World, ToolState>();

export function toolState(world: World): ToolState {
  let state = states.get(world);
  if (!state) {
    state = new ToolState();
    states.set(world, state);
  }
  return state;
}
