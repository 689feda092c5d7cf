import { Cancellation, timedOutAfterPromptSent, UpstreamHttpError, type CancelSignal, type DeploymentLease } from '@igw/providers';
import type { UpstreamTarget } from './upstream-route';

/** How much of a failed call is billed by estimate (see `unreadUsage`). */
export type UnreadUsage = 'none' | 'prompt' | 'answer-unread';

/**
 * What becomes of a call whose prompt went upstream when its client leaves: a streamed answer
 * stops with its client (the client refused the rest); one the client would get whole runs on,
 * for at most `runsOnMs`, to be billed for what the upstream reports.
 */
export type WhenClientLeaves = { stopsWithClient: true } | { runsOnMs: number };

/**
 * The billing rule for an upstream call, one for every endpoint (chat, streamed or not,
 * embeddings, and those to come):
 *
 * - Before anything was sent upstream, the client leaving cancels the request: nothing is
 *   sent, nothing is billed.
 * - Once the prompt went to an upstream, a call that stops with its client (a stream) is
 *   aborted as soon as the client leaves, whether its answer was still being opened or half
 *   read; it is billed for the prompt plus what was generated up to then (the stream's reader
 *   counts that, chat-stream.ts).
 * - Any other call runs on in the background after its client left, for at most `runsOnMs`
 *   (UPSTREAM_TIMEOUT_MS) more, keeping the request's slot and credit hold, and the usage it
 *   reports is billed.
 * - When that usage cannot be read (the call was cut off, failed after sending with no answer,
 *   or the upstream reports none), a tokenizer count is billed: the whole prompt (its text,
 *   tool schemas, an allowance per image or audio part) plus what was generated (visible text,
 *   reasoning, tool call arguments).
 * - A call that timed out after its prompt was sent is billed the prompt, client there or not:
 *   the upstream may be working on it still. No other source is tried: the time is spent.
 * - An upstream that answered with an error status did not process the prompt: nothing is
 *   billed. An answer the gateway refused to read (an error marked `upstreamCharged`, e.g.
 *   too large) was processed and is billed whether or not the client is still there.
 *
 * Whatever an attempt is billed ends the request: no other source is tried after it.
 * One `UpstreamCallBilling` per request: its `signal` is what the upstream calls listen to.
 */
export class UpstreamCallBilling {
  private readonly upstream = new Cancellation();
  /** What the fallback listens to: no other source for a client that left, nor after an attempt that is billed. */
  private readonly noOtherSource = new Cancellation();
  private sentUpstream = false;
  private runOnTimer: NodeJS.Timeout | undefined;
  private failure: unknown;
  private closed = false;
  /** The gateway is shutting down and ended the call (`cutOff`). */
  private cut = false;

  constructor(
    private readonly client: CancelSignal,
    private readonly whenClientLeaves: WhenClientLeaves,
  ) {
    client.addEventListener('abort', this.onClientGone, { once: true });
    if (client.aborted) this.onClientGone();
  }

  /**
   * What the upstream calls listen to: aborted when the client leaves before anything was sent
   * or from a call that stops with it, else once the call ran on for `runsOnMs`; and at shutdown.
   */
  get signal(): CancelSignal {
    return this.upstream;
  }

  get clientGone(): boolean {
    return this.client.aborted;
  }

  /**
   * The gateway is stopping and its drain time is over: the call ends now, billed as if its
   * client had left (the reported usage if any, else the estimate), and no other source is tried.
   */
  cutOff(): void {
    if (this.closed) return;
    this.cut = true;
    this.upstream.abort();
  }

  /**
   * Runs one upstream attempt. A client already gone sends nothing (its abort is thrown); a
   * failure is remembered as it came from the upstream, before any mapping for the client.
   */
  async attempt<T>(send: (signal: CancelSignal) => Promise<T>): Promise<T> {
    if (this.client.aborted) throw this.client.reason;
    if (this.cut) throw this.upstream.reason;
    this.sentUpstream = true;
    try {
      return await send(this.upstream);
    } catch (error) {
      this.failure = error;
      if (this.unreadUsage() !== 'none') this.noOtherSource.abort();
      throw error;
    }
  }

  /**
   * The upstream call with fallback, each source tried as an `attempt`. When it fails after an
   * upstream processed the prompt (`unreadUsage`), `billUnread` bills the estimate before the
   * error goes on to the client.
   */
  callWithFallback<T>(
    route: (attempt: (target: UpstreamTarget, lease: DeploymentLease) => Promise<T>, signal: CancelSignal) => Promise<T>,
    send: (target: UpstreamTarget, lease: DeploymentLease, signal: CancelSignal) => Promise<T>,
    billUnread: (unread: Exclude<UnreadUsage, 'none'>) => void,
  ): Promise<T> {
    return this.billingUnread(route((target, lease) => this.attempt((signal) => send(target, lease, signal)), this.noOtherSource), billUnread);
  }

  /** One attempt, with no other source to fall back on (a call to another service), billed like `callWithFallback`. */
  callOnce<T>(send: (signal: CancelSignal) => Promise<T>, billUnread: (unread: Exclude<UnreadUsage, 'none'>) => void): Promise<T> {
    return this.billingUnread(this.attempt(send), billUnread);
  }

  private async billingUnread<T>(call: Promise<T>, billUnread: (unread: Exclude<UnreadUsage, 'none'>) => void): Promise<T> {
    try {
      return await call;
    } catch (error) {
      const unread = this.unreadUsage();
      if (unread !== 'none') billUnread(unread);
      throw error;
    }
  }

  /**
   * After a failed call: how much of the request is billed by estimate. `none` when nothing
   * reached an upstream or the upstream refused it; `answer-unread` when an upstream
   * processed it and answered in full but the gateway would not read the answer; `prompt`
   * when the call timed out after its prompt was sent, or the client had left and the call
   * ended without an answer to read.
   */
  unreadUsage(): UnreadUsage {
    if (!this.sentUpstream) return 'none';
    const failure = this.failure;
    if ((failure as { upstreamCharged?: unknown } | null)?.upstreamCharged === true) return 'answer-unread';
    if (timedOutAfterPromptSent(failure)) return 'prompt';
    if (!(this.clientGone || this.cut) || failure instanceof UpstreamHttpError) return 'none';
    return 'prompt';
  }

  /** The call is over (answered, failed or read to its end): stops listening and timing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.removeEventListener('abort', this.onClientGone);
    if (this.runOnTimer) clearTimeout(this.runOnTimer);
  }

  private readonly onClientGone = (): void => {
    if (this.closed) return;
    this.noOtherSource.abort();
    const rule = this.whenClientLeaves;
    if (!this.sentUpstream || 'stopsWithClient' in rule) {
      this.upstream.abort(this.client.reason);
      return;
    }
    this.runOnTimer ??= setTimeout(() => this.upstream.abort(), rule.runsOnMs);
  };
}
