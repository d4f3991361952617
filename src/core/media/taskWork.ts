/**
 * The work a video task manager has under way, per task: the timer of its next poll or download,
 * the controller of the request running now, and the promises of what runs, so that closing the
 * manager stops every timer, aborts every request and can wait until nothing touches files any more.
 */
export class TaskWork {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly controllers = new Map<string, AbortController>();
  private readonly running = new Set<Promise<void>>();

  /** Runs `work` for the task after `ms`, in place of whatever was planned for it. */
  later(id: string, ms: number, work: () => Promise<void>): void {
    this.cancelTimer(id);
    this.timers.set(
      id,
      setTimeout(() => {
        this.timers.delete(id);
        const run = work();
        this.running.add(run);
        void run.finally(() => this.running.delete(run));
      }, ms),
    );
  }

  /** A controller for the request the task starts now; it is the task's current one until `end`. */
  begin(id: string): AbortController {
    const ctl = new AbortController();
    this.controllers.set(id, ctl);
    return ctl;
  }

  end(id: string, ctl: AbortController): void {
    if (this.controllers.get(id) === ctl) this.controllers.delete(id);
  }

  /** Whether `ctl` is still the task's current request (not halted, not replaced). */
  isCurrent(id: string, ctl: AbortController): boolean {
    return this.controllers.get(id) === ctl;
  }

  /** Whether work is planned for the task (its timer is set). */
  planned(id: string): boolean {
    return this.timers.has(id);
  }

  /** Whether a request of the task is running now. */
  inFlight(id: string): boolean {
    return this.controllers.has(id);
  }

  /** Stops the task's planned work and aborts its current request. */
  halt(id: string): void {
    this.cancelTimer(id);
    const ctl = this.controllers.get(id);
    if (ctl) {
      this.controllers.delete(id);
      ctl.abort();
    }
  }

  /** Halts every task, then resolves once all work that had started has ended. */
  async haltAll(): Promise<void> {
    for (const id of [...this.timers.keys(), ...this.controllers.keys()]) this.halt(id);
    await Promise.allSettled([...this.running]);
  }

  cancelTimer(id: string): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }
}
