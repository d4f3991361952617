/**
 * One load at a time, shared by concurrent callers, and never one that started before the last
 * `invalidate()` (the key or the settings changed): a caller after the change starts a fresh load, and
 * the older load can tell from its generation that its answer is stale.
 */
export class GenerationalLoad<T> {
  private inFlight?: { generation: number; promise: Promise<T> };
  private current = 0;

  /** Whether a load is under way (of any generation). */
  get busy(): boolean {
    return this.inFlight !== undefined;
  }

  /** What a load of `generation` learned is still wanted. */
  isCurrent(generation: number): boolean {
    return generation === this.current;
  }

  /** Everything loaded or loading is stale from now on. */
  invalidate(): void {
    this.current++;
  }

  /** Shares the current generation's load under way, or starts `load` for it. */
  run(load: (generation: number) => Promise<T>): Promise<T> {
    if (this.inFlight?.generation === this.current) return this.inFlight.promise;
    const generation = this.current;
    const promise = load(generation).finally(() => {
      if (this.inFlight?.promise === promise) this.inFlight = undefined;
    });
    this.inFlight = { generation, promise };
    return promise;
  }
}
