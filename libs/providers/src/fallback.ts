import type { CancelSignal } from './transport/cancellation';
import { UpstreamHttpError, UpstreamLimitExceededError, UpstreamProtocolError, UpstreamTimeoutError, UpstreamUnavailableError } from './upstream.errors';

/**
 * Whether another source (or the same one, later) may succeed where this attempt failed. An
 * answer past the gateway's limits is not: that provider did (and charges) the work, and
 * another would likely answer the same way. A refusal of the operator's account at one
 * provider says nothing of another's.
 */
export function isRetriableUpstreamError(error: unknown): boolean {
  if (error instanceof UpstreamLimitExceededError) return false;
  if (error instanceof UpstreamHttpError) return error.refusedOperatorAccount || error.status === 429 || error.status >= 500;
  return error instanceof UpstreamUnavailableError || error instanceof UpstreamTimeoutError || error instanceof UpstreamProtocolError;
}

/**
 * Skips a source that keeps failing: after `threshold` failures in a row it is open (skipped)
 * for `cooldownMs`, then one attempt is let through again; a success closes it. Not cockatiel's
 * circuitBreaker: it learns only from calls it runs and refuses them while open, so the attempt
 * runWithFallback makes when every source is open could not be made or would not close it.
 */
export class CircuitBreaker {
  private readonly states = new Map<string, { failures: number; openUntil: number }>();

  constructor(
    private readonly threshold = 5,
    private readonly cooldownMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  canTry(key: string): boolean {
    const state = this.states.get(key);
    if (!state || state.failures < this.threshold) return true;
    if (this.now() < state.openUntil) return false;
    // Half-open: let one attempt through; a failure re-opens for another cooldown.
    state.openUntil = this.now() + this.cooldownMs;
    return true;
  }

  success(key: string): void {
    this.states.delete(key);
  }

  /** Each source that failed lately, and whether it is skipped now (read without letting a half-open attempt through). */
  *breakerStates(): Generator<{ key: string; open: boolean }> {
    const now = this.now();
    for (const [key, state] of this.states) yield { key, open: state.failures >= this.threshold && now < state.openUntil };
  }

  failure(key: string): void {
    const state = this.states.get(key) ?? { failures: 0, openUntil: 0 };
    state.failures++;
    if (state.failures >= this.threshold) state.openUntil = this.now() + this.cooldownMs;
    this.states.set(key, state);
  }
}

export interface FallbackOptions {
  breaker: CircuitBreaker;
  /** A `retry-after` up to this long is waited for and the same source tried once more. */
  retryAfterCapMs: number;
  /** Aborted when no other source (nor the same one again) may be tried. */
  signal?: CancelSignal;
  sleep?: (ms: number) => Promise<void>;
  /** Called when the call moves on from `source`, which failed with `error`, to the next one. */
  onFallback?: (source: { provider: string; model: string }, error: unknown) => void;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Tries the sources in order. Connection errors, timeouts, 429, 5xx and refusals of the
 * operator's account (401, 402, 403) move on to the next source; any other failure (the
 * request's own fault) ends the attempt at once. Sources the breaker has open are skipped,
 * unless every source is open. The single wait for a short `retry-after` stays a few lines
 * of this loop: with the breaker above ours, a cockatiel retry policy would add a library for them alone.
 */
export async function runWithFallback<T, S extends { provider: string; model: string }>(
  sources: readonly S[],
  attempt: (source: S) => Promise<T>,
  options: FallbackOptions,
): Promise<T> {
  if (sources.length === 0) throw new Error('runWithFallback needs at least one source');
  const keyOf = (source: S) => `${source.provider}:${source.model}`;
  const open = sources.filter((source) => options.breaker.canTry(keyOf(source)));
  const order = open.length > 0 ? open : sources;
  const sleep = options.sleep ?? defaultSleep;
  let lastError: unknown;
  for (let index = 0; index < order.length; index++) {
    const source = order[index];
    for (let retry = 0; retry < 2; retry++) {
      try {
        const result = await attempt(source);
        options.breaker.success(keyOf(source));
        return result;
      } catch (error) {
        if (!isRetriableUpstreamError(error)) throw error;
        options.breaker.failure(keyOf(source));
        // The caller ends the call here (its client left, or the attempt was billed): the source still failed.
        if (options.signal?.aborted) throw error;
        lastError = error;
        const waitMs = retryAfterMs(error);
        if (retry === 0 && waitMs !== undefined && waitMs <= options.retryAfterCapMs) {
          await sleep(waitMs);
          continue;
        }
        if (index < order.length - 1) options.onFallback?.(source, error);
        break;
      }
    }
  }
  throw lastError;
}

function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof UpstreamHttpError) || error.retryAfterSeconds === undefined) return undefined;
  if (error.status !== 429 && error.status !== 503) return undefined;
  return error.retryAfterSeconds * 1000;
}
