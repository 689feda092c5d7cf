/**
 * What a request's `Cache-Control` asks of the response cache, in HTTP's own words:
 * `no-store`, neither read nor write; `no-cache`, do not read (the answer is still stored);
 * `max-age=N`, accept an entry at most N seconds old. Directives HTTP does not define for a
 * request, and malformed ones, are ignored, as RFC 9111 says.
 */
export interface CacheDirectives {
  read: boolean;
  write: boolean;
  /** The oldest entry the client accepts, in seconds; undefined: any the operator allows. */
  maxAgeSeconds?: number;
}

const EVERYTHING: CacheDirectives = { read: true, write: true };
/** Headers longer than this are not a cache directive anyone means (Node bounds headers anyway). */
const LONGEST_READ = 1_024;

export function cacheDirectives(header: string | string[] | undefined): CacheDirectives {
  if (header === undefined) return EVERYTHING;
  const text = (Array.isArray(header) ? header.join(',') : header).slice(0, LONGEST_READ).toLowerCase();
  let read = true;
  let write = true;
  let maxAgeSeconds: number | undefined;
  for (const directive of text.split(',')) {
    const [name, value] = directive.trim().split('=', 2).map((part) => part.trim());
    if (name === 'no-store') {
      read = false;
      write = false;
    } else if (name === 'no-cache') {
      read = false;
    } else if (name === 'max-age' && value !== undefined) {
      const seconds = /^"?(\d{1,10})"?$/.exec(value);
      // Of several, the strictest holds.
      if (seconds) maxAgeSeconds = Math.min(maxAgeSeconds ?? Infinity, Number(seconds[1]));
    }
  }
  return maxAgeSeconds === undefined ? { read, write } : { read, write, maxAgeSeconds };
}
