import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIGNATURE_HEADER = 'X-Gateway-Signature';
export const EVENT_ID_HEADER = 'X-Gateway-Event-Id';
export const EVENT_TYPE_HEADER = 'X-Gateway-Event-Type';

/**
 * The signature header of `body` sent at `timestampSeconds`. The timestamp is signed with the
 * body so a captured request cannot be replayed later than the receiver's tolerance.
 */
export function signatureHeader(secret: string, body: string, timestampSeconds: number): string {
  return `t=${timestampSeconds},v1=${hmacHex(secret, timestampSeconds, body)}`;
}

/**
 * The receiver's check, as docs/api.md describes it: a `v1` of the header equals the HMAC of
 * `<t>.<body>` (compared in constant time) and `t` is within `toleranceSeconds` of `nowSeconds`.
 */
export function verifySignature(secret: string, body: string, header: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = header.split(',').map((part) => part.trim().split('=', 2) as [string, string | undefined]);
  const timestamps = parts.filter(([name]) => name === 't').map(([, value]) => value ?? '');
  if (timestamps.length !== 1 || !/^\d{1,12}$/.test(timestamps[0])) return false;
  const timestamp = Number(timestamps[0]);
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, timestamp, body), 'utf8');
  return parts.some(([name, value]) => {
    if (name !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

function hmacHex(secret: string, timestampSeconds: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.${body}`, 'utf8').digest('hex');
}
