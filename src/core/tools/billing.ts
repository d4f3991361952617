/** Per-call billing of the provider tools (spec: US$0.10 per call unless priced separately). */
export const DEFAULT_CALL_PRICE_USD = 0.1;

export type BilledTool = 'parse' | 'ocr' | 'upload' | 'search' | 'read';

export interface BillingEntry {
  tool: BilledTool;
  at: number;
  usd: number;
}

/** Counts the billed calls of this session, for the status-bar tooltip. */
export class BillingMeter {
  readonly entries: BillingEntry[] = [];
  private readonly listeners = new Set<() => void>();

  record(tool: BilledTool, usd = DEFAULT_CALL_PRICE_USD): void {
    this.entries.push({ tool, at: Date.now(), usd });
    for (const l of this.listeners) l();
  }

  get calls(): number {
    return this.entries.length;
  }

  get usd(): number {
    return Math.round(this.entries.reduce((sum, e) => sum + e.usd, 0) * 100) / 100;
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }
}
