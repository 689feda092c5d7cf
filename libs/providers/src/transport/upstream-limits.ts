/**
 * How much of an upstream's answer the gateway reads. Past any of these the connection is
 * closed at once, so a misbehaving provider costs at most this much memory and time.
 */
export interface UpstreamLimits {
  /** A non-streamed answer's body (UPSTREAM_MAX_RESPONSE_BYTES). */
  maxResponseBytes: number;
  /** An error answer's body: read up to this and the rest dropped (UPSTREAM_MAX_ERROR_BYTES). */
  maxErrorBytes: number;
  /** One server-sent event, its unfinished line included, in decoded characters (UPSTREAM_MAX_EVENT_BYTES). */
  maxEventBytes: number;
  /** A whole stream, from the request to its last event (UPSTREAM_STREAM_MAX_MS, or the model's `routing.maxStreamSeconds`). */
  maxStreamMs: number;
}

export const DEFAULT_UPSTREAM_LIMITS: Readonly<UpstreamLimits> = Object.freeze({
  maxResponseBytes: 32 * 1024 * 1024,
  maxErrorBytes: 64 * 1024,
  maxEventBytes: 8 * 1024 * 1024,
  maxStreamMs: 30 * 60 * 1000,
});

/** A byte count as people read it: `1 MiB`, `64 KiB`, `1500 bytes`. */
export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** A duration as people read it: `2 s`, `30 min`, `1500 ms`. */
export function describeDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
