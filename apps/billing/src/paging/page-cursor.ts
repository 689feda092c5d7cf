/**
 * The opaque page cursor of billing's listings: the sort time and id of a page's last row, as
 * base64url JSON. The time is PostgreSQL's text with its microseconds (a JS Date would drop them
 * and could skip or repeat rows of the same millisecond at a page boundary).
 */
export interface PageCursor {
  /** UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
  at: string;
  id: string;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function encodePageCursor(cursor: PageCursor): string {
  return Buffer.from(JSON.stringify([cursor.at, cursor.id]), 'utf8').toString('base64url');
}

/** The cursor, or null when the text is not one this service handed out (`isId` says which ids the listing has). */
export function decodePageCursor(text: string, isId: (id: string) => boolean): PageCursor | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) return null;
  const [at, id] = decoded as unknown[];
  if (typeof at !== 'string' || !TIMESTAMP.test(at) || Number.isNaN(Date.parse(at))) return null;
  if (typeof id !== 'string' || !isId(id)) return null;
  return { at, id };
}
