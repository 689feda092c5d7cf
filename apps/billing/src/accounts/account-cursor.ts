import { decodePageCursor, encodePageCursor } from '../paging/page-cursor';

/** The page cursor of the account list: (created_at, id) of a page's last account. */
interface AccountCursor {
  createdAt: string;
  id: string;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function encodeAccountCursor(cursor: AccountCursor): string {
  return encodePageCursor({ at: cursor.createdAt, id: cursor.id });
}

export function decodeAccountCursor(text: string): AccountCursor | null {
  const cursor = decodePageCursor(text, (id) => UUID.test(id));
  return cursor && { createdAt: cursor.at, id: cursor.id };
}
