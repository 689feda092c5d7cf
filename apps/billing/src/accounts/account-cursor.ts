/**
 * The page cursor of the account list: (created_at, id) of a page's last account. created_at
 * travels as text with PostgreSQL's microseconds, so accounts created in the same millisecond
 * are neither skipped nor repeated at a page boundary.
 */
interface AccountCursor {
  createdAt: string;
  id: string;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function encodeAccountCursor(cursor: AccountCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id]), 'utf8').toString('base64url');
}

export function decodeAccountCursor(text: string): AccountCursor | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) return null;
  const [createdAt, id] = decoded as unknown[];
  if (typeof createdAt !== 'string' || !TIMESTAMP.test(createdAt) || Number.isNaN(Date.parse(createdAt))) return null;
  if (typeof id !== 'string' || !UUID.test(id)) return null;
  return { createdAt, id };
}
