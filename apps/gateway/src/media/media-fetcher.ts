import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/platform';
import { fetchMedia, parseAllowlist, type AllowlistEntry, type CancelSignal, type FetchedMedia } from '@igw/providers';

/**
 * fetchMedia with the deployment's limits (MEDIA_FETCH_MAX_BYTES, MEDIA_FETCH_TIMEOUT_MS) and
 * allowlist (MEDIA_FETCH_ALLOWLIST, parsed once): the only way the gateway's endpoints fetch an
 * address a client or an upstream chose.
 */
@Injectable()
export class MediaFetcher {
  private readonly allowlist: readonly AllowlistEntry[];

  constructor(@Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings) {
    this.allowlist = parseAllowlist(settings.env.MEDIA_FETCH_ALLOWLIST);
  }

  /** Rejects with MediaFetchRefusedError or MediaFetchFailedError; `signal` (the client leaving) stops the fetch. */
  fetch(url: string, signal: CancelSignal): Promise<FetchedMedia> {
    const { MEDIA_FETCH_MAX_BYTES, MEDIA_FETCH_TIMEOUT_MS } = this.settings.env;
    return fetchMedia(url, { maxBytes: MEDIA_FETCH_MAX_BYTES, timeoutMs: MEDIA_FETCH_TIMEOUT_MS, allowlist: this.allowlist, signal: abortSignalOf(signal) });
  }
}

/** fetchMedia takes a DOM AbortSignal; requests carry the lighter Cancellation. */
function abortSignalOf(signal: CancelSignal): AbortSignal {
  const controller = new AbortController();
  if (signal.aborted) controller.abort(signal.reason);
  else signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  return controller.signal;
}
