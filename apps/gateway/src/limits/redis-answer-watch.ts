import type { Redis } from 'ioredis';

/**
 * Probes in a row a connection may leave unanswered before it is replaced by a new one: TCP
 * may take many minutes to give up on a peer that vanished, and until then nothing on that
 * connection is answered.
 */
const UNANSWERED_PROBES_BEFORE_RECONNECT = 4;

/** ioredis's error for a command left unanswered past `commandTimeout`. */
export const isTimeout = (error: unknown) => error instanceof Error && /timed out/i.test(error.message);

/**
 * Whether a Redis connection answers. A command that timed out marks it as not answering (no
 * more requests wait for a timeout each) until a probe is answered; a connection that leaves
 * several probes unanswered is replaced.
 */
export class RedisAnswerWatch {
  private answeringNow = true;
  private probeTimer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly redis: Redis,
    private readonly probeEveryMs: number,
  ) {}

  get answering(): boolean {
    return this.answeringNow;
  }

  get reachable(): boolean {
    return this.redis.status === 'ready' && this.answeringNow;
  }

  noticeFailure(error: unknown): void {
    if (!isTimeout(error) || !this.answeringNow || this.closed) return;
    this.answeringNow = false;
    let unanswered = 0;
    const probe = () => {
      this.probeTimer = setTimeout(() => {
        if (this.closed) return;
        if (this.redis.status !== 'ready') return probe();
        this.redis.ping().then(
          () => {
            this.answeringNow = true;
            this.probeTimer = undefined;
          },
          (failure: unknown) => {
            if (isTimeout(failure) && ++unanswered >= UNANSWERED_PROBES_BEFORE_RECONNECT) {
              unanswered = 0;
              this.redis.disconnect(true);
            }
            probe();
          },
        );
      }, this.probeEveryMs);
      this.probeTimer.unref();
    };
    probe();
  }

  /** Resolves once connected, or after `timeoutMs` in any case (admission copes with an unreachable Redis). */
  async whenReachable(timeoutMs: number): Promise<void> {
    if (this.reachable) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      const redis = this.redis;
      function done() {
        clearTimeout(timer);
        redis.off('ready', done);
        resolve();
      }
      redis.once('ready', done);
    });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.probeTimer);
  }
}
