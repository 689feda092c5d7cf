import type { UsageEvent } from '@igw/contracts';
import { parseDecimal, priceUsage } from '@igw/domain';

/** More units than any request can meter (a million-token context is 10^6): a bug or a forgery. */
export const MAX_UNITS_PER_EVENT = 1_000_000_000;
/** Clocks of gateways and billing may differ; an event from further in the future than this is refused. */
const FUTURE_ALLOWANCE_MS = 10 * 60_000;
/**
 * No gateway metered anything before this: an earlier time is garbage (the epoch, a unit
 * mix-up). Later ones are not bounded: a journal restored from a backup can be replayed
 * months after its requests.
 */
const EARLIEST_EVENT_MS = Date.UTC(2020, 0, 1);
const MAX_NAME_LENGTH = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NON_NEGATIVE_INTEGER = /^(0|[1-9]\d*)$/;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isName = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= MAX_NAME_LENGTH;

/**
 * Why a usage event must not be applied, or undefined when it is sound on its own: every
 * field of the right type, units non-negative integers within bounds, and its charge exactly
 * what its units cost at its own prices (the gateway prices them with the same function).
 * Whether its account and key exist is checked against the database by the caller.
 * The queue is a trust boundary: whoever can write to it can bill any account, so nothing
 * in an event is taken on faith that can be checked here.
 */
export function usageEventProblem(candidate: unknown, creditsPerUsd: number, now: number): string | undefined {
  if (!isRecord(candidate)) return 'not an object';
  const event = candidate as Partial<Record<keyof UsageEvent, unknown>>;
  if (!isName(event.requestId)) return 'requestId is not a non-empty string';
  if (typeof event.accountId !== 'string' || !UUID.test(event.accountId)) return 'accountId is not a UUID';
  if (typeof event.keyId !== 'string' || !UUID.test(event.keyId)) return 'keyId is not a UUID';
  if (!isName(event.model)) return 'model is not a non-empty string';
  if (!isName(event.endpoint)) return 'endpoint is not a non-empty string';
  // Optional: events journalled before gateways recorded it have none, and stay valid.
  if (event.deployment !== undefined && (typeof event.deployment !== 'string' || event.deployment.length > MAX_NAME_LENGTH)) {
    return `deployment is not a string of at most ${MAX_NAME_LENGTH} characters`;
  }
  if (!Number.isSafeInteger(event.catalogueRevision) || (event.catalogueRevision as number) < 0) return 'catalogueRevision is not a non-negative integer';

  if (!isRecord(event.units)) return 'units is not an object';
  for (const [unit, count] of Object.entries(event.units)) {
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0 || count > MAX_UNITS_PER_EVENT) {
      return `units.${unit.slice(0, MAX_NAME_LENGTH)} is not an integer from 0 to ${MAX_UNITS_PER_EVENT}`;
    }
  }

  if (!Array.isArray(event.prices)) return 'prices is not an array';
  // A unit has one price per prompt-size threshold (none for its base price), as the catalogue loader checks.
  const listed = new Set<string>();
  for (const [index, price] of event.prices.entries()) {
    if (!isRecord(price) || !isName(price.unit)) return `prices[${index}].unit is not a non-empty string`;
    if (typeof price.price !== 'number' || !Number.isFinite(price.price) || price.price < 0) return `prices[${index}].price is not a non-negative number`;
    if (!Number.isSafeInteger(price.per) || (price.per as number) < 1) return `prices[${index}].per is not a positive integer`;
    const above = price.promptTokensAbove;
    if (above !== undefined && (!Number.isSafeInteger(above) || (above as number) < 1)) return `prices[${index}].promptTokensAbove is not a positive integer`;
    const key = `${price.unit}\u0000${above === undefined ? '' : String(above)}`;
    if (listed.has(key)) return `prices[${index}] prices ${price.unit.slice(0, MAX_NAME_LENGTH)} a second time`;
    listed.add(key);
  }

  if (typeof event.creditsMicro !== 'string' || !NON_NEGATIVE_INTEGER.test(event.creditsMicro)) return 'creditsMicro is not a non-negative integer';
  if (typeof event.usd !== 'string') return 'usd is not a decimal string';
  const priced = priceUsage({ units: event.prices as UsageEvent['prices'] }, event.units as Record<string, number>, creditsPerUsd);
  if (BigInt(event.creditsMicro) !== priced.creditsMicro) {
    return `creditsMicro ${event.creditsMicro} does not match its units at its prices (${priced.creditsMicro})`;
  }
  if (!sameDecimal(event.usd, priced.usd)) return `usd ${event.usd.slice(0, 50)} does not match its credits (${priced.usd})`;

  if (typeof event.occurredAt !== 'string') return 'occurredAt is not a time';
  const occurredAt = Date.parse(event.occurredAt);
  if (Number.isNaN(occurredAt)) return 'occurredAt is not a time';
  if (occurredAt > now + FUTURE_ALLOWANCE_MS) return `occurredAt ${event.occurredAt} is in the future`;
  if (occurredAt < EARLIEST_EVENT_MS) return `occurredAt ${event.occurredAt} is before 2020`;
  return undefined;
}

function sameDecimal(text: string, expected: string): boolean {
  try {
    const a = parseDecimal(text);
    const b = parseDecimal(expected);
    const scale = Math.max(a.scale, b.scale);
    return a.units * 10n ** BigInt(scale - a.scale) === b.units * 10n ** BigInt(scale - b.scale);
  } catch {
    return false;
  }
}
