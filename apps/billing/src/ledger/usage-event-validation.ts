import { MAX_USAGE_NAME_LENGTH, usageEventShapeProblem, type UsageEvent } from '@igw/contracts';
import { parseDecimal, priceUsage } from '@igw/domain';

export { MAX_UNITS_PER_EVENT } from '@igw/contracts';

/** Clocks of gateways and billing may differ; an event from further in the future than this is refused. */
const FUTURE_ALLOWANCE_MS = 10 * 60_000;
/**
 * No gateway metered anything before this: an earlier time is garbage (the epoch, a unit
 * mix-up). Later ones are not bounded: a journal restored from a backup can be replayed
 * months after its requests.
 */
const EARLIEST_EVENT_MS = Date.UTC(2020, 0, 1);

/**
 * Why a usage event must not be applied, or undefined when it is sound on its own: every
 * field as its schema says (USAGE_EVENT_SCHEMA: types, units non-negative integers within
 * bounds), each unit priced once per prompt size, its charge exactly what its units cost at its
 * own prices (the gateway prices them with the same function), and a plausible time.
 * Whether its account and key exist is checked against the database by the caller.
 * The queue is a trust boundary: whoever can write to it can bill any account, so nothing
 * in an event is taken on faith that can be checked here.
 */
export function usageEventProblem(candidate: unknown, creditsPerUsd: number, now: number): string | undefined {
  const shapeProblem = usageEventShapeProblem(candidate);
  if (shapeProblem) return shapeProblem;
  const event = candidate as UsageEvent;

  // A unit has one price per prompt-size threshold (none for its base price), as the catalogue loader checks.
  const listed = new Set<string>();
  for (const [index, price] of event.prices.entries()) {
    const key = `${price.unit}\u0000${price.promptTokensAbove === undefined ? '' : String(price.promptTokensAbove)}`;
    if (listed.has(key)) return `prices[${index}] prices ${price.unit.slice(0, MAX_USAGE_NAME_LENGTH)} a second time`;
    listed.add(key);
  }

  const priced = priceUsage({ units: event.prices }, event.units, creditsPerUsd);
  if (BigInt(event.creditsMicro) !== priced.creditsMicro) {
    return `creditsMicro ${event.creditsMicro} does not match its units at its prices (${priced.creditsMicro})`;
  }
  if (!sameDecimal(event.usd, priced.usd)) return `usd ${event.usd.slice(0, 50)} does not match its credits (${priced.usd})`;

  const occurredAt = Date.parse(event.occurredAt);
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
