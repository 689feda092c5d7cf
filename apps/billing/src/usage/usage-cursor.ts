/**
 * The opaque page cursor of the usage listing: the (occurred_at, id) of the last entry of a
 * page. occurred_at keeps PostgreSQL's microseconds (a JS Date would drop them and could skip
 * or repeat entries at a page boundary), so it travels as text.
 */
export interface UsageCursor {
  /** occurred_at in UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
  occurredAt: string;
  /** The ledger entry id (bigint, as text). */
  id: string;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const ENTRY_ID = /^[1-9]\d{0,18}$/;

export function encodeUsageCursor(cursor: UsageCursor): string {
  return Buffer.from(JSON.stringify([cursor.occurredAt, cursor.id]), 'utf8').toString('base64url');
}

/** The cursor, or null when the text is not one this service handed out. */
export function decodeUsageCursor(text: string): UsageCursor | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) return null;
  const [occurredAt, id] = decoded as unknown[];
  if (typeof occurredAt !== 'string' || !TIMESTAMP.test(occurredAt) || Number.isNaN(Date.parse(occurredAt))) return null;
  if (typeof id !== 'string' || !ENTRY_ID.test(id) || BigInt(id) > 9_223_372_036_854_775_807n) return null;
  return { occurredAt, id };
}
