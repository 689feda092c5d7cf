import { decodePageCursor, encodePageCursor } from '../paging/page-cursor';

/** The page cursor of the usage listing: the (occurred_at, id) of the last entry of a page. */
export interface UsageCursor {
  /** occurred_at in UTC, `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
  occurredAt: string;
  /** The ledger entry id (bigint, as text). */
  id: string;
}

const ENTRY_ID = /^[1-9]\d{0,18}$/;

export function encodeUsageCursor(cursor: UsageCursor): string {
  return encodePageCursor({ at: cursor.occurredAt, id: cursor.id });
}

/** The cursor, or null when the text is not one this service handed out. */
export function decodeUsageCursor(text: string): UsageCursor | null {
  const cursor = decodePageCursor(text, (id) => ENTRY_ID.test(id) && BigInt(id) <= 9_223_372_036_854_775_807n);
  return cursor && { occurredAt: cursor.at, id: cursor.id };
}
