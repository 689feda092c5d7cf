/**
 * Tells whoever waits (a shutdown) that the last running thing of a set ended, with a deadline
 * on the wait. The owner keeps the set and calls `idle()` when it becomes empty.
 */
export class IdleSignal {
  private readonly waiters = new Set<() => void>();

  /** Resolves true at once when `isIdle`, else once `idle()` is called; false if `deadline` (epoch ms) comes first. */
  settled(isIdle: boolean, deadline: number): Promise<boolean> {
    if (isIdle) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), Math.max(0, deadline - Date.now()));
      const done = (idle: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(onIdle);
        resolve(idle);
      };
      const onIdle = () => done(true);
      this.waiters.add(onIdle);
    });
  }

  idle(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
