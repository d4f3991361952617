import type * as vscode from 'vscode';

/**
 * What the extension's entry needs to know of the Media Studio before its code is loaded: the
 * panel's view type (to restore a panel after a reload) and whether video tasks are left unfinished
 * in the workspace (to resume them soon after start-up). Kept apart from the studio so that the entry
 * does not load it.
 */
export const MEDIA_PANEL_VIEW_TYPE = 'modelGateway.mediaStudio';
export const VIDEO_TASKS_KEY = 'media.videoTasks';
/** Tasks left running by the last session resume this long after activation, not during it. */
export const RESUME_DELAY_MS = 1500;

export function hasUnfinishedVideoTasks(workspaceState: vscode.Memento): boolean {
  const stored = workspaceState.get<unknown>(VIDEO_TASKS_KEY);
  return (
    Array.isArray(stored) &&
    stored.some(
      (t) =>
        typeof t === 'object' &&
        t !== null &&
        ['running', 'downloading', 'submitting'].includes(String((t as { phase?: unknown }).phase)),
    )
  );
}
