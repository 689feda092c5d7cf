/**
 * Points in time as the usage endpoints take them: ISO 8601 calendar dates with an optional
 * time (`2025-01-31`, `2025-01-31T12:00`, `2025-01-31T12:00:00.123456+02:00`). Without an
 * offset the time is UTC, whatever the server's time zone. Up to microseconds are kept, the
 * precision of PostgreSQL's timestamptz, so a window boundary is never rounded.
 */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/** The instant as text PostgreSQL reads exactly (`YYYY-MM-DDTHH:MM:SS[.ffffff]±HH:MM`), or null when it is not one. */
export function normalizeInstant(text: string): string | null {
  const match = INSTANT.exec(text.trim());
  if (!match) return null;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction, , offsetSign, offsetHour, offsetMinute = '00'] = match;
  if (match[4] === undefined && (match[8] !== undefined || offsetSign !== undefined)) return null; // an offset needs a time
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (date.getUTCFullYear() !== Number(year) || date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day)) return null;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
  if (offsetSign !== undefined && (Number(offsetHour) > 14 || Number(offsetMinute) > 59)) return null;
  const zone = offsetSign === undefined ? '+00:00' : `${offsetSign}${offsetHour}:${offsetMinute}`;
  const micros = fraction ? `.${fraction.slice(0, 6)}` : '';
  return `${year}-${month}-${day}T${hour}:${minute}:${second}${micros}${zone}`;
}

/** Milliseconds since the epoch of a normalized instant (for comparing two of them). */
export function instantMillis(normalized: string): number {
  return Date.parse(normalized.replace(/(\.\d{3})\d+/, '$1'));
}
