import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { GatewayException } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { describeBytes, fetchMedia, MediaMemoryBudget, parseAllowlist, type AllowlistEntry, type CancelSignal, type FetchedMedia, type MediaLease } from '@igw/providers';

/** Fetched bytes counted in the process's media budget until `release` (idempotent) gives them back. */
export interface HeldMedia extends FetchedMedia {
  release(): void;
}

/**
 * fetchMedia with the deployment's limits (MEDIA_FETCH_MAX_BYTES, MEDIA_FETCH_TIMEOUT_MS),
 * allowlist (MEDIA_FETCH_ALLOWLIST, parsed once) and the process's media budget
 * (MEDIA_IN_FLIGHT_MAX_BYTES), of which one API key's fetches hold at most its share
 * (keyShareBytes): the only way the gateway's endpoints fetch an address a client or an
 * upstream chose.
 */
@Injectable()
export class MediaFetcher {
  private readonly allowlist: readonly AllowlistEntry[];
  private readonly budget: MediaMemoryBudget;

  constructor(@Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings) {
    this.allowlist = parseAllowlist(settings.env.MEDIA_FETCH_ALLOWLIST);
    this.budget = new MediaMemoryBudget(settings.env.MEDIA_IN_FLIGHT_MAX_BYTES, keyShareBytes(settings.env));
  }

  /**
   * Rejects with MediaFetchRefusedError, MediaFetchFailedError or MediaBudgetExhaustedError;
   * `signal` (the client leaving) stops the fetch. The caller releases what it got once its
   * request no longer holds the bytes. `keyId` is the API key whose request the bytes serve:
   * its share of the budget is what they count against.
   */
  /**
   * A share of the same budget for bytes a client uploads (a multipart file): what a key's
   * uploads and fetches hold together is bounded alike. Released once the request is over.
   */
  leaseUpload(keyId: string): MediaLease {
    return this.budget.lease(keyId);
  }

  async fetch(url: string, signal: CancelSignal, keyId: string): Promise<HeldMedia> {
    const { MEDIA_FETCH_MAX_BYTES, MEDIA_FETCH_TIMEOUT_MS } = this.settings.env;
    const lease = this.budget.lease(keyId);
    try {
      const media = await fetchMedia(url, { maxBytes: MEDIA_FETCH_MAX_BYTES, timeoutMs: MEDIA_FETCH_TIMEOUT_MS, allowlist: this.allowlist, signal: abortSignalOf(signal), lease });
      return { ...media, release: lease.release };
    } catch (error) {
      lease.release();
      throw error;
    }
  }
}

/**
 * The fetched media one key's requests may hold at once: MEDIA_IN_FLIGHT_KEY_SHARE of the
 * process's budget, but at least one file of the largest size, so a key alone on the gateway
 * can always fetch one.
 */
export function keyShareBytes(env: Pick<ServiceSettings['env'], 'MEDIA_IN_FLIGHT_MAX_BYTES' | 'MEDIA_IN_FLIGHT_KEY_SHARE' | 'MEDIA_FETCH_MAX_BYTES'>): number {
  return Math.max(env.MEDIA_FETCH_MAX_BYTES, Math.floor(env.MEDIA_IN_FLIGHT_MAX_BYTES * env.MEDIA_IN_FLIGHT_KEY_SHARE));
}

/** fetchMedia takes a DOM AbortSignal; requests carry the lighter Cancellation. */
function abortSignalOf(signal: CancelSignal): AbortSignal {
  const controller = new AbortController();
  if (signal.aborted) controller.abort(signal.reason);
  else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  return controller.signal;
}

/**
 * A full media budget is not the client's mistake: the key's own share full is the key asking
 * too much at once (429), the process's budget full is the gateway's state (503); both may be
 * retried shortly. `what` completes "Service Unavailable: the ...", e.g. `audio at url`.
 */
export function mediaBudgetException(scope: 'holder' | 'process', env: ServiceSettings['env'], what: string, detail: string, cause?: unknown): GatewayException {
  if (scope === 'holder') {
    return new GatewayException(
      HttpStatus.TOO_MANY_REQUESTS,
      `Too Many Requests: this API key's requests hold ${describeBytes(keyShareBytes(env))} of fetched media, as much as one key may at once (MEDIA_IN_FLIGHT_KEY_SHARE); retry when one of them is over.`,
      { cause, headers: { 'retry-after': '1' } },
    );
  }
  return new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Service Unavailable: the ${what} ${detail}; try again shortly.`, { cause, headers: { 'retry-after': '1' } });
}
