import type * as vscode from 'vscode';

/**
 * The pause in typing after which a completion is asked for, adapted to the user's pace: about
 * twice the typical gap between their keystrokes, between 120 and 450 ms (VS Code's own pause
 * before asking a provider is about 50 ms, too short for a request to a gateway). A fast typist
 * is not interrupted by a request per word; a slow one does not wait long.
 */
export class TypingPause {
  private last = 0;
  private gaps: number[] = [];

  typed(now: number): void {
    const gap = now - this.last;
    this.last = now;
    // A gap of more than a second is a stop, not typing.
    if (gap > 0 && gap < 1000) this.gaps = [...this.gaps.slice(-9), gap];
  }

  get ms(): number {
    if (this.gaps.length < 3) return 250;
    const sorted = [...this.gaps].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 125;
    return Math.min(450, Math.max(120, Math.round(median * 2)));
  }

  /** Waits the pause; false when the token was cancelled first (the user typed on). */
  wait(token: vscode.CancellationToken): Promise<boolean> {
    if (token.isCancellationRequested) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        sub.dispose();
        resolve(!token.isCancellationRequested);
      }, this.ms);
      const sub = token.onCancellationRequested(() => {
        clearTimeout(timer);
        sub.dispose();
        resolve(false);
      });
    });
  }
}
