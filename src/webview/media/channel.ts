/**
 * The webview's only channel to the host: typed `post` of intents, and VS Code's per-webview state
 * for what the user typed but has not sent (prompts, sizes, the open tab), so a hidden or reloaded
 * panel comes back as it was left. Everything else comes from the host's snapshots.
 */
import type { MediaTab, MediaWebviewMessage } from '../../shared/mediaProtocol';
import { WebviewChannel } from '../shared/channel';

export interface Drafts {
  tab: MediaTab;
  /** Form values by field name (prompt, size, model…), as typed. */
  fields: Record<string, string>;
}

/** The Media Studio's channel; its UI state is the drafts. */
export class MediaChannel extends WebviewChannel<MediaWebviewMessage, Drafts> {
  constructor() {
    super(readDrafts, 200);
  }
}

function readDrafts(saved: unknown): Drafts {
  const drafts: Drafts = { tab: 'images', fields: {} };
  if (typeof saved !== 'object' || saved === null) return drafts;
  const s = saved as Record<string, unknown>;
  if (s.tab === 'images' || s.tab === 'video') drafts.tab = s.tab;
  if (typeof s.fields === 'object' && s.fields !== null) {
    for (const [k, v] of Object.entries(s.fields)) if (typeof v === 'string') drafts.fields[k] = v;
  }
  return drafts;
}
