import type { ServedRequest } from './request-context';

const JSON_UTF8 = /^application\/json\s*;\s*charset="?utf-8"?$/i;

/**
 * The paths a route's list matches: each exactly, or, for a path with Express 5's wildcards
 * (`/v1beta/models/*model\\:generateContent`, a `*name` taking one or more characters, slashes
 * included; `\\:` a literal colon), every path that pattern matches as Express would (case aside).
 */
export function pathMatcher(paths: readonly string[]): ReadonlySet<string> | ((path: string) => boolean) {
  const exact = new Set(paths.filter((path) => !path.includes('*')));
  const patterns = paths.filter((path) => path.includes('*')).map(wildcardPattern);
  if (patterns.length === 0) return exact;
  return (path) => exact.has(path) || patterns.some((pattern) => pattern.test(path));
}

function wildcardPattern(path: string): RegExp {
  if (/(^|[^\\]):[A-Za-z_]|[{}()]/.test(path)) throw new Error(`A direct route's path takes wildcards (*name) only, not parameters or optional parts: ${path}`);
  const source = path
    .split(/(\*[A-Za-z_$][\w$]*)/)
    .map((piece) => (piece.startsWith('*') ? '(.+)' : piece.replace(/\\:/g, ':').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

/**
 * The requests a direct route serves: `POST` to one of `paths` exactly (any query string;
 * a trailing slash or another case is Express's to judge), a UTF-8 JSON content type, no
 * content encoding, and a content-length within the limit. Every other request (chunked,
 * compressed, another JSON type, too large) goes to Express, which answers it as before.
 */
export function claimsJsonRequest(request: Pick<ServedRequest, 'method' | 'url' | 'headers'>, paths: ReadonlySet<string> | ((path: string) => boolean), bodyLimitBytes: number): boolean {
  if (request.method !== 'POST') return false;
  const url = request.url ?? '';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  if (typeof paths === 'function' ? !paths(path) : !paths.has(path)) return false;
  const { headers } = request;
  const type = headers['content-type'];
  if (type !== 'application/json' && !(type && JSON_UTF8.test(type))) return false;
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  if (headers['transfer-encoding'] !== undefined || headers['content-length'] === undefined) return false;
  const length = Number(headers['content-length']);
  return Number.isSafeInteger(length) && length <= bodyLimitBytes;
}
