import { divideRounded, parseDecimal, pow10 } from './decimal';
import { CREDIT_SCALE, microCreditsToUsd } from './credits';

/** The part of a catalogue price list that pricing reads: `price` USD per `per` units of `unit`. */
export interface PriceList {
  units: ReadonlyArray<{ unit: string; price: number | string; per: number }>;
}

export interface PricedUsage {
  creditsMicro: bigint;
  usd: string;
}

/** Intermediate precision below the micro-credit, so per-unit rounding never accumulates. */
const GUARD_SCALE = 18;

/**
 * Prices metered units with a catalogue price list. Every price is read with its `per`
 * (USD for `per` units); units the price list does not name are free (e.g. the output
 * tokens of an embedding model). Rounds once, to the micro-credit, half away from zero.
 */
export function priceUsage(pricing: PriceList | undefined, units: Record<string, number>, creditsPerUsd: number): PricedUsage {
  const ratio = parseDecimal(creditsPerUsd);
  let guarded = 0n;
  for (const entry of pricing?.units ?? []) {
    const count = units[entry.unit];
    if (!count) continue;
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`Unit count for ${entry.unit} must be a non-negative integer`);
    const price = parseDecimal(entry.price);
    const numerator = price.units * BigInt(count) * ratio.units * pow10(CREDIT_SCALE + GUARD_SCALE);
    const denominator = pow10(price.scale + ratio.scale) * BigInt(entry.per);
    guarded += divideRounded(numerator, denominator);
  }
  const creditsMicro = divideRounded(guarded, pow10(GUARD_SCALE));
  return { creditsMicro, usd: microCreditsToUsd(creditsMicro, creditsPerUsd) };
}
